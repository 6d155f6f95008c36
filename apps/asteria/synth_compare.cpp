// `asteria synth --compare`: AdamW, then Shampoo and SOAP with synchronous refreshes (S = 0:
// the step waits, as Distributed Shampoo's inline refresh), asynchronous S = 1 and S = 5, side
// by side in one process on a stack whose full refresh costs about `ratio` training steps.
#include <cblas.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <ostream>

#include "apps/asteria/synth.hpp"
#include "apps/asteria/table.hpp"
#include "core/common/number_text.hpp"
#include "core/io/atomic_file.hpp"
#include "core/optim/tensor_optimizer.hpp"

namespace asteria::cli {

namespace {

// Seconds one refresh of every block takes on the settings' platform (host workers, real
// LAPACK; on the fake backend, modelled), after a few real steps so the statistics are real.
// Best of two rounds.
double measure_full_refresh(const RunConfig& s) {
  openblas_set_num_threads(1);  // as the runs: one BLAS thread per refresh worker
  RunPlatform platform(s, device_time(s), nullptr);
  runtime::SyntheticModel<float> model(model_spec(s));
  std::vector<std::unique_ptr<optim::TensorOptimizer<float>>> tensors;
  for (std::size_t l = 0; l < model.layer_count(); ++l)
    tensors.push_back(std::make_unique<optim::TensorOptimizer<float>>(
        s.optimizer, s.hp, std::vector<linalg::index>{model.layer(l).rows, model.layer(l).cols}, model.layer(l).name));
  const int warmup = std::max(2, s.warmup_steps.value_or(2));
  for (int t = 1; t <= warmup; ++t)
    for (std::size_t l = 0; l < tensors.size(); ++l) {
      model.compute_gradient(l, t);
      tensors[l]->step(model.weights(l), model.gradient(l));
    }
  platform::Platform& p = platform.get();
  double best = -1.0;
  for (int round = 0; round < 2; ++round) {
    std::vector<std::unique_ptr<optim::RefreshJob<float>>> jobs;
    for (auto& tensor : tensors)
      for (auto& block : tensor->blocks())
        if (auto job = block.optimizer->snapshot(p.math(platform::Tier::device), warmup + 1))
          jobs.push_back(std::move(job));
    const platform::Seconds start = p.clock().now();
    std::vector<platform::Pending> done;
    for (auto& job : jobs) {
      optim::RefreshJob<float>* raw = job.get();
      platform::Work work;
      work.label = "measure refresh";
      work.cost = platform::Costs(raw->cost());
      work.body = [raw] { return raw->run(); };
      done.push_back(p.host_workers().submit(std::move(work)));
    }
    for (platform::Pending& d : done) d.wait();
    const double elapsed = p.clock().now() - start;
    best = best < 0.0 ? elapsed : std::min(best, elapsed);
  }
  return best;
}

double modelled_step(const RunConfig& s) {
  const auto seconds = device_seconds(s);
  double total = 0.0;
  for (const runtime::LayerSpec& layer : model_spec(s).layers)
    total += platform::total_seconds(layer.forward, seconds) + platform::total_seconds(layer.backward, seconds);
  return total;
}

struct Config {
  std::string name;
  optim::OptimizerKind kind;
  int staleness;
};

double adamw_p50(const CompareResult& r) {
  for (const RunReport& run : r.runs)
    if (run.spec.optimizer == optim::OptimizerKind::adamw) return run.summary.p50_step_s;
  return 0.0;
}

// The comparison for people: times in seconds, 4 significant digits.
Table display_table(const CompareResult& r) {
  const double base = adamw_p50(r);
  Table t{{"config", "p50 step (s)", "p99 step (s)", "p99/p50", "mean visible opt (s)", "p50 / AdamW p50",
           "refresh wait (s)", "max staleness"},
          {false, true, true, true, true, true, true, true},
          {}};
  for (const RunReport& run : r.runs) {
    const runtime::RunSummary& m = run.summary;
    t.add_row({run.name, significant(m.p50_step_s, 4), significant(m.p99_step_s, 4), significant(m.p99_over_p50, 4),
               significant(m.mean_visible_optimizer_s, 4), base > 0.0 ? significant(m.p50_step_s / base, 4) : "-",
               significant(m.total_refresh_wait_s, 4), std::to_string(m.max_staleness)});
  }
  return t;
}

// The same for scripts: SI units, every digit.
Table data_table(const CompareResult& r) {
  const double base = adamw_p50(r);
  Table t{{"config", "optimizer", "staleness", "numerics", "p50_step_s", "p99_step_s", "p99_over_p50",
           "mean_visible_optimizer_s", "p50_over_adamw_p50", "total_refresh_wait_s", "max_staleness"},
          {},
          {}};
  for (const RunReport& run : r.runs) {
    const runtime::RunSummary& m = run.summary;
    t.add_row({run.name, std::string(optim::to_string(run.spec.optimizer)), std::to_string(run.spec.staleness),
               std::string(platform::to_string(run.spec.numerics)), exact_number(m.p50_step_s),
               exact_number(m.p99_step_s), exact_number(m.p99_over_p50), exact_number(m.mean_visible_optimizer_s),
               base > 0.0 ? exact_number(m.p50_step_s / base) : "", exact_number(m.total_refresh_wait_s),
               std::to_string(m.max_staleness)});
  }
  return t;
}

std::string describe(const CompareResult& r) {
  const RunConfig& s = r.base;
  std::string stack;
  if (s.model) {
    stack = "model " + *s.model;
  } else {
    for (const auto& [rows, cols] : synth_shapes(s)) {
      if (!stack.empty()) stack += ',';
      stack += std::to_string(rows) + 'x' + std::to_string(cols);
    }
    stack = std::to_string(synth_shapes(s).size()) + " layers " + stack;
  }
  std::string text = "numerics " + std::string(platform::to_string(s.numerics)) + ", time " +
                     std::string(platform::to_string(s.time)) + "; " + stack + ", f = " +
                     std::to_string(s.hp.precondition_frequency) + ", max_precond_dim " +
                     std::to_string(s.hp.max_precond_dim) + ", " + std::to_string(s.steps) +
                     " measured steps after the warm-up, publish " + std::string(runtime::to_string(s.publish)) +
                     "\n";
  text += "one full refresh: shampoo " + significant(r.shampoo_refresh_s, 4) + " s, soap " +
          significant(r.soap_refresh_s, 4) + " s; modelled forward+backward step " + significant(r.step_compute_s, 4) +
          " s (";
  text += r.step_given ? std::string("given") : "chosen as shampoo refresh / " + significant(r.refresh_ratio_target, 4);
  text += "); refresh / step = " + significant(r.shampoo_refresh_s / r.step_compute_s, 3) + " (shampoo), " +
          significant(r.soap_refresh_s / r.step_compute_s, 3) + " (soap)\n";
  if (!r.runs.empty()) text += r.runs.front().platform + "\n";
  return text;
}

std::string verdict(const CompareResult& r) {
  const double base = adamw_p50(r);
  std::string text;
  for (const RunReport& run : r.runs) {
    if (run.spec.optimizer == optim::OptimizerKind::adamw || base <= 0.0) continue;
    const double ratio = run.summary.p50_step_s / base;
    if (run.spec.staleness == 5)
      text += "target " + run.name + ": p50 / AdamW p50 = " + significant(ratio, 4) +
              (ratio <= 1.10 ? " (<= 1.10 met)" : " (> 1.10 missed)") + ", p99/p50 = " +
              significant(run.summary.p99_over_p50, 4) +
              (run.summary.p99_over_p50 <= 1.2 ? " (<= 1.2 met)" : " (> 1.2 missed)") + "\n";
    if (run.spec.staleness == 0)
      text += "synchronous " + run.name + ": p99/p50 = " + significant(run.summary.p99_over_p50, 4) + ", max step " +
              seconds_text(run.summary.max_step_s) + " vs p50 " + seconds_text(run.summary.p50_step_s) +
              " (refresh-step spikes)\n";
  }
  return text;
}

}  // namespace

CompareResult run_compare(const RunConfig& base, double refresh_ratio,
                          const std::function<optim::Hyperparameters(optim::OptimizerKind)>& hyperparameters,
                          std::ostream& out, std::ostream& progress) {
  CompareResult result;
  result.base = base;
  result.base.optimizer = optim::OptimizerKind::shampoo;
  result.base.hp = hyperparameters(optim::OptimizerKind::shampoo);
  result.refresh_ratio_target = refresh_ratio;
  result.step_given = base.synth.step_seconds.has_value() || base.synth.layer_flops.has_value() || base.model.has_value();

  for (optim::OptimizerKind kind : {optim::OptimizerKind::shampoo, optim::OptimizerKind::soap}) {
    RunConfig s = base;
    s.optimizer = kind;
    s.hp = hyperparameters(kind);
    validate_synth(s);
    (kind == optim::OptimizerKind::shampoo ? result.shampoo_refresh_s : result.soap_refresh_s) = measure_full_refresh(s);
  }
  if (!result.step_given) result.base.synth.step_seconds = result.shampoo_refresh_s / refresh_ratio;
  result.step_compute_s = modelled_step(result.base);
  out << describe(result) << std::flush;

  const std::vector<Config> configs = {
      {"adamw", optim::OptimizerKind::adamw, 0},
      {"shampoo sync S=0", optim::OptimizerKind::shampoo, 0},
      {"shampoo async S=1", optim::OptimizerKind::shampoo, 1},
      {"shampoo async S=5", optim::OptimizerKind::shampoo, 5},
      {"soap sync S=0", optim::OptimizerKind::soap, 0},
      {"soap async S=1", optim::OptimizerKind::soap, 1},
      {"soap async S=5", optim::OptimizerKind::soap, 5},
  };
  for (const Config& c : configs) {
    RunConfig s = result.base;
    s.optimizer = c.kind;
    s.hp = hyperparameters(c.kind);
    s.staleness = c.staleness;
    s.trace.enabled = false;  // one trace per run would overwrite the last
    result.runs.push_back(run_synth(s, c.name, progress));
  }
  return result;
}

void print_compare(const CompareResult& r, std::ostream& out) { out << table_text(display_table(r)) << verdict(r); }

void write_compare(const CompareResult& r, const std::filesystem::path& dir) {
  std::string steps;
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  for (const RunReport& run : r.runs) {
    if (steps.empty()) steps = steps_csv_header(run, true);
    steps += steps_csv_rows(run, true);
    runs.push_back(summary_json(run));
  }
  nlohmann::ordered_json j;
  j["verb"] = "synth";
  j["compare"] = true;
  j["shampoo_full_refresh_s"] = r.shampoo_refresh_s;
  j["soap_full_refresh_s"] = r.soap_refresh_s;
  j["step_compute_s"] = r.step_compute_s;
  j["step_given"] = r.step_given;
  j["target_refresh_ratio"] = r.refresh_ratio_target;
  j["runs"] = runs;
  io::write_file_atomically(dir / "table.csv", table_csv(data_table(r)));
  io::write_file_atomically(dir / "table.md", describe(r) + "\n" + table_markdown(display_table(r)) + "\n" + verdict(r));
  io::write_file_atomically(dir / "steps.csv", steps);
  io::write_file_atomically(dir / "summary.json", j.dump(2) + '\n');
}

}  // namespace asteria::cli

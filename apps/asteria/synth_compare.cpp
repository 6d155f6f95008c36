// `asteria synth --compare`: AdamW, then Shampoo and SOAP with synchronous refreshes (S = 0:
// the step waits, as Distributed Shampoo's inline refresh), asynchronous S = 1 and S = 5, side
// by side in one process on a stack whose full refresh costs about `ratio` training steps.
#include <cblas.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>

#include "apps/asteria/synth.hpp"
#include "core/io/atomic_file.hpp"
#include "core/optim/tensor_optimizer.hpp"

namespace asteria::cli {

namespace {

std::string format(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

// Seconds one refresh of every block takes on the settings' platform (host workers, real
// LAPACK; on the fake backend, modelled), after a few real steps so the statistics are real.
// Best of two rounds.
double measure_full_refresh(const SynthSettings& s) {
  openblas_set_num_threads(1);  // as the runs: one BLAS thread per refresh worker
  SynthPlatform platform(s);
  runtime::SyntheticModel<float> model(model_spec(s));
  std::vector<std::unique_ptr<optim::TensorOptimizer<float>>> tensors;
  for (std::size_t l = 0; l < model.layer_count(); ++l)
    tensors.push_back(std::make_unique<optim::TensorOptimizer<float>>(
        s.optimizer, s.hp, std::vector<linalg::index>{model.layer(l).rows, model.layer(l).cols}, model.layer(l).name));
  const int warmup = std::max(2, s.warmup_steps);
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
        if (auto job = block.optimizer->snapshot(warmup + 1)) jobs.push_back(std::move(job));
    const platform::Seconds start = p.clock().now();
    std::vector<platform::Pending> done;
    for (auto& job : jobs) {
      optim::RefreshJob<float>* raw = job.get();
      platform::Cost cost;
      for (const platform::Cost& piece : raw->cost()) {
        cost.flops += piece.flops;
        cost.bytes += piece.bytes;
      }
      done.push_back(p.host_workers().submit({"measure refresh", cost, [raw] { return raw->run(); }}));
    }
    for (platform::Pending& d : done) d.wait();
    const double elapsed = p.clock().now() - start;
    best = best < 0.0 ? elapsed : std::min(best, elapsed);
  }
  return best;
}

double modelled_step(const SynthSettings& s) {
  double total = 0.0;
  for (const runtime::LayerSpec& layer : model_spec(s).layers)
    total += s.device_model.duration(layer.forward) + s.device_model.duration(layer.backward);
  return total;
}

struct Config {
  std::string name;
  optim::OptimizerKind kind;
  int staleness;
};

std::vector<std::string> row(const SynthRun& run, double adamw_p50) {
  const runtime::RunSummary& m = run.summary;
  return {run.name,
          format("%.2f", m.p50_step_s * 1e3),
          format("%.2f", m.p99_step_s * 1e3),
          format("%.3f", m.p99_over_p50),
          format("%.2f", m.mean_visible_optimizer_s * 1e3),
          adamw_p50 > 0.0 ? format("%.3f", m.p50_step_s / adamw_p50) : "-",
          format("%.3f", m.total_refresh_wait_s),
          std::to_string(m.max_staleness)};
}

const std::vector<std::string> kColumns = {"config",          "p50 step (ms)",          "p99 step (ms)",
                                           "p99/p50",         "mean visible opt (ms)",  "p50 / AdamW p50",
                                           "refresh wait (s)", "max staleness"};

double adamw_p50(const CompareResult& r) {
  for (const SynthRun& run : r.runs)
    if (run.settings.optimizer == optim::OptimizerKind::adamw) return run.summary.p50_step_s;
  return 0.0;
}

std::string describe(const CompareResult& r) {
  const SynthSettings& s = r.base;
  std::string shapes;
  for (const auto& [rows, cols] : s.shapes) {
    if (!shapes.empty()) shapes += ',';
    shapes += std::to_string(rows);
    shapes += 'x';
    shapes += std::to_string(cols);
  }
  std::string text = "mode ";
  text += runtime::to_string(s.mode);
  text += std::string(" (") +
                     (s.mode == runtime::NumericsMode::emulated
                          ? "optimizer device work modelled, refreshes real LAPACK on host workers"
                          : "optimizer device numerics real inside device work, refreshes real LAPACK on host workers") +
                     "); " + std::to_string(s.shapes.size()) + " layers " + shapes + ", f = " +
                     std::to_string(s.hp.precondition_frequency) + ", max_precond_dim " +
                     std::to_string(s.hp.max_precond_dim) + ", " + std::to_string(s.steps) + " measured steps after " +
                     std::to_string(s.warmup_steps) + " warm-up" +
                     (s.warmup_to_first_publication ? " (or more: until the first refresh is published)" : "") +
                     ", publish " + std::string(runtime::to_string(s.publish)) +
                     "\n";
  text += "one full refresh: shampoo " + format("%.4f", r.shampoo_refresh_s) + " s, soap " +
          format("%.4f", r.soap_refresh_s) + " s; modelled forward+backward step " + format("%.4f", r.step_compute_s) +
          " s (";
  text += r.step_given ? std::string("given") : std::string("chosen as shampoo refresh / ") + format("%g", r.refresh_ratio_target);
  text += "); refresh / step = " + format("%.2f", r.shampoo_refresh_s / r.step_compute_s) + " (shampoo), " +
          format("%.2f", r.soap_refresh_s / r.step_compute_s) + " (soap)\n";
  if (!r.runs.empty()) text += r.runs.front().platform + "\n";
  return text;
}

std::string verdict(const CompareResult& r) {
  const double base = adamw_p50(r);
  std::string text;
  for (const SynthRun& run : r.runs) {
    if (run.settings.optimizer == optim::OptimizerKind::adamw || base <= 0.0) continue;
    const double ratio = run.summary.p50_step_s / base;
    if (run.settings.staleness == 5)
      text += "target " + run.name + ": p50 / AdamW p50 = " + format("%.3f", ratio) +
              (ratio <= 1.10 ? " (<= 1.10 met)" : " (> 1.10 missed)") + ", p99/p50 = " +
              format("%.3f", run.summary.p99_over_p50) +
              (run.summary.p99_over_p50 <= 1.2 ? " (<= 1.2 met)" : " (> 1.2 missed)") + "\n";
    if (run.settings.staleness == 0)
      text += "synchronous " + run.name + ": p99/p50 = " + format("%.3f", run.summary.p99_over_p50) +
              ", max step " + format("%.1f", run.summary.max_step_s * 1e3) + " ms vs p50 " +
              format("%.1f", run.summary.p50_step_s * 1e3) + " ms (refresh-step spikes)\n";
  }
  return text;
}

}  // namespace

CompareResult run_compare(const SynthSettings& base, double refresh_ratio,
                          const std::function<optim::Hyperparameters(optim::OptimizerKind)>& hyperparameters,
                          std::ostream& out, std::ostream& progress) {
  CompareResult result;
  result.base = base;
  result.base.hp = hyperparameters(optim::OptimizerKind::shampoo);
  result.refresh_ratio_target = refresh_ratio;
  result.step_given = base.step_seconds.has_value() || base.layer_flops.has_value();

  for (optim::OptimizerKind kind : {optim::OptimizerKind::shampoo, optim::OptimizerKind::soap}) {
    SynthSettings s = base;
    s.optimizer = kind;
    s.hp = hyperparameters(kind);
    validate(s);
    (kind == optim::OptimizerKind::shampoo ? result.shampoo_refresh_s : result.soap_refresh_s) = measure_full_refresh(s);
  }
  if (!result.step_given) result.base.step_seconds = result.shampoo_refresh_s / refresh_ratio;
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
    SynthSettings s = result.base;
    s.optimizer = c.kind;
    s.hp = hyperparameters(c.kind);
    s.staleness = c.staleness;
    result.runs.push_back(run_synth(s, c.name, progress));
  }
  return result;
}

void print_compare(const CompareResult& r, std::ostream& out) {
  const double base = adamw_p50(r);
  std::vector<std::vector<std::string>> rows = {kColumns};
  for (const SynthRun& run : r.runs) rows.push_back(row(run, base));
  std::vector<std::size_t> width(kColumns.size(), 0);
  for (const auto& cells : rows)
    for (std::size_t c = 0; c < cells.size(); ++c) width[c] = std::max(width[c], cells[c].size());
  for (const auto& cells : rows) {
    std::string line;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(width[c] - cells[c].size(), ' ');
      line += c == 0 ? cells[c] + pad : pad + cells[c];
      if (c + 1 < cells.size()) line += "  ";
    }
    out << line << '\n';
  }
  out << verdict(r);
}

void write_compare(const CompareResult& r, const std::filesystem::path& dir) {
  ensure_directory(dir);
  const double base = adamw_p50(r);
  std::string csv = "config,optimizer,staleness,mode,p50_step_s,p99_step_s,p99_over_p50,mean_visible_optimizer_s,"
                    "p50_over_adamw_p50,total_refresh_wait_s,max_staleness\n";
  std::string md = describe(r) + "\n|";
  for (const std::string& c : kColumns) md += ' ' + c + " |";
  md += "\n|";
  for (std::size_t i = 0; i < kColumns.size(); ++i) md += i == 0 ? " :--- |" : " ---: |";
  md += '\n';
  std::string steps = steps_csv_header(true);
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  for (const SynthRun& run : r.runs) {
    const runtime::RunSummary& m = run.summary;
    csv += run.name + ',' + std::string(optim::to_string(run.settings.optimizer)) + ',' +
           std::to_string(run.settings.staleness) + ',' + std::string(runtime::to_string(run.settings.mode)) + ',' +
           format("%.9f", m.p50_step_s) + ',' + format("%.9f", m.p99_step_s) + ',' + format("%.6f", m.p99_over_p50) +
           ',' + format("%.9f", m.mean_visible_optimizer_s) + ',' +
           (base > 0.0 ? format("%.6f", m.p50_step_s / base) : "") + ',' + format("%.9f", m.total_refresh_wait_s) +
           ',' + std::to_string(m.max_staleness) + '\n';
    md += '|';
    for (const std::string& cell : row(run, base)) md += ' ' + cell + " |";
    md += '\n';
    steps += steps_csv_rows(run, true);
    runs.push_back(nlohmann::ordered_json::parse(synth_summary_json(run)));
  }
  md += '\n' + verdict(r);
  nlohmann::ordered_json j;
  j["verb"] = "synth --compare";
  j["mode"] = runtime::to_string(r.base.mode);
  j["refresh_measurement"] = {{"shampoo_full_refresh_s", r.shampoo_refresh_s},
                              {"soap_full_refresh_s", r.soap_refresh_s},
                              {"step_compute_s", r.step_compute_s},
                              {"step_given", r.step_given},
                              {"target_ratio", r.refresh_ratio_target},
                              {"shampoo_ratio", r.shampoo_refresh_s / r.step_compute_s},
                              {"soap_ratio", r.soap_refresh_s / r.step_compute_s}};
  j["runs"] = runs;
  io::write_file_atomically(dir / "table.csv", csv);
  io::write_file_atomically(dir / "table.md", md);
  io::write_file_atomically(dir / "steps.csv", steps);
  io::write_file_atomically(dir / "summary.json", j.dump(2) + '\n');
}

}  // namespace asteria::cli

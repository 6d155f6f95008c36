// steps.csv, summary.json and the parameter checkpoint of `asteria train`, and its report.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "apps/asteria/synth.hpp"
#include "apps/asteria/train.hpp"
#include "core/io/atomic_file.hpp"
#include "core/io/npy.hpp"
#include "traces/chrome_trace.hpp"

namespace asteria::cli {
namespace {

std::size_t tier(platform::Tier t) { return static_cast<std::size_t>(t); }

std::string number(double value, const char* pattern = "%.6g") {
  char text[48];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

std::string steps_csv(const TrainOutcome& o) {
  std::ostringstream csv;
  csv << "step,loss,validation_loss,step_time_s,model_s,visible_optimizer_s,refresh_wait_s,state_move_wait_s,"
         "tokens_per_s,resident_device_bytes,resident_host_bytes,resident_nvme_bytes,moved_bytes,max_staleness,"
         "refresh_backlog\n";
  for (const TrainStep& s : o.steps) {
    const runtime::StepRecord& r = s.record;
    csv << r.step << ',' << number(s.loss, "%.9g") << ','
        << (s.validation_loss ? number(*s.validation_loss, "%.9g") : std::string()) << ',' << number(r.step_time_s)
        << ',' << number(s.model_s) << ',' << number(r.visible_optimizer_s) << ',' << number(r.refresh_wait_s) << ','
        << number(r.acquire_wait_s) << ',' << number(r.step_time_s > 0.0 ? s.tokens / r.step_time_s : 0.0) << ','
        << r.resident_bytes[tier(platform::Tier::device)] << ',' << r.resident_bytes[tier(platform::Tier::host)]
        << ',' << r.resident_bytes[tier(platform::Tier::nvme)] << ',' << r.bytes_moved.total() << ','
        << r.max_staleness << ',' << r.queue_depth << '\n';
  }
  return csv.str();
}

double mean_model_seconds(const TrainOutcome& o) {
  double total = 0.0;
  for (const TrainStep& s : o.steps) total += s.model_s;
  return o.steps.empty() ? 0.0 : total / static_cast<double>(o.steps.size());
}

std::string summary_json(const TrainOutcome& o) {
  const TrainSettings& s = o.settings;
  const runtime::RunSummary& m = o.summary;
  nlohmann::ordered_json j;
  j["verb"] = "train";
  j["model"] = o.model_name;
  j["corpus"] = o.corpus;
  j["train_bytes"] = o.train_bytes;
  j["validation_bytes"] = o.validation_bytes;
  j["optimizer"] = optim::to_string(s.optimizer);
  j["learning_rate"] = s.hp.lr;
  j["placement"] = runtime::to_string(s.placement);
  j["staleness"] = s.staleness;
  j["precondition_frequency"] = s.hp.precondition_frequency;
  j["max_precond_dim"] = s.hp.max_precond_dim;
  if (s.optimizer == optim::OptimizerKind::soap) {
    j["soap_second_moment"] = s.hp.soap_second_moment == optim::SecondMomentOnRefresh::rotate ? "rotate" : "permute";
    j["soap_adam_before_first_basis"] = s.hp.soap_adam_before_first_basis;
  }
  j["device"] = o.device;
  j["seed"] = s.seed;
  j["steps"] = s.steps;
  j["parameters"] = o.parameters;
  j["blocks"] = o.blocks;
  j["state_bytes"] = o.state_bytes;
  j["first_loss"] = o.steps.empty() ? 0.0 : o.steps.front().loss;
  j["final_loss"] = o.steps.empty() ? 0.0 : o.steps.back().loss;
  j["final_validation_loss"] = o.final_validation_loss;
  j["p50_step_s"] = m.p50_step_s;
  j["p99_step_s"] = m.p99_step_s;
  j["p99_over_p50"] = m.p99_over_p50;
  j["mean_step_s"] = m.mean_step_s;
  j["mean_model_s"] = mean_model_seconds(o);
  j["mean_visible_optimizer_s"] = m.mean_visible_optimizer_s;
  j["refresh_wait_s"] = m.total_refresh_wait_s;
  j["state_move_wait_s"] = m.total_acquire_wait_s;
  j["max_staleness"] = m.max_staleness;
  j["refresh_failures"] = o.refresh_failures;
  j["step_flops"] = o.step_flops;
  const double tokens = o.steps.empty() ? 0.0 : o.steps.front().tokens;
  j["tokens_per_s"] = m.mean_step_s > 0.0 ? tokens / m.mean_step_s : 0.0;
  j["model_flops_per_s"] = mean_model_seconds(o) > 0.0 ? o.step_flops / mean_model_seconds(o) : 0.0;
  j["wall_seconds"] = o.wall_seconds;
  if (o.timeline) j["trace_dropped_records"] = o.trace_dropped_records;
  return j.dump(2) + '\n';
}

}  // namespace

void print_train(const TrainOutcome& o, std::ostream& out) {
  const TrainSettings& s = o.settings;
  const runtime::RunSummary& m = o.summary;
  out << "train: " << o.model_name << " (" << o.parameters << " parameters, " << o.blocks << " optimizer blocks) on "
      << o.corpus << ", " << optim::to_string(s.optimizer) << " lr " << number(s.hp.lr) << ", placement "
      << runtime::to_string(s.placement) << ", S = " << s.staleness << ", " << o.device << '\n';
  if (!o.steps.empty())
    out << "loss " << number(o.steps.front().loss, "%.4f") << " -> " << number(o.steps.back().loss, "%.4f")
        << " over " << o.steps.size() << " steps; validation loss " << number(o.final_validation_loss, "%.4f") << '\n';
  const double model_s = mean_model_seconds(o);
  out << "step p50 " << number(m.p50_step_s * 1e3, "%.1f") << " ms, p99/p50 " << number(m.p99_over_p50, "%.2f")
      << "; forward+backward " << number(model_s * 1e3, "%.1f") << " ms ("
      << number(model_s > 0.0 ? o.step_flops / model_s / 1e9 : 0.0, "%.1f") << " GFLOP/s), visible optimizer "
      << number(m.mean_visible_optimizer_s * 1e3, "%.1f") << " ms per step; " << number(o.wall_seconds, "%.1f")
      << " s in all\n";
}

void write_train(const TrainOutcome& o, const std::filesystem::path& dir) {
  const TrainSettings& s = o.settings;
  ensure_directory(dir);
  io::write_file_atomically(dir / "steps.csv", steps_csv(o));
  io::write_file_atomically(dir / "summary.json", summary_json(o));
  if (o.timeline) {
    traces::ChromeTraceOptions options;
    options.source = (dir / "trace.json").string();
    options.other_data = {{"verb", "train"},
                          {"model", o.model_name},
                          {"device", o.device},
                          {"optimizer", std::string(optim::to_string(s.optimizer))},
                          {"placement", std::string(runtime::to_string(s.placement))},
                          {"staleness", s.staleness},
                          {"dropped_records", o.trace_dropped_records}};
    traces::write_chrome_trace(*o.timeline, dir / "trace.json", options);
  }
  const std::filesystem::path checkpoint = dir / "checkpoint";
  ensure_directory(checkpoint);
  nlohmann::ordered_json manifest;
  manifest["model"] = o.model_name;
  manifest["dtype"] = "float32";
  nlohmann::ordered_json tensors = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < o.tensors.size(); ++i) {
    const std::string file = o.tensor_names[i] + ".npy";
    const std::vector<linalg::index> shape(o.tensor_shapes[i].begin(), o.tensor_shapes[i].end());
    io::write_npy<float>(checkpoint / file, shape, o.tensors[i]);
    tensors.push_back({{"name", o.tensor_names[i]}, {"file", file}, {"shape", o.tensor_shapes[i]}});
  }
  manifest["tensors"] = tensors;
  io::write_file_atomically(checkpoint / "manifest.json", manifest.dump(2) + '\n');
}

}  // namespace asteria::cli

// steps.csv and summary.json of `asteria synth`.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "apps/asteria/synth.hpp"
#include "core/common/error.hpp"

namespace asteria::cli {

namespace {

using platform::Tier;

constexpr Tier kTiers[] = {Tier::device, Tier::host, Tier::nvme};

// Tier pairs in a fixed column order.
constexpr std::pair<Tier, Tier> kPairs[] = {{Tier::device, Tier::host}, {Tier::host, Tier::device},
                                            {Tier::host, Tier::nvme},   {Tier::nvme, Tier::host},
                                            {Tier::device, Tier::nvme}, {Tier::nvme, Tier::device}};

std::string seconds(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9f", s);
  return text;
}

std::size_t tier_index(Tier t) { return static_cast<std::size_t>(t); }

std::string pair_name(Tier from, Tier to, const char* separator) {
  return std::string(platform::to_string(from)) + separator + std::string(platform::to_string(to));
}

nlohmann::ordered_json hyperparameters_json(const optim::Hyperparameters& hp) {
  return {{"lr", hp.lr},
          {"beta1", hp.beta1},
          {"beta2", hp.beta2},
          {"eps", hp.eps},
          {"weight_decay", hp.weight_decay},
          {"precondition_frequency", hp.precondition_frequency},
          {"max_precond_dim", hp.max_precond_dim},
          {"shampoo_beta", hp.effective_shampoo_beta()},
          {"start_preconditioning_step", hp.effective_start_preconditioning_step()}};
}

}  // namespace

std::string steps_csv_header(bool with_config) {
  std::string h = with_config ? "config," : "";
  h += "step,warmup,step_time_s,compute_s,visible_optimizer_s,refresh_wait_s,acquire_wait_s,optimizer_device_s,"
       "queue_depth,max_staleness,refreshes_submitted,refreshes_published,shadow_bytes";
  for (Tier t : kTiers) h += ",resident_" + std::string(platform::to_string(t)) + "_bytes";
  for (auto [from, to] : kPairs) h += ",moved_" + pair_name(from, to, "_") + "_bytes";
  return h + '\n';
}

std::string steps_csv_rows(const SynthRun& run, bool with_config) {
  return steps_csv_rows(run.name, run.records, with_config);
}

std::string steps_csv_rows(const std::string& name, std::span<const runtime::StepRecord> records, bool with_config) {
  std::string csv;
  for (const runtime::StepRecord& r : records) {
    if (with_config) csv += name + ',';
    csv += std::to_string(r.step) + ',' + (r.warmup ? "1" : "0") + ',' + seconds(r.step_time_s) + ',' +
           seconds(r.compute_s) + ',' + seconds(r.visible_optimizer_s) + ',' + seconds(r.refresh_wait_s) + ',' +
           seconds(r.acquire_wait_s) + ',' + seconds(r.optimizer_device_s) + ',' + std::to_string(r.queue_depth) +
           ',' + std::to_string(r.max_staleness) + ',' + std::to_string(r.refreshes_submitted) + ',' +
           std::to_string(r.refreshes_published) + ',' + std::to_string(r.shadow_bytes);
    for (Tier t : kTiers) csv += ',' + std::to_string(r.resident_bytes[tier_index(t)]);
    for (auto [from, to] : kPairs) csv += ',' + std::to_string(r.bytes_moved.at(from, to));
    csv += '\n';
  }
  return csv;
}

std::string synth_summary_json(const SynthRun& run) {
  const SynthSettings& s = run.settings;
  const runtime::RunSummary& m = run.summary;
  nlohmann::ordered_json j;
  j["verb"] = "synth";
  j["config"] = run.name;
  j["mode"] = runtime::to_string(s.mode);
  j["platform"] = run.platform;
  j["optimizer"] = optim::to_string(s.optimizer);
  j["hyperparameters"] = hyperparameters_json(s.hp);
  j["placement"] = runtime::to_string(s.placement);
  j["lookahead"] = s.lookahead;
  j["staleness"] = s.staleness;
  j["publish"] = runtime::to_string(s.publish);
  j["host_threads"] = s.host_threads;
  nlohmann::ordered_json layers = nlohmann::ordered_json::array();
  for (const auto& [rows, cols] : s.shapes) layers.push_back({{"rows", rows}, {"cols", cols}});
  j["layers"] = layers;
  j["blocks"] = run.blocks;
  j["state_bytes"] = run.state_bytes;
  j["gradients"] = {{"seed", s.gradients.seed}, {"rank", s.gradients.rank}, {"noise", s.gradients.noise}};
  j["steps"] = m.steps;
  j["warmup_steps"] = m.warmup_steps;
  j["step_time_s"] = {{"p50", m.p50_step_s}, {"p99", m.p99_step_s}, {"p99_over_p50", m.p99_over_p50},
                      {"mean", m.mean_step_s}, {"max", m.max_step_s}, {"total", m.total_step_s}};
  j["compute_s"] = {{"mean", m.mean_compute_s}};
  j["visible_optimizer_s"] = {{"mean", m.mean_visible_optimizer_s},
                              {"p50", m.p50_visible_optimizer_s},
                              {"p99", m.p99_visible_optimizer_s},
                              {"total", m.total_visible_optimizer_s}};
  j["totals"] = {{"refresh_wait_s", m.total_refresh_wait_s},
                 {"acquire_wait_s", m.total_acquire_wait_s},
                 {"optimizer_device_s", m.total_optimizer_device_s},
                 {"refreshes_submitted", m.refreshes_submitted},
                 {"refreshes_published", m.refreshes_published},
                 {"refresh_failures", run.refresh_failures},
                 {"max_queue_depth", m.max_queue_depth},
                 {"max_staleness", m.max_staleness}};
  nlohmann::ordered_json peak;
  for (Tier t : kTiers) peak[std::string(platform::to_string(t))] = m.peak_resident_bytes[tier_index(t)];
  j["peak_resident_bytes"] = peak;
  nlohmann::ordered_json moved;
  for (auto [from, to] : kPairs) moved[pair_name(from, to, "->")] = m.bytes_moved.at(from, to);
  j["bytes_moved"] = moved;
  j["definitions"] = {
      {"step_time_s", "platform clock from the step's first hook until its device stream has drained"},
      {"compute_s", "modelled forward + backward device time (the step without an optimizer)"},
      {"visible_optimizer_s",
       "step_time_s - compute_s: optimizer device work, waits for late refreshes and state moves, host bookkeeping"},
      {"percentiles", "over measured steps (warm-up left out), linear interpolation between order statistics"}};
  return j.dump(2) + '\n';
}

void ensure_directory(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!std::filesystem::is_directory(dir))
    throw InputError(dir.string(), "--out",
                     "expected a directory that exists or can be created" + (ec ? ": " + ec.message() : std::string()));
}

}  // namespace asteria::cli

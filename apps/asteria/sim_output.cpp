// steps.csv, summary.json and trace.json of `asteria sim`, and its report on stdout.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>

#include "apps/asteria/sim_verb.hpp"
#include "apps/asteria/synth.hpp"
#include "core/io/atomic_file.hpp"
#include "traces/chrome_trace.hpp"

namespace asteria::cli {
namespace {

using platform::Tier;

std::size_t tier_index(Tier t) { return static_cast<std::size_t>(t); }

std::string gib(std::size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GiB", static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0));
  return text;
}

std::string ms(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f ms", seconds * 1e3);
  return text;
}

}  // namespace

std::string sim_summary_json(const SimOutcome& o) {
  const SimSettings& s = o.settings;
  const runtime::RunSummary& m = o.summary;
  nlohmann::ordered_json j;
  j["verb"] = "sim";
  j["hw"] = o.hw_name;
  j["model"] = o.model_name;
  j["optimizer"] = optim::to_string(s.optimizer);
  j["placement"] = runtime::to_string(s.placement);
  j["staleness"] = s.staleness;
  j["precondition_frequency"] = s.hp.precondition_frequency;
  j["max_precond_dim"] = s.hp.max_precond_dim;
  j["mode"] = to_string(s.mode);
  j["units"] = o.units;
  j["nodes"] = o.nodes;
  j["steps"] = s.steps;
  j["warmup_steps"] = m.warmup_steps;
  j["parameters"] = o.parameters;
  j["blocks"] = o.blocks;
  j["state_bytes"] = o.state_bytes;
  j["model_device_bytes"] = o.model_device_bytes;
  j["fits"] = o.fits;
  nlohmann::ordered_json shortfall = nlohmann::ordered_json::array();
  for (const runtime::TierShortfall& t : o.shortfall)
    shortfall.push_back({{"tier", platform::to_string(t.tier)},
                         {"needed_bytes", t.needed},
                         {"free_bytes", t.available},
                         {"capacity_bytes", t.capacity},
                         {"missing_bytes", t.missing()}});
  j["shortfall"] = shortfall;
  if (!o.fit_message.empty()) j["fit_message"] = o.fit_message;
  const auto per_step = [&](double total) { return m.steps > 0 ? total / static_cast<double>(m.steps) : 0.0; };
  if (o.fits) {
    j["p50_step_s"] = m.p50_step_s;
    j["p99_step_s"] = m.p99_step_s;
    j["p99_over_p50"] = m.p99_over_p50;
    j["mean_step_s"] = m.mean_step_s;
    j["max_step_s"] = m.max_step_s;
    j["compute_s"] = m.mean_compute_s;
    j["visible_optimizer_s"] = m.mean_visible_optimizer_s;
    j["refresh_wait_s"] = per_step(m.total_refresh_wait_s);
    j["state_move_wait_s"] = per_step(m.total_acquire_wait_s);
    j["optimizer_device_s"] = per_step(m.total_optimizer_device_s);
    j["max_staleness"] = m.max_staleness;
    j["refreshes_submitted"] = m.refreshes_submitted;
    j["refreshes_published"] = m.refreshes_published;
  } else {
    for (const char* key : {"p50_step_s", "p99_step_s", "p99_over_p50", "mean_step_s", "max_step_s", "compute_s",
                            "visible_optimizer_s", "refresh_wait_s", "state_move_wait_s", "optimizer_device_s",
                            "max_staleness"})
      j[key] = nullptr;
  }
  j["peak_device_bytes"] = m.peak_resident_bytes[tier_index(Tier::device)];
  j["peak_host_bytes"] = m.peak_resident_bytes[tier_index(Tier::host)];
  j["peak_nvme_bytes"] = m.peak_resident_bytes[tier_index(Tier::nvme)];
  j["device_capacity_bytes"] = o.capacity_bytes[tier_index(Tier::device)];
  j["host_capacity_bytes"] = o.capacity_bytes[tier_index(Tier::host)];
  j["nvme_capacity_bytes"] = o.capacity_bytes[tier_index(Tier::nvme)];
  j["simulated_seconds"] = o.simulated_seconds;
  j["wall_seconds"] = o.wall_seconds;
  j["activities"] = o.activities.total();
  j["definitions"] = {
      {"step_time_s", "simulated time from the step's first hook until its device stream has drained"},
      {"compute_s", "modelled forward + backward device time (the step without an optimizer), mean per step"},
      {"visible_optimizer_s", "step_time_s - compute_s, mean per measured step"},
      {"capacity_bytes", "per tier, what the optimizer state may use on one unit (device: after the model's own "
                         "weights, gradients and activations)"},
      {"percentiles", "over measured steps (warm-up left out), linear interpolation between order statistics"}};
  return j.dump(2) + '\n';
}

void write_sim(const SimOutcome& o, const std::filesystem::path& dir) {
  ensure_directory(dir);
  if (o.fits) io::write_file_atomically(dir / "steps.csv", steps_csv_header(false) + steps_csv_rows("", o.records, false));
  io::write_file_atomically(dir / "summary.json", sim_summary_json(o));
  if (o.settings.trace && o.fits) {
    traces::ChromeTraceOptions options;
    options.source = (dir / "trace.json").string();
    options.other_data = {{"hw", o.hw_name}, {"model", o.model_name},
                          {"optimizer", std::string(optim::to_string(o.settings.optimizer))},
                          {"placement", std::string(runtime::to_string(o.settings.placement))},
                          {"staleness", o.settings.staleness}};
    traces::write_chrome_trace(o.timeline, dir / "trace.json", options);
  }
}

void print_sim(const SimOutcome& o, std::ostream& out) {
  const SimSettings& s = o.settings;
  out << "sim: " << o.model_name << " (" << o.parameters << " parameters) on " << o.units << " x " << o.hw_name
      << " (" << o.nodes << (o.nodes == 1 ? " node" : " nodes") << "), " << optim::to_string(s.optimizer)
      << ", placement " << runtime::to_string(s.placement) << ", S = " << s.staleness << ", f = "
      << s.hp.precondition_frequency << ", max_precond_dim " << s.hp.max_precond_dim << ", " << to_string(s.mode)
      << '\n';
  out << "optimizer state " << gib(o.state_bytes) << " in " << o.blocks << " blocks per unit; model on device "
      << gib(o.model_device_bytes) << "; budgets for the state: device " << gib(o.capacity_bytes[0]) << ", host "
      << gib(o.capacity_bytes[1]) << ", nvme " << gib(o.capacity_bytes[2]) << '\n';
  if (!o.fits) {
    out << "does not fit: " << o.fit_message << '\n';
    for (const runtime::TierShortfall& t : o.shortfall)
      out << "  " << platform::to_string(t.tier) << ": needs " << gib(t.needed) << ", " << gib(t.available)
          << " free of " << gib(t.capacity) << " (short by " << gib(t.missing()) << ")\n";
    return;
  }
  const runtime::RunSummary& m = o.summary;
  char line[256];
  std::snprintf(line, sizeof line, "step time p50 %s, p99 %s, p99/p50 %.3f, mean %s (compute %s) over %zu steps (+%zu warm-up)\n",
                ms(m.p50_step_s).c_str(), ms(m.p99_step_s).c_str(), m.p99_over_p50, ms(m.mean_step_s).c_str(),
                ms(m.mean_compute_s).c_str(), m.steps, m.warmup_steps);
  out << line;
  out << "visible optimizer time mean " << ms(m.mean_visible_optimizer_s) << " (refresh waits "
      << ms(m.steps ? m.total_refresh_wait_s / static_cast<double>(m.steps) : 0.0) << ", state-move waits "
      << ms(m.steps ? m.total_acquire_wait_s / static_cast<double>(m.steps) : 0.0) << " per step); max staleness "
      << m.max_staleness << "; peak device " << gib(m.peak_resident_bytes[0]) << ", host "
      << gib(m.peak_resident_bytes[1]) << ", nvme " << gib(m.peak_resident_bytes[2]) << '\n';
  std::snprintf(line, sizeof line, "simulated %.3f s in %.2f s of wall time (%.4f s per step), %llu activities\n",
                o.simulated_seconds, o.wall_seconds,
                o.wall_seconds / static_cast<double>(std::max<std::size_t>(1, m.steps + m.warmup_steps)),
                static_cast<unsigned long long>(o.activities.total()));
  out << line;
}

}  // namespace asteria::cli

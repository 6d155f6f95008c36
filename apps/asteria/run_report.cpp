#include "apps/asteria/run_report.hpp"

#include <algorithm>

#include <ostream>

#include "core/common/number_text.hpp"
#include "core/run/run_arguments.hpp"
#include "core/io/atomic_file.hpp"
#include "core/linalg/blas_library.hpp"
#include "core/ops/cpu_kernels.hpp"
#include "core/real/blas_kernel_choice.hpp"

namespace asteria::cli {
namespace {

using platform::Tier;

constexpr Tier kTiers[] = {Tier::device, Tier::host, Tier::nvme};
// Tier pairs in a fixed column order.
constexpr std::pair<Tier, Tier> kPairs[] = {{Tier::device, Tier::host}, {Tier::host, Tier::device},
                                            {Tier::host, Tier::nvme},   {Tier::nvme, Tier::host},
                                            {Tier::device, Tier::nvme}, {Tier::nvme, Tier::device}};

std::size_t index_of(Tier t) { return static_cast<std::size_t>(t); }
std::string tier_name(Tier t) { return std::string(platform::to_string(t)); }
std::string moved_key(Tier from, Tier to) { return "moved_" + tier_name(from) + "_" + tier_name(to) + "_bytes"; }

double per_step(const runtime::RunSummary& m, double total) {
  return m.steps > 0 ? total / static_cast<double>(m.steps) : 0.0;
}

}  // namespace

std::string seconds_text(double seconds) { return significant(seconds, 4) + " s"; }
std::string bytes_text(double bytes) {
  constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  std::size_t unit = 0;
  while (unit + 1 < std::size(kUnits) && bytes >= 1024.0) {
    bytes /= 1024.0;
    ++unit;
  }
  return significant(bytes, 4) + ' ' + kUnits[unit];
}

const std::vector<std::string>& step_columns() {
  static const std::vector<std::string> columns = [] {
    std::vector<std::string> c = {"step",           "warmup",           "step_time_s",         "compute_s",
                                  "visible_optimizer_s", "exposed_communication_s", "refresh_wait_s", "state_move_wait_s",
                                  "optimizer_device_s",
                                  "refresh_backlog", "max_staleness",   "refreshes_submitted", "refreshes_published",
                                  "shadow_bytes",   "network_bytes",   "shadow_pool_bytes",   "shadow_jobs",
                                  "shadow_pool_wait_s", "early_installs"};
    for (Tier t : kTiers) c.push_back("resident_" + tier_name(t) + "_bytes");
    for (Tier t : kTiers) c.push_back("state_" + tier_name(t) + "_bytes");
    for (auto [from, to] : kPairs) c.push_back(moved_key(from, to));
    return c;
  }();
  return columns;
}

std::string steps_csv_header(const RunReport& report, bool with_config) {
  std::string h = with_config ? "config" : "";
  for (const std::string& c : step_columns()) h += (h.empty() ? "" : ",") + c;
  for (const std::string& c : report.extra_columns) h += ',' + c;
  return h + '\n';
}

std::string steps_csv_rows(const RunReport& report, bool with_config) {
  std::string csv;
  for (std::size_t i = 0; i < report.records.size(); ++i) {
    const runtime::StepRecord& r = report.records[i];
    if (with_config) csv += report.name + ',';
    csv += std::to_string(r.step) + ',' + (r.warmup ? "1" : "0") + ',' + exact_number(r.step_time_s) + ',' +
           exact_number(r.compute_s) + ',' + exact_number(r.visible_optimizer_s) + ',' +
           exact_number(r.exposed_communication_s) + ',' + exact_number(r.refresh_wait_s) + ',' + exact_number(r.state_move_wait_s) + ',' +
           exact_number(r.optimizer_device_s) + ',' + std::to_string(r.refresh_backlog) + ',' +
           std::to_string(r.max_staleness) + ',' + std::to_string(r.refreshes_submitted) + ',' +
           std::to_string(r.refreshes_published) + ',' + std::to_string(r.shadow_bytes) + ',' +
           exact_number(r.network_bytes) + ',' + std::to_string(r.shadow_pool_bytes) + ',' +
           std::to_string(r.shadow_jobs) + ',' + exact_number(r.shadow_pool_wait_s) + ',' +
           std::to_string(r.early_installs);
    for (Tier t : kTiers) csv += ',' + std::to_string(r.resident_bytes[index_of(t)]);
    for (Tier t : kTiers) csv += ',' + std::to_string(r.state_bytes[index_of(t)]);
    for (auto [from, to] : kPairs) csv += ',' + std::to_string(r.bytes_moved.at(from, to));
    if (i < report.extra_cells.size())
      for (const std::string& cell : report.extra_cells[i]) csv += ',' + cell;
    csv += '\n';
  }
  return csv;
}

nlohmann::ordered_json host_math_json() {
  const linalg::BlasKernels blas = linalg::blas_kernels();
  nlohmann::ordered_json j;
  j["host_cpu"] = blas.cpu;
  j["host_vector_isa"] = std::string(ops::to_string(ops::detect_cpu_isa()));
  j["blas_library"] = blas.library;
  j["blas_kernels"] = blas.kernels;
  j["blas_kernel_class"] = std::string(linalg::to_string(blas.kernel_class));
  j["blas_fallback"] = blas.fallback();
  j["blas_chosen_by"] = real::blas_kernels_chosen_by();
  return j;
}

nlohmann::ordered_json summary_json(const RunReport& o) {
  const RunConfig& s = o.spec;
  const runtime::RunSummary& m = o.summary;
  nlohmann::ordered_json j;
  j["verb"] = to_string(s.verb);
  if (!o.name.empty()) j["config"] = o.name;
  j["hw"] = o.hw.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(o.hw);
  j["model"] = o.model;
  j["platform"] = o.platform;
  const nlohmann::ordered_json host_math = host_math_json();
  for (const auto& [key, value] : host_math.items()) j[key] = value;
  j["numerics"] = platform::to_string(s.numerics);
  j["time"] = platform::to_string(s.time);
  j["optimizer"] = optim::to_string(s.optimizer);
  j["lr"] = s.hp.lr;
  j["precondition_frequency"] = s.hp.precondition_frequency;
  j["max_precond_dim"] = s.hp.max_precond_dim;
  j["placement"] = runtime::to_string(s.placement);
  j["lookahead"] = s.lookahead;
  j["staleness"] = s.staleness;
  j["publish"] = runtime::to_string(s.publish);
  j["refresh_on"] = runtime::to_string(s.refresh_on);
  if (s.planned_for_hw) j["planned_for_hw"] = *s.planned_for_hw;
  // Every setting of the run as its option takes it (core/run/run_schema.hpp), flat as the rest:
  // setting_refresh_sharing = "replicated".
  for (const auto& [name, text] : run::setting_values(s)) {
    std::string key = "setting_" + name;
    std::replace(key.begin(), key.end(), '-', '_');
    j[key] = text;
  }
  j["units"] = o.units;
  j["nodes"] = o.nodes;
  j["host_workers"] = o.host_workers;
  j["seed"] = s.seed;
  j["steps"] = m.steps;
  j["warmup_steps"] = o.warmup_steps;
  j["parameters"] = o.parameters;
  j["blocks"] = o.blocks;
  j["state_bytes"] = o.state_bytes;
  for (Tier t : kTiers) j[tier_name(t) + "_capacity_bytes"] = o.capacity_bytes[index_of(t)];
  j["fits"] = o.fits;
  nlohmann::ordered_json shortfall = nlohmann::ordered_json::array();
  for (const runtime::TierShortfall& t : o.shortfall)
    shortfall.push_back({{"tier", t.shared_pool ? std::string("device+host") : std::string(platform::to_string(t.tier))},
                         {"needed_bytes", t.needed},
                         {"free_bytes", t.available},
                         {"capacity_bytes", t.capacity},
                         {"missing_bytes", t.missing()}});
  j["shortfall"] = shortfall;
  j["fit_message"] = o.fit_message;
  auto figure = [&](const char* key, double value) {
    j[key] = o.fits ? nlohmann::ordered_json(value) : nlohmann::ordered_json();
  };
  figure("p50_step_s", m.p50_step_s);
  figure("p99_step_s", m.p99_step_s);
  figure("p99_over_p50", m.p99_over_p50);
  figure("mean_step_s", m.mean_step_s);
  figure("max_step_s", m.max_step_s);
  figure("compute_s", m.mean_compute_s);
  figure("visible_optimizer_s", m.mean_visible_optimizer_s);
  figure("p50_visible_optimizer_s", m.p50_visible_optimizer_s);
  figure("p99_visible_optimizer_s", m.p99_visible_optimizer_s);
  figure("exposed_communication_s", m.mean_exposed_communication_s);
  figure("p99_exposed_communication_s", m.p99_exposed_communication_s);
  figure("refresh_wait_s", per_step(m, m.total_refresh_wait_s));
  figure("state_move_wait_s", per_step(m, m.total_state_move_wait_s));
  figure("optimizer_device_s", per_step(m, m.total_optimizer_device_s));
  figure("total_step_s", m.total_step_s);
  figure("network_bytes", m.mean_network_bytes);  // per measured step, unit 0
  j["tokens_per_step"] = o.tokens_per_step;
  figure("tokens_per_s", m.mean_step_s > 0.0 ? o.tokens_per_step / m.mean_step_s : 0.0);  // all units
  // Energy per measured step, every unit together; null without the profile's power.
  const auto energy = [&](const char* key, double joules, double per) {
    j[key] = o.fits && o.energy && m.steps > 0 && per > 0.0 ? nlohmann::ordered_json(joules / per) : nlohmann::ordered_json();
  };
  const hw::Energy e = o.energy.value_or(hw::Energy{});
  const double steps = static_cast<double>(m.steps);
  energy("energy_per_step_j", e.total_j(), steps);
  energy("energy_per_token_j", e.total_j(), steps * o.tokens_per_step);
  energy("mean_power_w", e.total_j(), m.total_step_s);
  energy("device_energy_per_step_j", e.device_j, steps);
  energy("host_energy_per_step_j", e.host_j, steps);
  energy("memory_energy_per_step_j", e.memory_j, steps);
  energy("storage_energy_per_step_j", e.storage_j, steps);
  energy("network_energy_per_step_j", e.network_j, steps);
  energy("package_over_cap_energy_per_step_j", e.over_cap_j, steps);
  j["max_staleness"] = o.fits ? nlohmann::ordered_json(m.max_staleness) : nlohmann::ordered_json();
  j["refreshes_submitted"] = m.refreshes_submitted;
  j["refreshes_published"] = m.refreshes_published;
  j["refresh_failures"] = o.refresh_failures;
  j["max_refresh_backlog"] = m.max_refresh_backlog;
  j["shadow_pool_bytes"] = m.shadow_pool_bytes;
  j["max_shadow_jobs"] = m.max_shadow_jobs;
  figure("shadow_pool_wait_s", per_step(m, m.total_shadow_pool_wait_s));
  j["early_installs"] = m.early_installs;
  j["max_shadow_overflow_bytes"] = m.max_shadow_overflow_bytes;
  for (Tier t : kTiers) j["peak_" + tier_name(t) + "_bytes"] = m.peak_resident_bytes[index_of(t)];
  for (auto [from, to] : kPairs) j[moved_key(from, to)] = m.bytes_moved.at(from, to);
  j["wall_seconds"] = o.wall_seconds;
  j["trace"] = o.trace.written;
  if (o.trace.written) {
    j["trace_first_step"] = o.trace.first_step;
    j["trace_last_step"] = o.trace.last_step;
    j["trace_units"] = o.trace.units;
    j["trace_records"] = o.trace.records;
    j["trace_dropped_records"] = o.trace.dropped_records;
    j["trace_bytes"] = o.trace.native_bytes;
    j["trace_chrome_bytes"] = o.trace.chrome_bytes;
  }
  for (const auto& [key, value] : o.extra) j[key] = value;
  return j;
}

void write_report(const RunReport& report, const std::filesystem::path& dir) {
  if (report.fits) {
    std::string earlier;
    for (const std::string& row : report.earlier_rows) earlier += row + '\n';
    io::write_file_atomically(dir / "steps.csv", steps_csv_header(report, false) + earlier + steps_csv_rows(report, false));
  }
  if (report.fits && !report.plan.empty()) io::write_file_atomically(dir / "plan.txt", report.plan);
  io::write_file_atomically(dir / "summary.json", summary_json(report).dump(2) + '\n');
}

void print_report(const RunReport& o, std::ostream& out) {
  const RunConfig& s = o.spec;
  out << to_string(s.verb) << (o.name.empty() ? "" : " " + o.name) << ": " << o.model;
  if (o.parameters > 0) out << " (" << o.parameters << " parameters)";
  out << ", " << optim::to_string(s.optimizer) << ", placement " << runtime::to_string(s.placement) << ", S = "
      << s.staleness << " (" << runtime::to_string(s.publish) << "), refreshes on the "
      << (s.refresh_on == runtime::RefreshSite::device ? "device stream" : "host workers")
      << ", f = " << s.hp.precondition_frequency
      << ", max_precond_dim " << s.hp.max_precond_dim << ", numerics " << platform::to_string(s.numerics) << ", time "
      << platform::to_string(s.time) << '\n';
  out << "on " << o.platform << '\n';
  out << "optimizer state " << bytes_text(static_cast<double>(o.state_bytes)) << " in " << o.blocks
      << " blocks per unit; budgets for it: device " << bytes_text(static_cast<double>(o.capacity_bytes[0])) << ", host "
      << bytes_text(static_cast<double>(o.capacity_bytes[1])) << ", nvme "
      << bytes_text(static_cast<double>(o.capacity_bytes[2])) << '\n';
  if (!o.fits) {
    out << "does not fit: " << o.fit_message << '\n';
    for (const runtime::TierShortfall& t : o.shortfall)
      out << "  " << t.where() << ": needs " << bytes_text(static_cast<double>(t.needed)) << ", "
          << bytes_text(static_cast<double>(t.available)) << " free of " << bytes_text(static_cast<double>(t.capacity))
          << " (short by " << bytes_text(static_cast<double>(t.missing())) << ")\n";
    return;
  }
  const runtime::RunSummary& m = o.summary;
  out << "step time p50 " << seconds_text(m.p50_step_s) << ", p99 " << seconds_text(m.p99_step_s) << ", p99/p50 "
      << significant(m.p99_over_p50, 4) << ", mean " << seconds_text(m.mean_step_s) << " (compute "
      << seconds_text(m.mean_compute_s) << ") over " << m.steps << " steps (+" << m.warmup_steps << " warm-up)\n";
  out << "visible optimizer time mean " << seconds_text(m.mean_visible_optimizer_s) << ", p50 "
      << seconds_text(m.p50_visible_optimizer_s) << ", p99 " << seconds_text(m.p99_visible_optimizer_s)
      << " (per step: refresh waits " << seconds_text(per_step(m, m.total_refresh_wait_s)) << ", state-move waits "
      << seconds_text(per_step(m, m.total_state_move_wait_s)) << ", optimizer device work "
      << seconds_text(per_step(m, m.total_optimizer_device_s)) << ")\n";
  if (m.mean_network_bytes > 0.0)
    out << "exposed communication mean " << seconds_text(m.mean_exposed_communication_s) << ", p99 "
        << seconds_text(m.p99_exposed_communication_s) << " (collectives the step did not hide, "
        << bytes_text(m.mean_network_bytes) << " per step)\n";
  out << "refreshes submitted " << m.refreshes_submitted << ", published " << m.refreshes_published << ", failed "
      << o.refresh_failures << "; max staleness " << m.max_staleness << ", max refresh backlog "
      << m.max_refresh_backlog << "; peak device " << bytes_text(static_cast<double>(m.peak_resident_bytes[0]))
      << ", host " << bytes_text(static_cast<double>(m.peak_resident_bytes[1])) << ", nvme "
      << bytes_text(static_cast<double>(m.peak_resident_bytes[2])) << '\n';
  out << "shadow pool " << bytes_text(static_cast<double>(m.shadow_pool_bytes)) << ": at most " << m.max_shadow_jobs
      << " refresh jobs holding buffers at once, waits for room " << seconds_text(per_step(m, m.total_shadow_pool_wait_s))
      << " per step, " << m.early_installs << " installed early";
  if (m.max_shadow_overflow_bytes > 0)
    out << ", up to " << bytes_text(static_cast<double>(m.max_shadow_overflow_bytes)) << " held beyond it";
  out << '\n';
  if (o.trace.written)
    out << "trace: steps " << o.trace.first_step << " to " << o.trace.last_step << " of units 0 to "
        << o.trace.units - 1 << ", " << o.trace.records
        << " records (" << o.trace.dropped_records << " dropped past the size bound), trace.csv "
        << significant(static_cast<double>(o.trace.native_bytes) / 1e6, 4) << " MB, trace.json "
        << significant(static_cast<double>(o.trace.chrome_bytes) / 1e6, 4) << " MB\n";
}

}  // namespace asteria::cli

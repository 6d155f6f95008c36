#include "core/runtime/driver/run_summary.hpp"

#include <algorithm>
#include <cmath>

namespace asteria::runtime {

double percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const double position = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, values.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return values[below] + fraction * (values[above] - values[below]);
}

RunSummary summarize(std::span<const StepRecord> records) {
  RunSummary s;
  std::vector<double> times;
  std::vector<double> visible;
  std::vector<double> exposed;
  for (const StepRecord& r : records) {
    for (std::size_t tier = 0; tier < platform::kTierCount; ++tier)
      s.peak_resident_bytes[tier] = std::max(s.peak_resident_bytes[tier], r.peak_bytes[tier]);
    for (std::size_t from = 0; from < platform::kTierCount; ++from)
      for (std::size_t to = 0; to < platform::kTierCount; ++to) s.bytes_moved.values[from][to] += r.bytes_moved.values[from][to];
    s.shadow_pool_bytes = std::max(s.shadow_pool_bytes, r.shadow_pool_bytes);
    s.max_shadow_jobs = std::max(s.max_shadow_jobs, r.shadow_jobs);
    s.max_shadow_overflow_bytes = std::max(s.max_shadow_overflow_bytes, r.shadow_overflow_bytes);
    if (r.warmup) {
      ++s.warmup_steps;
      continue;
    }
    ++s.steps;
    times.push_back(r.step_time_s);
    visible.push_back(r.visible_optimizer_s);
    exposed.push_back(r.exposed_communication_s);
    s.mean_exposed_communication_s += r.exposed_communication_s;
    s.total_step_s += r.step_time_s;
    s.mean_compute_s += r.compute_s;
    s.total_visible_optimizer_s += r.visible_optimizer_s;
    s.total_refresh_wait_s += r.refresh_wait_s;
    s.total_state_move_wait_s += r.state_move_wait_s;
    s.total_optimizer_device_s += r.optimizer_device_s;
    s.refreshes_submitted += r.refreshes_submitted;
    s.refreshes_published += r.refreshes_published;
    s.total_shadow_pool_wait_s += r.shadow_pool_wait_s;
    s.early_installs += r.early_installs;
    s.max_refresh_backlog = std::max(s.max_refresh_backlog, r.refresh_backlog);
    s.max_staleness = std::max(s.max_staleness, r.max_staleness);
    s.max_step_s = std::max(s.max_step_s, r.step_time_s);
    s.mean_network_bytes += r.network_bytes;
  }
  if (s.steps == 0) return s;
  const auto n = static_cast<double>(s.steps);
  s.p50_step_s = percentile(times, 0.50);
  s.p99_step_s = percentile(times, 0.99);
  s.p99_over_p50 = s.p50_step_s > 0.0 ? s.p99_step_s / s.p50_step_s : 0.0;
  s.mean_step_s = s.total_step_s / n;
  s.mean_network_bytes /= n;
  s.mean_compute_s /= n;
  s.mean_visible_optimizer_s = s.total_visible_optimizer_s / n;
  s.mean_exposed_communication_s /= n;
  s.p99_exposed_communication_s = percentile(std::move(exposed), 0.99);
  s.p50_visible_optimizer_s = percentile(visible, 0.50);
  s.p99_visible_optimizer_s = percentile(std::move(visible), 0.99);
  return s;
}

}  // namespace asteria::runtime

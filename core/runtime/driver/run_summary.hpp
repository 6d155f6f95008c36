#pragma once
// Totals and order statistics of a driver run, over the steps that are not warm-up.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/runtime/driver/driver_options.hpp"

namespace asteria::runtime {

// The q-quantile (q in [0, 1]) with linear interpolation between order statistics (NumPy's
// default); 0 for no values.
double percentile(std::vector<double> values, double q);

struct RunSummary {
  std::size_t steps = 0;         // measured steps
  std::size_t warmup_steps = 0;  // left out of every figure below except the totals of moves
  double p50_step_s = 0.0;
  double p99_step_s = 0.0;
  double p99_over_p50 = 0.0;
  double mean_step_s = 0.0;
  double max_step_s = 0.0;
  double mean_compute_s = 0.0;
  double mean_visible_optimizer_s = 0.0;
  double p50_visible_optimizer_s = 0.0;
  double p99_visible_optimizer_s = 0.0;
  double total_step_s = 0.0;
  double total_visible_optimizer_s = 0.0;
  double mean_exposed_communication_s = 0.0;
  double p99_exposed_communication_s = 0.0;
  double total_refresh_wait_s = 0.0;
  double total_state_move_wait_s = 0.0;
  double total_optimizer_device_s = 0.0;
  std::int64_t refreshes_submitted = 0;
  std::int64_t refreshes_published = 0;
  std::int64_t max_refresh_backlog = 0;
  optim::Step max_staleness = 0;
  // The shadow pool, over every step (warm-up included: it holds what the run needs): its size,
  // the most jobs holding buffers at once, the most bytes held beyond it; and over the measured
  // steps the snapshots' waits for room and the jobs installed early to make it.
  std::size_t shadow_pool_bytes = 0;
  std::int64_t max_shadow_jobs = 0;
  std::size_t max_shadow_overflow_bytes = 0;
  double total_shadow_pool_wait_s = 0.0;
  std::int64_t early_installs = 0;
  std::array<std::size_t, platform::kTierCount> peak_resident_bytes{};  // over every step
  TierPairTotals bytes_moved;                                           // over every step
  double mean_network_bytes = 0.0;  // per measured step (StepRecord::network_bytes)
};

RunSummary summarize(std::span<const StepRecord> records);

}  // namespace asteria::runtime

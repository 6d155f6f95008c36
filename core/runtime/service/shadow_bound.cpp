#include "core/runtime/service/shadow_bound.hpp"

#include <algorithm>
#include <deque>
#include <functional>

#include "core/optim/shape_model.hpp"

namespace asteria::runtime {

std::int64_t max_live_refresh_jobs(optim::OptimizerKind kind, const optim::Hyperparameters& hp, int staleness) {
  const std::int64_t window = std::int64_t{std::max(0, staleness)} + 1;
  const std::int64_t f = std::max(1, hp.precondition_frequency);
  // Every schedule repeats every f counts once past its start (and the first multiple of f after
  // it), so windows that begin later repeat earlier ones.
  const std::int64_t horizon = std::max(1, hp.effective_start_preconditioning_step()) + 2 * f + window;
  std::deque<std::int64_t> due;  // due counts inside the window ending at k
  std::int64_t most = 0;
  for (std::int64_t k = 1; k <= horizon; ++k) {
    if (optim::refresh_due_after(kind, hp, k)) due.push_back(k);
    while (!due.empty() && due.front() <= k - window) due.pop_front();
    most = std::max(most, static_cast<std::int64_t>(due.size()));
  }
  return most;
}

namespace {
std::size_t per_block(const ShadowDemand& d) {
  return static_cast<std::size_t>(std::max<std::int64_t>(0, d.live_jobs)) * d.job_bytes;
}
}  // namespace

ShadowPoolBounds shadow_pool_bounds(std::span<const ShadowDemand> blocks,
                                    const std::vector<std::vector<int>>& refreshed_before_update,
                                    const ShadowPoolSizing& sizing) {
  ShadowPoolBounds bounds;
  // Blocks whose jobs can be installed once the plan has passed their update in the snapshot's
  // own step: S = 0, and no delay-1 result travelling between ranks.
  std::vector<char> early(blocks.size(), 0);
  std::size_t kept = 0;  // the others: their whole per-block bound
  std::size_t early_sum = 0;
  std::vector<std::size_t> early_jobs;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const ShadowDemand& d = blocks[b];
    const std::size_t bytes = per_block(d);
    if (bytes == 0) continue;
    bounds.per_block += bytes;
    if (sizing.early_installs && sizing.staleness <= 0 && !(d.shared && d.activation_delay == 1)) {
      early[b] = 1;
      early_sum += bytes;
      early_jobs.push_back(d.job_bytes);
    } else {
      kept += bytes;
    }
  }
  // The worst set of early blocks snapshotted and not yet updated.
  std::size_t unresolvable = 0;
  for (const std::vector<int>& set : refreshed_before_update) {
    std::size_t bytes = 0;
    for (int b : set)
      if (b >= 0 && static_cast<std::size_t>(b) < blocks.size() && early[static_cast<std::size_t>(b)])
        bytes += blocks[static_cast<std::size_t>(b)].job_bytes;
    unresolvable = std::max(unresolvable, bytes);
  }
  // Work for every host worker: the largest jobs, one per worker.
  const std::size_t workers = static_cast<std::size_t>(std::max(1, sizing.host_workers));
  const std::size_t queued = std::min(workers, early_jobs.size());
  std::partial_sort(early_jobs.begin(), early_jobs.begin() + static_cast<std::ptrdiff_t>(queued), early_jobs.end(),
                    std::greater<>());
  std::size_t running = 0;
  for (std::size_t i = 0; i < queued; ++i) running += early_jobs[i];
  bounds.in_flight = kept + std::min(early_sum, unresolvable + running);
  return bounds;
}

std::size_t shadow_pool_bytes(const ShadowPoolBounds& bounds, std::size_t host_room) {
  return bounds.in_flight + std::min(bounds.per_block - bounds.in_flight, host_room);
}

bool installs_anywhere(platform::Numerics numerics, int warmup_steps, bool state_pinned) {
  if (numerics == platform::Numerics::shapes) return true;
  if (numerics == platform::Numerics::refresh && warmup_steps <= 0) return true;
  return state_pinned;
}

}  // namespace asteria::runtime

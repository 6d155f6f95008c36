#include "core/runtime/service/shadow_bound.hpp"

#include <algorithm>
#include <deque>

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

}  // namespace asteria::runtime

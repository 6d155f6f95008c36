#pragma once
// Runs one optimizer, with full-batch (deterministic) gradients, on the comparison problem and
// records its loss curve. The weights are held, and the optimizer computes, in T; gradients
// are computed in float64 from the weights and rounded to T, so the curves of every optimizer
// measure the optimizer, not the gradient's arithmetic.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/optim/hyperparameters.hpp"
#include "core/optim/tensor_optimizer.hpp"
#include "core/problems/matrix_regression.hpp"

namespace asteria::problems {

enum class RunOutcome {
  completed,    // every step ran
  unavailable,  // the optimizer is not built in (or rejected its hyperparameters)
  failed,       // a failure policy stopped the run (NumericalError)
  diverged,     // the loss became non-finite
};
const char* to_string(RunOutcome outcome) noexcept;

struct OptimizerRun {
  optim::OptimizerKind kind = optim::OptimizerKind::adamw;
  optim::Hyperparameters hyperparameters;
  RunOutcome outcome = RunOutcome::completed;
  std::string message;                         // why the run stopped early, if it did
  std::vector<double> losses;                  // losses[t]: loss after t steps; losses[0] at the start
  std::optional<std::int64_t> steps_to_target; // first t with losses[t] <= target
  optim::OptimizerCounters counters;

  std::int64_t steps_run() const noexcept { return losses.empty() ? 0 : static_cast<std::int64_t>(losses.size()) - 1; }
  double final_loss() const noexcept { return losses.empty() ? 0.0 : losses.back(); }
};

// The loss that counts as "reached": optimum + ratio · (initial excess loss).
double target_loss(const MatrixRegression& problem, double target_ratio);

// Runs `steps` steps of `kind` with `hp` from problem.initial_point(). `on_step(t)` is called
// after step t (progress reporting). Errors of the optimizer are recorded in the outcome, not
// thrown.
template <linalg::Real T>
OptimizerRun run_optimizer(const MatrixRegression& problem, optim::OptimizerKind kind, const optim::Hyperparameters& hp,
                           std::int64_t steps, double target_ratio,
                           const std::function<void(std::int64_t)>& on_step = {});

}  // namespace asteria::problems

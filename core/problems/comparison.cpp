#include "core/problems/comparison.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <span>

#include "core/common/error.hpp"

namespace asteria::problems {

const char* to_string(RunOutcome outcome) noexcept {
  switch (outcome) {
    case RunOutcome::completed: return "completed";
    case RunOutcome::unavailable: return "unavailable";
    case RunOutcome::failed: return "failed";
    case RunOutcome::diverged: return "diverged";
  }
  return "unknown";
}

double target_loss(const MatrixRegression& problem, double target_ratio) {
  const double initial = problem.loss(problem.initial_point());
  return problem.optimal_loss() + target_ratio * (initial - problem.optimal_loss());
}

template <linalg::Real T>
OptimizerRun run_optimizer(const MatrixRegression& problem, optim::OptimizerKind kind, const optim::Hyperparameters& hp,
                           std::int64_t steps, double target_ratio,
                           const std::function<void(std::int64_t)>& on_step) {
  OptimizerRun run;
  run.kind = kind;
  run.hyperparameters = hp;
  const index m = problem.rows(), n = problem.cols();
  std::unique_ptr<optim::TensorOptimizer<T>> optimizer;
  try {
    optimizer = std::make_unique<optim::TensorOptimizer<T>>(kind, hp, std::vector<index>{m, n},
                                                            std::string(optim::to_string(kind)));
  } catch (const Error& e) {
    run.outcome = RunOutcome::unavailable;
    run.message = e.what();
    return run;
  }

  const double target = target_loss(problem, target_ratio);
  const linalg::Matrix<double> start = problem.initial_point();
  std::vector<T> weights(start.values().begin(), start.values().end());
  std::vector<T> gradient(weights.size());
  linalg::Matrix<double> w64(m, n), g64(m, n);
  auto evaluate = [&] {  // loss at the current weights; leaves the gradient in `gradient`
    std::copy(weights.begin(), weights.end(), w64.values().begin());
    const double loss = problem.loss_and_gradient(w64, g64);
    std::copy(g64.values().begin(), g64.values().end(), gradient.begin());
    return loss;
  };

  run.losses.reserve(static_cast<std::size_t>(steps) + 1);
  run.losses.push_back(evaluate());
  for (std::int64_t t = 1; t <= steps; ++t) {
    try {
      optimizer->step(std::span<T>(weights), std::span<const T>(gradient));
    } catch (const Error& e) {
      run.outcome = RunOutcome::failed;
      run.message = "step " + std::to_string(t) + ": " + e.what();
      break;
    }
    const double loss = evaluate();
    if (!std::isfinite(loss)) {
      run.outcome = RunOutcome::diverged;
      run.message = "the loss became non-finite at step " + std::to_string(t);
      break;
    }
    run.losses.push_back(loss);
    if (!run.steps_to_target && loss <= target) run.steps_to_target = t;
    if (on_step) on_step(t);
  }
  run.counters = optimizer->counters();
  return run;
}

template OptimizerRun run_optimizer<float>(const MatrixRegression&, optim::OptimizerKind, const optim::Hyperparameters&,
                                           std::int64_t, double, const std::function<void(std::int64_t)>&);
template OptimizerRun run_optimizer<double>(const MatrixRegression&, optim::OptimizerKind, const optim::Hyperparameters&,
                                            std::int64_t, double, const std::function<void(std::int64_t)>&);

}  // namespace asteria::problems

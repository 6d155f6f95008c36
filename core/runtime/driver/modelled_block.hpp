#pragma once
// A block optimizer whose device-side numerics can be switched off: the step driver's
// `emulated` mode. While off, accumulate, apply and publish do nothing (their device time is
// charged from a Cost model instead, and the host CPU stays free as when a real GPU runs them),
// but snapshots of the real statistics still feed refresh jobs that run real LAPACK numerics on
// host workers. Turned on for the first (warm-up) steps, the statistics those refreshes read
// are the real ones of a few real steps.
//
// The refresh schedule must not depend on whether accumulate ran, yet every optimizer counts
// its own statistics updates. So a tiny twin of the block (1 x 1, same kind and
// hyperparameters) accumulates every step and answers refresh_due(): the schedule is exactly
// the real optimizer's without this class knowing any optimizer's rule.
#include <memory>
#include <string_view>

#include "core/optim/block_optimizer.hpp"
#include "core/optim/factory.hpp"
#include "core/optim/hyperparameters.hpp"

namespace asteria::runtime {

template <linalg::Real T>
class ModelledBlock final : public optim::BlockOptimizer<T> {
 public:
  ModelledBlock(std::unique_ptr<optim::BlockOptimizer<T>> inner, optim::OptimizerKind kind,
                const optim::Hyperparameters& hp)
      : optim::BlockOptimizer<T>(inner->rows(), inner->cols()), inner_(std::move(inner)),
        schedule_(optim::make_block_optimizer<T>(kind, hp, 1, 1)) {}

  // On: this block behaves exactly as the optimizer it wraps. Off: device numerics skipped.
  void set_numerics(bool on) noexcept { numerics_ = on; }
  bool numerics() const noexcept { return numerics_; }

  optim::BlockOptimizer<T>& inner() noexcept { return *inner_; }
  const optim::BlockOptimizer<T>& inner() const noexcept { return *inner_; }

  std::string_view name() const noexcept override { return inner_->name(); }
  int activation_delay() const noexcept override { return inner_->activation_delay(); }

  void accumulate(linalg::ConstMatrixView<T> grad, optim::Step t) override {
    if (numerics_) inner_->accumulate(grad, t);
    const T one(1);
    schedule_->accumulate(linalg::ConstMatrixView<T>(&one, 1, 1), t);
  }
  bool refresh_due(optim::Step t) const override { return schedule_->refresh_due(t); }
  std::unique_ptr<optim::RefreshJob<T>> snapshot(optim::Step t) const override { return inner_->snapshot(t); }
  std::unique_ptr<optim::RefreshJob<T>> snapshot_reusing(optim::Step t,
                                                         std::unique_ptr<optim::RefreshJob<T>> spare) const override {
    return inner_->snapshot_reusing(t, std::move(spare));
  }
  void publish(optim::RefreshJob<T>& finished) override {
    if (numerics_) inner_->publish(finished);
  }
  [[nodiscard]] bool apply(linalg::MatrixView<T> weights, linalg::ConstMatrixView<T> grad, optim::Step t) override {
    return numerics_ ? inner_->apply(weights, grad, t) : true;
  }

 private:
  std::unique_ptr<optim::BlockOptimizer<T>> inner_;
  std::unique_ptr<optim::BlockOptimizer<T>> schedule_;
  bool numerics_ = true;
};

// The first step whose publication point installs a refresh when refreshes are published S
// steps after the synchronous schedule. A warm-up that reaches it measures steady state: updates
// use a preconditioner, and in emulated mode warm-started refreshes (SOAP, KL-Shampoo) start
// from a real basis. 0 when the optimizer has no refresh within `horizon` steps.
inline optim::Step first_publication_step(optim::OptimizerKind kind, const optim::Hyperparameters& hp, int staleness,
                                          optim::Step horizon = 100000) {
  auto probe = optim::make_block_optimizer<double>(kind, hp, 1, 1);
  const double one = 1.0;
  for (optim::Step t = 1; t <= horizon; ++t) {
    probe->accumulate(linalg::ConstMatrixView<double>(&one, 1, 1), t);
    if (probe->refresh_due(t)) return t + probe->activation_delay() + staleness;
  }
  return 0;
}

}  // namespace asteria::runtime

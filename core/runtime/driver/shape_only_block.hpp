#pragma once
// A block that is a shape and a schedule, with no numbers: the step driver's `shapes` mode
// (data-free simulation). A 7B-parameter model's optimizer state is tens of gigabytes, yet a
// what-if study needs only when each block refreshes, what each refresh costs and how many
// bytes the block's state occupies. This class keeps exactly that:
//   - the refresh schedule, from a 1 x 1 twin of the real optimizer (as ModelledBlock does),
//     so it is the real optimizer's rule without this class knowing it;
//   - refresh jobs that carry the real job's Cost (the first refresh of a block and the later,
//     warm-started ones cost differently) and do nothing when run;
//   - no state arena: the state store moves the declared bytes (DeclaredBytes).
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "core/optim/block_optimizer.hpp"
#include "core/optim/factory.hpp"
#include "core/optim/hyperparameters.hpp"

namespace asteria::runtime {

// What a shape-only block's refreshes cost: the first one (a full eigendecomposition for SOAP
// and KL-Shampoo) and every later one.
struct RefreshCosts {
  std::vector<platform::Cost> first;
  std::vector<platform::Cost> later;
  std::size_t shadow_bytes = 0;  // snapshot + result a job holds
};

template <linalg::Real T>
class CostOnlyRefreshJob final : public optim::RefreshJob<T> {
 public:
  CostOnlyRefreshJob(optim::Step stats_step, std::vector<platform::Cost> cost, std::size_t bytes)
      : optim::RefreshJob<T>(stats_step), cost_(std::move(cost)), bytes_(bytes) {}
  Status run() override { return Status::success(); }
  std::vector<platform::Cost> cost() const override { return cost_; }
  std::size_t bytes() const override { return bytes_; }

 private:
  std::vector<platform::Cost> cost_;
  std::size_t bytes_;
};

template <linalg::Real T>
class ShapeOnlyBlock final : public optim::BlockOptimizer<T> {
 public:
  ShapeOnlyBlock(optim::OptimizerKind kind, const optim::Hyperparameters& hp, linalg::index rows, linalg::index cols,
                 RefreshCosts costs)
      : optim::BlockOptimizer<T>(rows, cols),
        schedule_(optim::make_block_optimizer<T>(kind, hp, 1, 1)),
        costs_(std::move(costs)) {}

  std::string_view name() const noexcept override { return schedule_->name(); }
  int activation_delay() const noexcept override { return schedule_->activation_delay(); }

  void accumulate(linalg::ConstMatrixView<T> /*grad*/, optim::Step t) override {
    const T one(1);
    schedule_->accumulate(linalg::ConstMatrixView<T>(&one, 1, 1), t);
  }
  bool refresh_due(optim::Step t) const override { return schedule_->refresh_due(t); }
  std::unique_ptr<optim::RefreshJob<T>> snapshot(optim::Step t) const override {
    // Until a refresh is published the next one starts cold, as the real optimizers decide.
    return std::make_unique<CostOnlyRefreshJob<T>>(t, publications_ == 0 ? costs_.first : costs_.later,
                                                   costs_.shadow_bytes);
  }
  void publish(optim::RefreshJob<T>& /*finished*/) override { ++publications_; }
  [[nodiscard]] bool apply(linalg::MatrixView<T> /*weights*/, linalg::ConstMatrixView<T> /*grad*/,
                           optim::Step /*t*/) override {
    return true;
  }

 private:
  std::unique_ptr<optim::BlockOptimizer<T>> schedule_;
  RefreshCosts costs_;
  std::int64_t publications_ = 0;
};

}  // namespace asteria::runtime

#pragma once
// The expensive half of Shampoo: inverse p-th roots of the two Kronecker factors of a block,
// computed from a private copy of the statistics so it can run on any worker at any time.
#include <vector>

#include "core/linalg/inverse_root.hpp"
#include "core/optim/block_optimizer.hpp"
#include "core/optim/hyperparameters.hpp"

namespace asteria::optim {

struct ShampooRootSettings {
  double exponent = 4.0;  // p in (F + εI)^(−1/p)
  double epsilon = 1e-12;
  RootMethod method = RootMethod::eigen;
  linalg::CoupledNewtonOptions newton{};
};

template <Real T>
class ShampooRefreshJob final : public RefreshJob<T> {
 public:
  // Copies `left` (L) and `right` (R); `bias_correction` (1 − β2^k, or 1) divides both before
  // the roots are taken. `stats_count` is how many gradients the statistics hold.
  ShampooRefreshJob(Step stats_step, std::int64_t stats_count, linalg::ConstMatrixView<T> left,
                    linalg::ConstMatrixView<T> right, double bias_correction, const ShampooRootSettings& settings);

  // Makes this (resolved) job a new snapshot of the same block, keeping its buffers.
  void refill(Step stats_step, std::int64_t stats_count, linalg::ConstMatrixView<T> left,
              linalg::ConstMatrixView<T> right, double bias_correction);

  Status run() override;
  // Per factor: eigh + reconstruction, or one coupled Newton piece (estimated before run()).
  std::vector<platform::Cost> cost() const override;
  std::size_t bytes() const override;

  bool finished() const noexcept { return finished_; }
  std::int64_t stats_count() const noexcept { return stats_count_; }
  linalg::ConstMatrixView<T> left_root() const noexcept { return left_.root.view(); }
  linalg::ConstMatrixView<T> right_root() const noexcept { return right_.root.view(); }

 private:
  struct Factor {
    const char* name;
    linalg::Matrix<T> statistics;
    linalg::Matrix<T> root;
    linalg::NewtonReport newton{};
    bool newton_ran = false;
    bool bias_corrected = false;
  };
  Status compute_root(Factor& factor) const;
  void add_cost(std::vector<platform::Cost>& pieces, const Factor& factor) const;

  std::int64_t stats_count_;
  double bias_correction_;
  ShampooRootSettings settings_;
  Factor left_;
  Factor right_;
  bool finished_ = false;
};

}  // namespace asteria::optim

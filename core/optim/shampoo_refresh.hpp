#pragma once
// The expensive half of Shampoo: inverse p-th roots of the two Kronecker factors of a block,
// computed from a private copy of the statistics so it can run on any worker at any time.
#include <vector>

#include "core/linalg/inverse_root.hpp"
#include "core/optim/block_optimizer.hpp"
#include "core/optim/hyperparameters.hpp"
#include "core/optim/pinned_snapshot.hpp"

namespace asteria::optim {

struct ShampooRootSettings {
  double exponent = 4.0;  // p in (F + εI)^(−1/p)
  // A vector's block (Hyperparameters::vector_block): the left factor (1 x 1) is not
  // preconditioned, its root stays 1; the right one's order is 2 (root −1/2).
  bool one_sided = false;
  double epsilon = 1e-12;
  RootMethod method = RootMethod::eigen;
  linalg::CoupledNewtonOptions newton{};
};

// The root settings of a Shampoo block under `hp`. Throws InputError when the root order does
// not suit the root method (coupled Newton needs an integer order).
ShampooRootSettings shampoo_root_settings(const Hyperparameters& hp);

// Before run() a coupled Newton root's iteration count is unknown; cost() charges this many.
inline constexpr int kNewtonIterationsEstimate = 20;

// The pieces of work of one factor's root (n x n, `element_bytes` per value), as
// ShampooRefreshJob::cost() reports them and optim::refresh_cost() models them:
// eigh + reconstruction, or one coupled Newton piece of `newton_iterations` iterations.
void append_root_cost(std::vector<platform::Cost>& pieces, const ShampooRootSettings& settings, index n,
                      std::size_t element_bytes, int newton_iterations);

// Bytes a job holds per factor (statistics and root), as ShampooRefreshJob::bytes().
std::size_t root_job_bytes(index n, std::size_t element_bytes);
// Bytes of a factor's result (its root), as ShampooRefreshJob::result_bytes().
std::size_t root_result_bytes(index n, std::size_t element_bytes);

template <Real T>
class ShampooRefreshJob final : public RefreshJob<T> {
 public:
  // Copies `left` (L) and `right` (R), memory of `device`, into host memory; `bias_correction`
  // (1 − β2^k, or 1) divides both before the roots are taken. `stats_count` is how many gradients
  // the statistics hold.
  ShampooRefreshJob(ops::Device& device, Step stats_step, std::int64_t stats_count, linalg::ConstMatrixView<T> left,
                    linalg::ConstMatrixView<T> right, double bias_correction, const ShampooRootSettings& settings);

  // A receiving job (data-parallel ranks that do not own the block's refresh): roots of
  // left_n x left_n and right_n x right_n, no statistics copied; it never runs, its result is
  // loaded (load_result) from the owner's and then published as if it had run here.
  ShampooRefreshJob(Step stats_step, std::int64_t stats_count, index left_n, index right_n,
                    const ShampooRootSettings& settings);

  // Makes this (resolved) job a new snapshot of the same block, keeping its buffers.
  void refill(ops::Device& device, Step stats_step, std::int64_t stats_count, linalg::ConstMatrixView<T> left,
              linalg::ConstMatrixView<T> right, double bias_correction);
  // Makes this (resolved) job a receiving job of the same block, keeping its root buffers.
  void receive(Step stats_step, std::int64_t stats_count, index left_n, index right_n);

  // A receiving job's run() fails (invalid_argument): its result comes from the owner.
  Status run() override;
  // Per factor: eigh + reconstruction, or one coupled Newton piece (estimated before run()).
  std::vector<platform::Cost> cost() const override;
  // The left root (part 0) and the right root (part 1), independent of each other.
  int parts() const override { return 2; }
  Status run_part(int part) override;
  std::vector<platform::Cost> part_cost(int part) const override;
  // A computing job's snapshot and roots; a receiving job's roots only.
  std::size_t bytes() const override;
  // Both roots (n x n each, row-major).
  std::size_t result_bytes() const override;
  void save_result(std::span<std::byte> image) const override;
  void load_result(std::span<const std::byte> image) override;

  bool finished() const noexcept { return left_.done && right_.done; }
  bool receiving() const noexcept { return receiving_; }
  std::int64_t stats_count() const noexcept { return stats_count_; }
  std::int64_t snapshot_stamp() const noexcept override { return stats_count_; }
  linalg::ConstMatrixView<T> left_root() const noexcept { return left_.root.view(); }
  linalg::ConstMatrixView<T> right_root() const noexcept { return right_.root.view(); }

 private:
  struct Factor {
    const char* name;
    index n = 0;  // the factor's size (n x n), also for receiving jobs, which hold no statistics
    linalg::Matrix<T> statistics;
    linalg::Matrix<T> root;
    linalg::NewtonReport newton{};
    bool newton_ran = false;
    bool bias_corrected = false;
    bool done = false;  // its root is this job's result (computed, or loaded)
    SnapshotPin statistics_pin{};  // after statistics: released first
  };
  Status compute_root(Factor& factor) const;
  const Factor& factor(int part) const;  // part 0: left, 1: right (std::out_of_range otherwise)

  std::int64_t stats_count_;
  double bias_correction_;
  ShampooRootSettings settings_;
  Factor left_;
  Factor right_;
  bool receiving_ = false;
};

}  // namespace asteria::optim

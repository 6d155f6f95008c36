#pragma once
// The refresh job shared by SOAP and KL-Shampoo: new eigenbases of the two Kronecker-factor
// statistics (left L, m x m; right R, n x n) of one block, computed from a snapshot.
//
// Two kinds, decided at snapshot time from the block's basis version:
//   full — no basis has been published yet (version 0): eigenvectors by a full eigh,
//          descending eigenvalue order (SOAP's and KL-Shampoo's initial basis);
//   warm — one power step from the basis the block held at snapshot time, then
//          orthogonalization (SOAP sorts by estimated eigenvalue first, KL-Shampoo does not).
// Deciding by version rather than by step keeps a late publish harmless: if the first job
// fails or has not been published when the next one is snapshotted, that one is full again.
//
// On request (SOAP, whose momentum lives in the basis) the job also computes the change of
// basis C = Q_newᵀ Q_snapshot per side (Q_newᵀ for full jobs: the snapshot basis was the
// identity), so that publishing rotates the momentum with two products instead of four.
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/linalg/eigenbasis.hpp"
#include "core/linalg/matrix.hpp"
#include "core/optim/block_optimizer.hpp"
#include "core/optim/pinned_snapshot.hpp"

namespace asteria::optim {

enum class Side { left = 0, right = 1 };

// The pieces of work of one factor's refresh (n x n, `element_bytes` per value), as
// EigenbasisRefreshJob::cost() reports them and optim::refresh_cost() models them: a full eigh,
// or (warm) the change of basis when requested, the power step and the orthogonalization.
void append_eigenbasis_cost(std::vector<platform::Cost>& pieces, index n, std::size_t element_bytes, bool full,
                            linalg::Orthogonalization method, bool change_of_basis);

// Bytes a job holds per factor once run, full or warm alike (run() sizes a full job's basis
// buffer too, so that a warm refill allocates nothing): statistics, snapshot basis, new basis,
// the change of basis when requested, and the sort order. As EigenbasisRefreshJob::bytes().
std::size_t eigenbasis_job_bytes(index n, std::size_t element_bytes, bool change_of_basis);
// Bytes of a factor's result, as EigenbasisRefreshJob::result_bytes().
std::size_t eigenbasis_result_bytes(index n, std::size_t element_bytes, bool change_of_basis);

template <Real T>
class EigenbasisRefreshJob final : public RefreshJob<T> {
 public:
  // `from_version` is the block's basis version at snapshot time (0: none published yet, and
  // then the bases are not read). Copies everything it needs from `device`'s memory into host
  // memory. The result buffers are sized by run(), so their first-touch cost falls on the
  // worker, not on the snapshotting thread.
  EigenbasisRefreshJob(ops::Device& device, Step stats_step, std::int64_t from_version, linalg::ConstMatrixView<T> left_stats,
                       linalg::ConstMatrixView<T> right_stats, linalg::ConstMatrixView<T> left_basis,
                       linalg::ConstMatrixView<T> right_basis, linalg::EigenvalueOrder ordering,
                       linalg::Orthogonalization method, bool compute_change_of_basis);

  // A receiving job (data-parallel ranks that do not own the block's refresh): factors of
  // left_n x left_n and right_n x right_n, no statistics copied; it never runs, its result is
  // loaded (load_result) from the owner's and then published as if it had run here.
  EigenbasisRefreshJob(Step stats_step, std::int64_t from_version, index left_n, index right_n,
                       linalg::EigenvalueOrder ordering, linalg::Orthogonalization method,
                       bool compute_change_of_basis);
  // Makes this (resolved) job a new snapshot of the same block, keeping its buffers; the
  // ordering, method and change-of-basis choice stay those of construction.
  void refill(ops::Device& device, Step stats_step, std::int64_t from_version, linalg::ConstMatrixView<T> left_stats,
              linalg::ConstMatrixView<T> right_stats, linalg::ConstMatrixView<T> left_basis,
              linalg::ConstMatrixView<T> right_basis);
  // Makes this (resolved) job a receiving job of the same block (see above), keeping the result
  // buffers it has.
  void receive(Step stats_step, std::int64_t from_version, index left_n, index right_n);

  // A receiving job's run() fails (invalid_argument): its result comes from the owner.
  Status run() override;
  std::vector<platform::Cost> cost() const override;
  // The left basis (part 0) and the right basis (part 1), independent of each other.
  int parts() const override { return 2; }
  Status run_part(int part) override;
  std::vector<platform::Cost> part_cost(int part) const override;
  std::size_t bytes() const override;
  // Per factor (also for a receiving job, which holds this and nothing else): the new basis
  // (n x n), the order (n 64-bit indices), the change of basis when computed (n x n).
  std::size_t result_bytes() const override;
  void save_result(std::span<std::byte> image) const override;
  void load_result(std::span<const std::byte> image) override;

  bool full() const noexcept { return from_version_ == 0; }
  bool receiving() const noexcept { return receiving_; }
  std::int64_t from_version() const noexcept { return from_version_; }
  std::int64_t snapshot_stamp() const noexcept override { return from_version_; }
  // Results, valid after a successful run().
  linalg::ConstMatrixView<T> new_basis(Side s) const noexcept { return side(s).new_basis.view(); }
  // New column k is column order[k] of the snapshot's basis (identity for full jobs and for
  // EigenvalueOrder::keep).
  std::span<const index> order(Side s) const noexcept { return side(s).order; }
  // C = Q_newᵀ Q_snapshot; empty unless requested.
  linalg::ConstMatrixView<T> change_of_basis(Side s) const noexcept { return side(s).change.view(); }

 private:
  struct Factor {
    index n = 0;  // the factor's size (n x n), also for receiving jobs, which hold no statistics
    linalg::Matrix<T> stats;
    linalg::Matrix<T> basis;  // empty for full jobs
    linalg::Matrix<T> new_basis;  // sized by run(), on the worker
    linalg::Matrix<T> change;     // empty unless requested; sized by run()
    std::vector<index> order;
    SnapshotPin stats_pin{};  // after stats and basis: released first
    SnapshotPin basis_pin{};
  };
  const Factor& side(Side s) const noexcept { return factors_[static_cast<std::size_t>(s)]; }
  Status run_one(Factor& f, const char* which);

  std::int64_t from_version_;
  linalg::EigenvalueOrder ordering_;
  linalg::Orthogonalization method_;
  bool compute_change_of_basis_;
  bool receiving_ = false;
  std::array<Factor, 2> factors_;
};

// What SOAP and KL-Shampoo snapshot for a refresh, and how their jobs are set up.
template <Real T>
struct EigenbasisSnapshot {
  Step stats_step = 0;
  std::int64_t from_version = 0;
  linalg::ConstMatrixView<T> left_stats, right_stats, left_basis, right_basis;
  linalg::EigenvalueOrder ordering = linalg::EigenvalueOrder::descending;
  linalg::Orthogonalization method = linalg::Orthogonalization::householder;
  bool compute_change_of_basis = false;
};
// `spare` refilled when it is an eigenbasis job of the block (its buffers kept), a new job otherwise.
template <Real T>
std::unique_ptr<RefreshJob<T>> take_eigenbasis_snapshot(ops::Device& device, const EigenbasisSnapshot<T>& snapshot,
                                                        std::unique_ptr<RefreshJob<T>> spare);
// The receiving job for the same snapshot point (only the statistics' sizes are read), `spare`
// reused the same way.
template <Real T>
std::unique_ptr<RefreshJob<T>> take_eigenbasis_receiver(const EigenbasisSnapshot<T>& snapshot,
                                                        std::unique_ptr<RefreshJob<T>> spare);

}  // namespace asteria::optim

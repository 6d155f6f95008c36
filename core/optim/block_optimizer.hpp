#pragma once
// The contract every optimizer implements per block, split so a runtime can move the
// expensive part off the training critical path:
//
//   accumulate  — cheap, every step: fold the gradient into statistics.
//   refresh     — expensive, every `precondition_frequency` steps: snapshot() copies what the
//                 refresh needs into a RefreshJob; job.run() computes the new preconditioner
//                 touching only the job's own data (any thread, any time); publish() installs
//                 the result into the block's active state at a step boundary.
//   apply       — cheap, every step: update the weights with the active preconditioner.
//
// The synchronous schedule of step t (TensorOptimizer, the reference every runtime must match
// when staleness is 0) is, per block:
//   accumulate(device, g, t);
//   if (refresh_due(t)) { job = snapshot(device, t); job->run(); }
//   if activation_delay() == 0: publish(device, job) now          (Shampoo: the step's update uses it)
//   apply(device, w, g, t);
//   if activation_delay() == 1: publish(device, job) after apply  (SOAP: the next step uses it)
// A runtime with staleness bound S publishes the same job at most S steps later.
//
// Accumulate, apply and publish are written once, as device operations (core/ops/device.hpp), and
// run on the device whose memory holds the block's state and the step's weights and gradient:
// every view they receive (weights, gradient, the state's tensors) is that device's memory. A
// refresh job runs on the host: snapshot() downloads what it needs, publish() uploads its result.
#include <cstdint>
#include <cstddef>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "core/common/status.hpp"
#include "core/linalg/matrix.hpp"
#include "core/linalg/symmetric_solver.hpp"
#include "core/ops/device.hpp"
#include "core/optim/block_state.hpp"
#include "core/platform/cost.hpp"

namespace asteria::optim {

using Step = std::int64_t;  // 1-based training step

template <Real T>
class RefreshJob {
 public:
  explicit RefreshJob(Step stats_step) : stats_step_(stats_step) {}
  virtual ~RefreshJob() = default;
  RefreshJob(const RefreshJob&) = delete;
  RefreshJob& operator=(const RefreshJob&) = delete;

  // The expensive computation. Must not touch the block it came from. A non-ok status means
  // the block keeps its previous preconditioner (publish() is then not called).
  virtual Status run() = 0;
  // Pieces of work run() performs, for hardware models (e.g. two eigendecompositions).
  virtual std::vector<platform::Cost> cost() const = 0;
  // Independent parts of run() (a factor each) that may run on different workers at once:
  // run_part(p) for every p in [0, parts()), in any order or at the same time, is run(), and a
  // failed part fails the job. part_cost(p) is part p's pieces of cost(). One part by default.
  virtual int parts() const { return 1; }
  virtual Status run_part(int /*part*/) { return run(); }
  virtual std::vector<platform::Cost> part_cost(int /*part*/) const { return cost(); }
  // Bytes the job holds (snapshot and result), for memory accounting of shadow buffers.
  virtual std::size_t bytes() const = 0;

  // The result as bytes, so that data-parallel ranks share one rank's refresh instead of each
  // running it: its size (from the snapshot's shapes, known before run()), written by the rank
  // that ran it after a successful run(), and read instead of run() by the others, after which
  // the job publishes exactly as if it had run here. 0: the result cannot travel (every rank
  // runs the job).
  virtual std::size_t result_bytes() const { return 0; }
  virtual void save_result(std::span<std::byte> /*image*/) const {}
  virtual void load_result(std::span<const std::byte> /*image*/) {}
  // False for jobs of shapes only (data-free runs): their result moves as bytes without values.
  virtual bool has_values() const { return true; }

  Step stats_step() const noexcept { return stats_step_; }
  // Where run() and run_part() solve their factorizations (linalg/symmetric_solver.hpp): the
  // host's until told otherwise (a refresh on a device runs the device's). Null: the host's.
  void solve_with(const linalg::SymmetricSolver* solver) noexcept { solver_ = solver != nullptr ? solver : &host_solver_; }
  // The block counter the snapshot was taken at (a basis version, a statistics count): with
  // stats_step(), what BlockOptimizer::resumed() needs to rebuild the job around its result.
  virtual std::int64_t snapshot_stamp() const noexcept { return 0; }

 protected:
  // For jobs refilled by BlockOptimizer::snapshot_reusing.
  void restamp(Step stats_step) noexcept { stats_step_ = stats_step; }
  const linalg::SymmetricSolver& solver() const noexcept { return *solver_; }

 private:
  Step stats_step_;
  linalg::SymmetricSolver host_solver_;
  const linalg::SymmetricSolver* solver_ = &host_solver_;
};

template <Real T>
class BlockOptimizer {
 public:
  virtual ~BlockOptimizer() = default;
  BlockOptimizer(const BlockOptimizer&) = delete;
  BlockOptimizer& operator=(const BlockOptimizer&) = delete;

  virtual std::string_view name() const noexcept = 0;
  index rows() const noexcept { return rows_; }
  index cols() const noexcept { return cols_; }

  // Phase 1. `grad` is finite (the caller checks).
  virtual void accumulate(ops::Device& device, linalg::ConstMatrixView<T> grad, Step t) = 0;

  // Phase 2. Optimizers without a refresh keep the defaults.
  // The refresh schedule is one pure function of how many gradients the block's statistics have
  // absorbed (optim::refresh_due_after), so a runtime can follow it without the block's numerics
  // (the preconditioner service counts accumulates itself) and without a twin of the block.
  virtual std::int64_t statistics_updates() const noexcept { return 0; }  // accumulate calls so far
  virtual bool refresh_due_after(std::int64_t /*statistics_updates*/) const { return false; }
  // Whether a refresh is due now, after this step's accumulate.
  bool refresh_due(Step /*t*/) const { return refresh_due_after(statistics_updates()); }
  virtual std::unique_ptr<RefreshJob<T>> snapshot(ops::Device& /*device*/, Step /*t*/) const { return nullptr; }
  // snapshot(t), refilling `spare` (a resolved job of this block, or null) when it fits, so
  // that the shadow buffers of a long run are allocated once: snapshots happen on the training
  // thread, and fresh multi-megabyte buffers cost it page faults on every refresh.
  virtual std::unique_ptr<RefreshJob<T>> snapshot_reusing(ops::Device& device, Step t,
                                                          std::unique_ptr<RefreshJob<T>> /*spare*/) const {
    return snapshot(device, t);
  }
  // The job of a data-parallel rank that does not own the block's refresh: at the same snapshot
  // point, it only receives the owner's result (RefreshJob::load_result) and publishes it, so
  // it needs no copy of the statistics and holds only the result's bytes. It never runs. Every
  // optimizer with a refresh overrides it (a receiver reads no values: no device).
  virtual std::unique_ptr<RefreshJob<T>> receiver(Step /*t*/, std::unique_ptr<RefreshJob<T>> /*spare*/) const {
    return nullptr;
  }
  // The job snapshotted at `stats_step` with `stamp` (RefreshJob::snapshot_stamp), rebuilt
  // without its snapshot so that its result, loaded by load_result() (from a checkpoint), is
  // published exactly as the job that ran would have been. Null: blocks without refreshes.
  virtual std::unique_ptr<RefreshJob<T>> resumed(Step /*stats_step*/, std::int64_t /*stamp*/) const { return nullptr; }
  virtual void publish(ops::Device& /*device*/, RefreshJob<T>& /*finished*/) {}
  virtual int activation_delay() const noexcept { return 0; }

  // Phase 3. Never writes a non-finite value to the weights or the state. Returns false when the
  // update was non-finite: the matrix methods (Shampoo, SOAP, KL-Shampoo, Muon) then leave the
  // whole block untouched; AdamW, one pass over memory, leaves untouched the elements whose
  // update was non-finite and updates the others.
  [[nodiscard]] virtual bool apply(ops::Device& device, linalg::MatrixView<T> weights, linalg::ConstMatrixView<T> grad,
                                   Step t) = 0;

  // All persistent state (moments, statistics, roots, bases, counters) as plain data.
  BlockState<T>& state() noexcept { return state_; }
  const BlockState<T>& state() const noexcept { return state_; }

 protected:
  BlockOptimizer(index rows, index cols) : rows_(rows), cols_(cols) {}
  BlockState<T> state_;

 private:
  index rows_ = 0;
  index cols_ = 0;
};

}  // namespace asteria::optim

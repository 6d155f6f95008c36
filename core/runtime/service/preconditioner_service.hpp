#pragma once
// The asynchronous preconditioner service: refreshes run on the platform's host workers while
// training goes on; their results wait in the job (the shadow buffer) and are installed into
// the block's active state at a publication point, at most S steps after the synchronous
// optimizer (optim::TensorOptimizer) would have installed them.
//
// Step driver (all calls on one thread, the training loop's; only RefreshJob::run() runs on
// worker threads):
//
//   service.on_step_begin(t);
//   for every block b (any order):  proceed[b] = service.after_backward(b, grad_b, t);
//   for every block b with proceed[b]:  service.apply(b, weights_b, grad_b, t);
//        (or: service.before_update(b, t); then the driver's own block.apply + checks)
//   StepMetrics m = service.on_step_end(t);
//   ... after the last step T, optionally service.settle() (see below).
//
// A step plan's ops call the phases one by one instead (after_backward is exactly this sequence):
//   [delay 1: publication_point(b, t)]; if (accumulate(b, grad, t)) submit_refresh(b, t, tag);
//   [delay 0: publication_point(b, t)]; if not skipped: apply(b, weights, grad, t).
//
// The refresh schedule is the block's own (BlockOptimizer::refresh_due_after), evaluated on the
// service's count of the gradients the block accumulated, so it holds whether or not the block's
// numerics run (set_block_numerics; shape-only blocks count the same way).
//
// Steps are the driver's 1-based training steps, strictly increasing. after_backward applies
// the non-finite gradient policy (false: the block skips this step — no statistics, no
// update), then accumulates, then, if the block's refresh is due, snapshots it and submits the
// job to platform.host_workers() as Work{"refresh <label>", cost, job->run()}.
//
// Publication points. A job snapshotted at step s by a block with activation delay d is what the
// synchronous optimizer serves from step a = s + d on (d = 0: the update of step s; d = 1: the
// statistics and update of step s + 1). Each block has one publication point per step t:
//   d = 0: in before_update(b, t), immediately before the block's update of step t;
//   d = 1: in after_backward(b, ·, t), immediately before the block's accumulate of step t
//          (KL-Shampoo's accumulate reads the basis, so the basis must change before it).
// A block that skips step t (non-finite gradient) still passes its point of step t.
//   deterministic: at the point of step t, every job with a + S <= t is installed, oldest
//       first, waiting for each that has not finished; so with S = 0 the order of accumulate,
//       snapshot, publish and apply is exactly TensorOptimizer's.
//   opportunistic: at the point of step t, the jobs with a <= t are eligible; the newest one
//       with a + S <= t, if any, is waited for; then the newest eligible job that finished ok is
//       installed and the older ones are dropped (superseded). Never earlier than the
//       synchronous optimizer, never more than S steps later.
// Each wait for a late job is visible optimizer time (StepMetrics::visible_wait_s).
//
// Shadow memory. A job's snapshot and result buffers (RefreshJob::bytes()) are held on the host
// tier from its snapshot until it is resolved, and then while they serve as the block's spare
// (the next snapshot refills them): the service reserves them in the host budget
// (Memory::reserve: counted, no second buffer), so peak host bytes include them and a snapshot
// that does not fit throws PlacementError naming the host tier, the bytes and the budget. Under
// the opportunistic policy, superseded jobs still running are waited for first.
//
// Shadow pool. A run sets aside a bounded pool for those buffers beforehand (set_aside_shadow;
// shadow_bound.hpp sizes it by the jobs that can be in flight, not one job per block), so that
// the state store leaves it free and a run whose pool cannot fit is refused before it starts. A
// snapshot that the pool cannot hold applies back-pressure, in this order, until it fits:
//   1. spares are given up, the least recently filled first (the buffers are freed);
//   2. superseded jobs that finished are dropped;
//   3. finished jobs are installed early: a block's oldest job once the block has made its last
//      use of the previous preconditioner before the point of step p where the policy would
//      install the job (p = due, deterministic; p = a, opportunistic): delay 1, its update of
//      step p − 1; delay 0, its refresh op of step p (a snapshot reads the previous root). The
//      numbers are those of installing it at its point, as nothing reads the preconditioner in
//      between. Only where the block's state may be changed away from its own ops
//      (allow_installs_anywhere, or no block numerics: nothing touched);
//   4. the oldest job whose end would allow 2 or 3 is waited for (visible optimizer time, also
//      counted as StepMetrics::pool_wait_s), and the steps repeat.
// Only jobs whose block still uses the previous preconditioner, and the snapshot's own, remain
// then; the pool's size covers them (shadow_bound.hpp), so the snapshot never waits for its own
// step's progress (no deadlock). Should nothing be left to wait for, the buffers are taken from
// the host tier beyond the pool when it has them (StepMetrics::pool_overflow_bytes), else the
// PlacementError above. An early install is counted (published, early_installs) in the step it
// happens in; the block's version records the step of its point.
// Failures. A job whose run() fails (or throws) keeps the previous preconditioner; it is
// counted when it is resolved (at its point in the deterministic policy), and more than
// max_consecutive_refresh_failures in a row for one block throw NumericalError naming the
// block. Consecutive counts reset on a successful publication. A failing delay-1 job is thus
// reported one step boundary later than TensorOptimizer reports it (after the update of step s
// instead of before); parameters and counts are otherwise the same.
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/linalg/matrix.hpp"
#include "core/optim/block_optimizer.hpp"
#include "core/platform/platform.hpp"
#include "core/runtime/service/refresh_sharing.hpp"
#include "core/runtime/service/service_options.hpp"
#include "core/runtime/store/tier_set_aside.hpp"

namespace asteria::runtime {

using BlockId = std::size_t;

template <linalg::Real T>
class PreconditionerService {
 public:
  // Throws InputError for invalid options.
  PreconditionerService(platform::Platform& platform, ServiceOptions options);
  // Waits for every job still running (their work reads the jobs this service owns).
  ~PreconditionerService();
  PreconditionerService(const PreconditionerService&) = delete;
  PreconditionerService& operator=(const PreconditionerService&) = delete;

  // `block` must outlive the service. `label` names the block in errors and work labels.
  BlockId register_block(optim::BlockOptimizer<T>& block, std::string label);

  // On (the default): accumulate, publish and apply run the blocks' numerics. Off: the service
  // keeps the schedule, snapshots the statistics as they are and runs the refresh jobs, but leaves
  // the blocks' values alone (their device numerics are emulated). Change it between steps.
  void set_block_numerics(bool on);
  bool block_numerics() const noexcept { return block_numerics_; }

  void on_step_begin(Step t);
  // Non-finite policy, publication point (delay 1), accumulate, snapshot and submit. Returns
  // false when the block skips step t (non-finite gradient); it must then not be updated.
  [[nodiscard]] bool after_backward(BlockId b, linalg::ConstMatrixView<T> grad, Step t);

  // The phases of after_backward and apply, one at a time (see the top of this file).
  // The block's publication point of step t (idempotent within a step).
  void publication_point(BlockId b, Step t);
  // The non-finite policy, then the gradient folded into the statistics. False: the block skips
  // step t (no statistics, no refresh, no update; its publication point still passes).
  // `known_finite`: the caller found the gradient finite already (a whole layer's at once, one
  // device synchronization instead of one per block).
  [[nodiscard]] bool accumulate(BlockId b, linalg::ConstMatrixView<T> grad, Step t, bool known_finite = false);
  // Snapshots and submits a refresh if one is due after this step's accumulate; `tag` names the
  // plan op on the job's Work. True when a job was submitted.
  bool submit_refresh(BlockId b, Step t, const platform::OpTag& tag = {});
  // Publication point (delay 0): installs what must be active for the update of step t, waiting
  // for late jobs. Idempotent within a step.
  void before_update(BlockId b, Step t);
  // before_update, then the block's update; throws NumericalError (weights unchanged) when the
  // update is non-finite.
  void apply(BlockId b, linalg::MatrixView<T> weights, linalg::ConstMatrixView<T> grad, Step t);
  StepMetrics on_step_end(Step t);

  // At the boundary after the last step T (no step in progress): installs what the policy
  // installs at the delay-1 points of step T + 1, waiting if needed, so that with S = 0 every
  // block's state equals the synchronous optimizer's after step T. Training may continue after
  // it. Returns the seconds waited (added to the totals).
  platform::Seconds settle();

  // How many steps the preconditioner block b uses at step t lags behind the one the
  // synchronous optimizer would use: 0 when no unresolved job has a <= t, else t − a + 1 for
  // the oldest unresolved job's activation step a (a job still running counts as if it will
  // succeed). Sampled at each update; at most S.
  Step staleness(BlockId b, Step t) const;

  const BlockVersion& version(BlockId b) const { return block(b).version; }
  const std::string& label(BlockId b) const { return block(b).label; }
  std::size_t block_count() const noexcept { return blocks_.size(); }
  // Jobs of block b submitted and not yet resolved.
  std::size_t in_flight(BlockId b) const { return block(b).jobs.size(); }

  // Data-parallel ranks share refreshes (refresh_sharing.hpp): `owner_of_block[b]` (a world rank
  // of `comm`, which outlives the service) runs block b's jobs; every other rank holds a
  // receiving job (BlockOptimizer::receiver: no statistics copied, the result's bytes only) and
  // receives the result, sent once per job at the end of the first step from the submitting
  // one on that is a multiple of `sync_period` (the collective then waits for the owner's job;
  // every later step of the bound overlaps the broadcast), and at the latest at the end of the
  // last step before the result is due for publication (the submitting step itself when it is
  // due there). Every rank must register the same blocks, call this
  // with the same arguments, and run the same steps. Call before the first step.
  void share_refreshes(platform::Comm& comm, std::vector<int> owner_of_block, int sync_period);
  // Jobs this rank ran and results it received, so far.
  std::int64_t refreshes_run_here() const noexcept { return run_here_; }
  std::int64_t refreshes_received() const noexcept { return received_; }

  // Checkpoints (core/checkpoint), between steps. save_block() finishes the block's jobs in
  // flight (a shared result not yet exchanged is exchanged now: every rank saves at the same
  // step, blocks in the same order) and returns its bookkeeping (the refresh schedule's count,
  // the points passed, its version) and every unresolved job as its snapshot step, activation
  // and due steps, stamp (RefreshJob::snapshot_stamp), outcome and result. restore_block(), on
  // a service whose blocks are registered and that has run no step, rebuilds the jobs around
  // their results (BlockOptimizer::resumed), resolved as saved: each is installed at the point it
  // would have been, so a run resumed from the image continues bit for bit. The block's own
  // state (statistics, bases) is the caller's to restore. InputError names `source` for an
  // image of another block, optimizer or staleness bound.
  std::vector<std::byte> save_block(BlockId b);
  void restore_block(BlockId b, std::span<const std::byte> image, const std::string& source);
  // The service's step count and totals; superseded jobs still running are waited for first.
  std::vector<std::byte> save_totals();
  void restore_totals(std::span<const std::byte> image, const std::string& source);

  // The shadow pool: host room for the jobs' buffers, kept free by a state store that is told of
  // it (StateStore::keep_free); `bytes` as shadow_bound.hpp sizes it. 0 (the default): no pool,
  // the host tier's budget alone bounds the buffers.
  void set_aside_shadow(std::size_t bytes) noexcept { shadow_.set_bytes(bytes); }
  const TierSetAside& shadow_room() const noexcept { return shadow_; }
  // Where each block's state rests now (a state store's location), so that its math runs on the
  // device that addresses it (Platform::math); unset: the device tier for every block. The
  // views passed to accumulate and apply are that device's memory.
  void locate_states(std::function<platform::Tier(BlockId)> state_tier) { state_tier_ = std::move(state_tier); }
  // Whether block b's state may be changed by an early install while the block is away from its
  // own ops (its state never moves, or holds no values); off by default.
  void allow_installs_anywhere(BlockId b, bool allowed) { block(b).installs_anywhere = allowed; }
  // Blocks installed early (back-pressure) since the last call, in install order: the caller
  // charges their installs' work.
  std::vector<BlockId> take_early_installs() { return std::exchange(early_installed_, {}); }

  const ServiceOptions& options() const noexcept { return options_; }
  const ServiceTotals& totals() const noexcept { return totals_; }
  const std::vector<StepMetrics>& history() const noexcept { return history_; }
  Step last_step() const noexcept { return last_step_; }

 private:
  struct Job {
    std::unique_ptr<optim::RefreshJob<T>> job;
    platform::Pending done;
    Step active_from = 0;  // a = s + d
    Step due = 0;          // a + S
    bool seen_finished = false;
    std::uint64_t sequence = 0;  // submission order: back-pressure waits for the oldest
    std::size_t bytes = 0;  // read at submit: the job's own thread may be writing it later
    TierSetAside::Hold shadow;  // its bytes, held on the host while its buffers live
    // Shared refreshes: the result's bytes travel from the owner; `done` is then this rank's end
    // of the exchange (invalid until it is issued at `exchange_step`), `produced` the owner's run.
    int owner = -1;  // -1: not shared
    Step exchange_step = 0;
    platform::Pending produced;
    std::vector<std::byte> image;
  };
  struct Block {
    optim::BlockOptimizer<T>* optimizer = nullptr;
    std::string label;
    BlockId id = 0;
    int delay = 0;
    std::deque<Job> jobs;  // unresolved, in snapshot order
    std::unique_ptr<optim::RefreshJob<T>> spare;  // a resolved job whose buffers the next snapshot refills
    TierSetAside::Hold spare_shadow;              // the spare's bytes on the host
    std::uint64_t spare_age = 0;                  // when it became the spare (its key in spares_)
    bool installs_anywhere = false;               // allow_installs_anywhere
    std::int64_t statistics_updates = 0;  // gradients accumulated (drives the refresh schedule)
    Step accumulated_step = 0;  // step of the last accumulate
    Step backward_step = 0;   // step of the last after_backward (or accumulate)
    Step skipped_step = 0;    // step the block last skipped
    Step point_step = 0;      // step of the last publication point passed
    Step prepared_step = 0;   // step of the last before_update
    Step updated_step = 0;    // step of the last update (apply)
    Step refreshed_step = 0;  // step of the last refresh op (its snapshot, if one was due)
    BlockVersion version;
  };
  // Where block b's per-step math runs: the platform's device for the tier its state rests on.
  ops::Device& math(const Block& b) {
    return platform_.math(state_tier_ ? state_tier_(b.id) : platform::Tier::device);
  }

  Block& block(BlockId b);
  const Block& block(BlockId b) const;
  void require_step(Step t, const char* hook) const;
  void reach_point(Block& b, Step t);
  void publish_due(Block& b, Step t, platform::Seconds& waited);
  void publish_deterministic(Block& b, Step t, platform::Seconds& waited);
  void publish_opportunistic(Block& b, Step t, platform::Seconds& waited);
  void wait_for(Job& job, platform::Seconds& waited);
  bool finished(Job& job);
  void install(Block& b, Job& job, Step t);
  void record_failure(Block& b, const Status& status);
  void submit(Block& b, Step t, const platform::OpTag& tag);
  // `copied`: the fence the job's works wait for before reading its snapshot (null: landed).
  platform::Pending run_job(optim::RefreshJob<T>& job, const std::string& label, std::vector<std::byte>& image, Step t,
                            const platform::OpTag& tag, std::shared_ptr<ops::Fence> copied = nullptr);
  TierSetAside::Hold hold_shadow(const Block& b, std::size_t bytes, Step t);
  void keep_as_spare(Block& b, Job& job);
  void drop_spare(Block& b);
  Job pop_job(Block& b, std::size_t i);
  void reap_superseded();
  // Shadow pool (shadow_pool.cpp).
  void make_pool_room(std::size_t bytes);
  bool resolve_early(Block& b);
  bool past_last_use(const Block& b, const Job& job) const;
  Job* oldest_job_to_wait_for();
  void note_pool_use();
  void wait_all() noexcept;
  void exchange(Job& job, const std::string& label, Step t);

  platform::Platform& platform_;
  ServiceOptions options_;
  std::function<platform::Tier(BlockId)> state_tier_;  // null: every state on the device tier
  TierSetAside shadow_;  // before the jobs: outlives their holds
  std::vector<std::unique_ptr<Block>> blocks_;
  std::vector<Job> superseded_;  // dropped jobs whose work still runs
  std::set<std::pair<std::uint64_t, BlockId>> spares_;  // blocks holding a spare, by age
  std::uint64_t next_sequence_ = 0;
  std::int64_t unresolved_jobs_ = 0;  // over every block's deque
  std::vector<BlockId> early_installed_;
  ServiceTotals totals_;
  std::vector<StepMetrics> history_;
  StepMetrics current_;
  bool in_step_ = false;
  bool block_numerics_ = true;
  Step last_step_ = 0;
  platform::Comm* comm_ = nullptr;  // sharing refreshes when set
  std::vector<int> owner_of_;
  int sync_period_ = 1;
  std::int64_t run_here_ = 0;
  std::int64_t received_ = 0;
};

}  // namespace asteria::runtime

#pragma once
// How much host memory the preconditioner service's shadow state (refresh jobs' snapshot and
// result buffers) needs: the size of the bounded pool those buffers come from, which a run sets
// aside before it starts (the state store keeps it free, so a run whose pool does not fit is
// refused at placement) and which the service never passes while it can wait instead.
//
// One block, no early installation. A job snapshotted at step s by a block with activation
// delay d is resolved (published, or counted as failed) at the block's publication point of step
// s + d + S at the latest: the deterministic policy installs it exactly there, the opportunistic
// one no later. With d = 0 that point follows step t's snapshot, with d = 1 it precedes it;
// either way, right after the snapshot of step t the jobs alive are those snapshotted at steps
// t − S .. t. A block accumulates at most once a step, so those S + 1 steps span at most S + 1
// consecutive counts of accumulated gradients, and the jobs alive are at most the refreshes its
// schedule makes due in S + 1 consecutive counts (max_live_refresh_jobs). Summed over every
// block this is the most the jobs can hold if every block refreshes at once (they do: one
// schedule for all) and none is installed before its point.
//
// The pool. The service may install a finished job before its point (PreconditionerService,
// "Shadow pool") once its block has made its last use of the previous preconditioner: the
// numbers are the same, as nothing reads it between that use and the point. With S = 0 that use
// comes in the job's own step (the block's update of it, delay 1; its refresh op, delay 0), so a
// job only stays unresolvable while the plan has issued the block's refresh and not yet its
// update (plan::blocks_refreshed_before_update). With S >= 1 the last use comes one or more steps
// later, and a delay-1 result that travels between data-parallel ranks arrives at a step
// boundary: such blocks keep their per-block bound. So the jobs that must be able to be in flight
// at once are (the in-flight bound, the pool's least size):
//   those of blocks keeping their per-block bound, plus, of the others, the worst set refreshed
//   and not yet updated and the jobs of as many of the largest blocks as there are host workers
//   (the workers find jobs queued while the issuer waits for one to finish), never more than
//   their per-block sum.
// Beyond it, a pool up to the per-block sum (every job that can await its point, no
// back-pressure) lets more refreshes overlap the steps: the pool takes the host room the
// state leaves free, up to that sum (shadow_pool_bytes). Not covered: under the opportunistic
// policy a job superseded by a newer one before it finished keeps its buffers until it does; the
// service then waits for such jobs when the pool runs out.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/optim/hyperparameters.hpp"
#include "core/platform/execution.hpp"

namespace asteria::runtime {

// The most refresh jobs of one block alive at once (see above) under staleness S; 0 for
// optimizers that never refresh.
std::int64_t max_live_refresh_jobs(optim::OptimizerKind kind, const optim::Hyperparameters& hp, int staleness);

// One block's refresh jobs, as the pool sees them.
struct ShadowDemand {
  std::size_t job_bytes = 0;   // one job's buffers (a receiving job's: its result's); 0: no refreshes here
  std::int64_t live_jobs = 0;  // max_live_refresh_jobs
  int activation_delay = 0;
  bool shared = false;  // its result travels between data-parallel ranks (refresh sharing)
};

struct ShadowPoolSizing {
  int host_workers = 1;
  int staleness = 0;
  // Whether the service may install a job while its block is away from its own optimizer ops
  // (PreconditionerService::allow_installs_anywhere): without it every block keeps its per-block
  // bound.
  bool early_installs = true;
};

struct ShadowPoolBounds {
  std::size_t in_flight = 0;  // the least pool that never deadlocks and keeps the workers busy
  std::size_t per_block = 0;  // every job that can await its point at once (>= in_flight)
};

// The bounds for `blocks` (indexed like the plan's blocks), given the plan's sets of blocks
// refreshed and not yet updated (plan::blocks_refreshed_before_update).
ShadowPoolBounds shadow_pool_bounds(std::span<const ShadowDemand> blocks,
                                    const std::vector<std::vector<int>>& refreshed_before_update,
                                    const ShadowPoolSizing& sizing);

// The pool a run sets aside: the in-flight bound, plus as much of the host room the state leaves
// free (`host_room`, after a placement that keeps the in-flight bound free) as brings it to the
// per-block sum.
std::size_t shadow_pool_bytes(const ShadowPoolBounds& bounds, std::size_t host_room);

// Whether a run's refresh installs may happen away from the blocks' own ops throughout: they
// touch no values (data-free numerics, or refresh numerics without a warm-up that computes),
// or every block's state stays where it is (`state_pinned`: placed where it is updated and never
// moved, so changing it from the service's thread races with no move).
bool installs_anywhere(platform::Numerics numerics, int warmup_steps, bool state_pinned);

}  // namespace asteria::runtime

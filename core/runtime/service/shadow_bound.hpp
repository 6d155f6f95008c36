#pragma once
// How much host memory the preconditioner service's shadow state (refresh jobs' snapshot and
// result buffers) can need at once, for the room a run sets aside before it starts.
//
// The bound. A job snapshotted at step s by a block with activation delay d is resolved
// (published, or counted as failed) at the block's publication point of step s + d + S at the
// latest: the deterministic policy installs it exactly there, the opportunistic one no later.
// With d = 0 that point follows step t's snapshot, with d = 1 it precedes it; either way, right
// after the snapshot of step t the jobs alive are those snapshotted at steps t − S .. t. A block
// accumulates at most once a step, so those S + 1 steps span at most S + 1 consecutive counts of
// accumulated gradients, and the jobs alive are at most the refreshes its schedule makes due in
// S + 1 consecutive counts. A resolved job's buffers stay with the block as its spare (the next
// snapshot refills them) and take a resolved job's place, so they never add to the count.
// Not covered: under the opportunistic policy a job superseded by a newer one before it finished
// keeps its buffers until it does; the service then waits for such jobs when the room runs out.
#include <cstddef>
#include <cstdint>

#include "core/optim/hyperparameters.hpp"

namespace asteria::runtime {

// The most refresh jobs of one block alive at once (see above) under staleness S; 0 for
// optimizers that never refresh.
std::int64_t max_live_refresh_jobs(optim::OptimizerKind kind, const optim::Hyperparameters& hp, int staleness);

}  // namespace asteria::runtime

#pragma once
// One typed operation of a training step: what it does (its kind), to which layer, micro-batch,
// optimizer block or gradient bucket, on which resource its time is charged, what it declares it
// costs (a transfer: the bytes it moves between its two tiers), and which earlier operations of
// the step must have finished before it starts.
// A StepPlan (step_plan.hpp) is a list of them in issue order; one interpreter runs any plan.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/platform/cost.hpp"
#include "core/platform/memory.hpp"

namespace asteria::plan {

using OpId = std::int32_t;  // index of an op in its step plan

enum class OpKind {
  forward,     // forward(layer, micro-batch) on the device stream
  backward,    // backward(layer, micro-batch); the layer's gradient exists after its last micro-batch
  // All-reduce (average) of a gradient bucket among data-parallel ranks: its layers' gradients
  // as one buffer, or, when the bucket lists blocks (sharded gradients: blocks too large for an
  // even share of a reduce-scatter), those blocks' gradients packed in block order.
  reduce,
  prefetch,    // start moving a block's state to where its update runs (a hint to the store)
  acquire,     // the block's state is resident where its update runs (waits for the move)
  release,     // the block's update is done: its state may move again (dirty)
  publish,     // the block's publication point: install the finished refreshes the policy allows
  accumulate,  // the non-finite gradient check, then the gradient folded into the block's statistics
  refresh,     // snapshot the block's statistics and submit a refresh job, if one is due
  update,      // the block's weights updated with its active preconditioner (on the device or host)
  // Bytes moved between memory tiers (its payload says what): a block's gradient down before a
  // host update and its new weights back after it; or, for a layer (block -1), its weights
  // fetched from where they rest before a use, its gradient sent to where gradients rest, an
  // activation checkpoint sent away after a forward and fetched back before the backward.
  // Data-free: the numbers travel on the numerics' own path; the op charges the move's time
  // (Memory::transfer).
  transfer,
  // Sharded optimizer state: the new weights of a gradient bucket's blocks, each from the rank
  // that owns (and updated) it, to every data-parallel rank: one all-gather, each rank's blocks
  // of the bucket packed in block order and padded to the largest rank's share.
  // ZeRO-3/FSDP also gathers a layer's weights this way before each run of its visits (each
  // visit of a micro-batch in the horizontal schedule), its blocks then being its layer's.
  gather,
  // Sharded gradients (ZeRO-2, FSDP): the average of a gradient bucket's blocks' gradients over
  // the data-parallel ranks, each block's only to the rank that owns it: one reduce-scatter, each
  // rank's blocks packed in block order and padded to the largest rank's share.
  scatter,
};
inline constexpr int kOpKindCount = 13;

// Where an op's time is charged: the device stream (in order), the host worker pool, the thread
// that issues the plan (bookkeeping and waits), the data-parallel network, or the link between
// the memory tiers of a transfer.
enum class Resource { device, host, issuer, network, link };

// What a transfer op moves.
enum class Payload { gradient, weights, checkpoint };

std::string_view to_string(OpKind kind) noexcept;
std::string_view to_string(Resource resource) noexcept;
std::string_view to_string(Payload payload) noexcept;
// Inverses of to_string; throw InputError naming `source` and `field` for unknown names.
OpKind parse_op_kind(std::string_view text, const std::string& source, const std::string& field);
Resource parse_resource(std::string_view text, const std::string& source, const std::string& field);
Payload parse_payload(std::string_view text, const std::string& source, const std::string& field);

// Kinds that act on one optimizer block (their `block` is set): every kind but forward,
// backward and the collectives; a transfer may instead move a layer's tensors (block -1).
bool is_block_op(OpKind kind) noexcept;
// Collectives among the data-parallel ranks (on the network, naming a bucket): reduce, gather,
// scatter.
bool is_collective_op(OpKind kind) noexcept;
// Optimizer phases whose numerics touch the block's values (run inside a launch's body when
// device numerics run): publish, accumulate, refresh, update.
bool is_optimizer_op(OpKind kind) noexcept;

struct Op {
  OpKind kind = OpKind::forward;
  Resource on = Resource::device;
  int layer = -1;        // forward, backward and every block op: the driver layer
  int micro_batch = -1;  // forward, backward
  int block = -1;        // block ops: index into the plan's blocks
  int bucket = -1;       // reduce, gather, scatter: index into the plan's buckets
  // transfer: the tiers its bytes (cost.bytes()) move between; unused by other kinds.
  platform::Tier from = platform::Tier::device;
  platform::Tier to = platform::Tier::device;
  Payload payload = Payload::gradient;  // transfer: what it moves
  // Ops of the previous step's optimizer issued during this step (an update deferred into the
  // next forward): they run with step t - 1, and not at all in a run's first step.
  bool carried = false;
  // What the op declares it costs, for models, piece by piece (a layer's matmuls and its
  // elementwise work). A publish op's cost is charged only when its point installs a refresh.
  platform::Costs cost{platform::Cost{}};
  // Ops (earlier in the plan) that must have finished before this one starts.
  std::vector<OpId> deps{};
  // Ops with the same launch go to their resource's executor as one Work (a multi-tensor kernel,
  // one host task), submitted when the plan reaches the launch's last op; -1: a Work of its own.
  int launch = -1;
  // Optimizer ops: the device launch whose body runs the op's numerics when device numerics run
  // (the preconditioner service is single-threaded, so one launch per backward hook carries the
  // numerics of all of the hook's optimizer ops, whatever resource their time is charged to).
  int hook = -1;
};

}  // namespace asteria::plan

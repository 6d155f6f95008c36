#pragma once
// The plan generators of a training step: the horizontal schedule (micro-batch after micro-batch,
// the step a framework with per-parameter backward hooks runs; ZeRO-Offload/Infinity's order) and
// the vertical schedule (GreedySnake, arXiv 2512.17570: all micro-batches of a layer before the
// next layer, the micro-batch order reversing at each layer, and a fraction of the optimizer
// update deferred into the next step's forward). Both are one builder over a visit order:
//
//   horizontal  for m: forward for l: (l, m), then backward for l = L-1..0: (l, m)
//   vertical    forward: for l: for m in snake order: (l, m);  backward: for l = L-1..0: the same
//               (the order of m reverses at every layer, across the forward/backward turn too)
//
// Each visit is a forward or backward op of layer l for micro-batch m on the device stream. After
// the last backward visit of layer l, with data-parallel ranks its gradient joins the open
// gradient bucket (reduce(bucket): the bucket's gradients averaged over the ranks, once it holds
// bucket_bytes), and then the layer's hook (with data-parallel ranks after the last backward, as
// DDP, each once its bucket's reduce is done; otherwise after the next layer's backward visits
// when the hook waits for a move of its gradient, so that the wait overlaps that backward):
//   release the device-updated blocks of the layer hooked before (once its device updates are
//   done); finish the host-updated blocks of the layer hooked D hooks before: transfer each one's
//   new weights to where weights rest (once its update is done), then release them;
//   transfer the gradient of each host-updated block of layer l down to the host (unless
//   gradients rest there already);
//   acquire the blocks of layer l;
//   per block, in block order: [publish if its optimizer activates a refresh one step late],
//   accumulate (a host-updated block's after its gradient transfer), refresh, [publish if it
//   activates at once], update;
// with sharded optimizer state, a bucket's gather (the owners' new weights of its blocks to every
// rank, one all-gather) follows the hook after its last layer's. At the step's end: release the
// device-updated blocks of the last hooked layer, finish the remaining host-updated blocks, the
// last gather.
//
// Deferred updates (defer_fraction α > 0): a fraction α of the blocks (by weight bytes, spread
// evenly over the layers) is not hooked in the backward. Their whole optimizer step (acquire,
// publish, accumulate, refresh, update, release, weight moves) runs in the NEXT step's plan,
// marked `carried` (the interpreter runs them with the previous step's number, and skips them in
// a run's first step), during the forward: the carried ops go out in layer order at the step's
// start (or defer_lookahead layers ahead), a layer's first forward (and the fetch of its weights)
// waits for them, so weights are never stale, and its carried blocks are released after it. The gradient of a deferred block is kept
// until then (the backward of its layer comes after its forward).
//
// Model state tiers. Weights, gradients and activation checkpoints rest on a tier each:
//   weights off the device: fetched (transfer weights tier -> device) before each run of
//     consecutive visits of a layer (every visit in the horizontal schedule, so each micro-batch
//     fetches every layer twice; once per layer and pass in the vertical one; a forward and the
//     backward right after it of the same layer share one fetch), at most prefetch_depth runs ahead (device
//     buffers); a device update's new weights go back to the tier, a host update's to the tier
//     unless it is the host;
//   gradients off the device: each run of backward visits of a layer ends with its gradient
//     sent to the tier (accumulated there: per micro-batch in the horizontal schedule, once per
//     layer in the vertical one); a device-updated block's gradient comes back before its update;
//   checkpoints off the device (activation checkpointing, recompute_activations): each forward
//     visit's checkpoint goes to the tier and comes back before that micro-batch's backward.
// recompute_activations charges each backward visit the layer's forward again (the recompute of
// the activations that were not kept).
//
// A block's accumulate, publish and update are charged where its update runs (the device, or the
// host workers). A layer's device-charged optimizer ops form one device launch, which also
// carries the numerics of its host-charged ones (their hook); the host-charged ops of a block
// form one host launch.
//
// D, the host release delay, is how many hooks later a layer's host-updated blocks are finished.
// The thread that issues the plan waits for a host update only when it reaches the op that needs
// it (the weights transfer), so with D > 1 the host workers run the updates of D layers while the
// next layers' backward and hooks are issued. A deferred release keeps the block acquired D - 1
// hooks longer (the step driver bounds D by the host memory that can hold them).
#include <string>
#include <string_view>
#include <vector>

#include "core/plan/step_plan.hpp"

namespace asteria::plan {

struct LayerWork {
  std::string name;
  platform::Costs forward;  // of the whole step (split evenly over the micro-batches)
  platform::Costs backward;
  double gradient_bytes = 0.0;  // the layer's gradient bucket, all-reduced under data parallelism
  double weight_bytes = 0.0;    // the layer's weights as the forward reads them (fetched when off device)
  double checkpoint_bytes = 0.0;  // its activation checkpoint for the whole step (split over micro-batches)
};

struct BlockWork {
  int layer = 0;
  std::string label;
  int activation_delay = 0;          // 0: a refresh serves the update of its own step; 1: the next step's
  Resource update_on = Resource::device;  // device or host
  platform::Cost accumulate;         // every-step costs of the block's optimizer phases
  platform::Cost apply;
  platform::Cost publish;            // installing a finished refresh
  // Bytes of the block's gradient and of its weights: what an update on the host moves over the
  // link (the gradient down before it, the new weights up after it).
  double gradient_bytes = 0.0;
  double weight_bytes = 0.0;
  // Sharded optimizer state: the data-parallel rank that owns the block's state and update
  // (-1: every rank updates it). A block another rank owns has no store or optimizer op here,
  // only a gather op receiving its new weights.
  int owner = -1;
};

enum class ScheduleOrder { horizontal, vertical };
std::string_view to_string(ScheduleOrder order) noexcept;
// "horizontal" or "vertical"; InputError naming `source` and `field` otherwise.
ScheduleOrder parse_schedule_order(std::string_view text, const std::string& source, const std::string& field);

// How data-parallel ranks share the model and its optimizer (ZeRO's stages, PyTorch FSDP):
//   ddp    everything replicated; each gradient bucket all-reduced (reduce op);
//   zero1  each block's optimizer state, refreshes and update on one rank, its owner (blocks are
//          owned whole, as Distributed Shampoo's distributors keep them); gradients all-reduced
//          as ddp; the new weights gathered from the owners after their updates (gather ops);
//   zero2  as zero1, but each bucket's gradients go only to their blocks' owners (scatter op: a
//          reduce-scatter; blocks too large for an even share of it by a reduce op of their own);
//   fsdp   as zero2, and the weights are sharded too: a unit's weights (consecutive layers
//          gathered together, as FSDP wraps modules: share_groups.hpp's fsdp_units, about
//          bucket_bytes each) are gathered from their owners before each run of visits of its
//          layers (prefetch_depth runs ahead, as the fetch of weights that rest off the device)
//          and dropped after it; no gather after the updates (the next step's first gathers
//          carry the new weights).
enum class Parallelism { ddp, zero1, zero2, fsdp };
std::string_view to_string(Parallelism parallelism) noexcept;
// Whether blocks have owners (zero1, zero2, fsdp).
bool shards_state(Parallelism parallelism) noexcept;
// Whether a bucket's gradients go to their owners only (zero2, fsdp).
bool shards_gradients(Parallelism parallelism) noexcept;

// Where the model's own tensors rest between their uses.
struct ModelStateTiers {
  platform::Tier weights = platform::Tier::device;
  platform::Tier gradients = platform::Tier::device;
  platform::Tier checkpoints = platform::Tier::device;
};

struct ScheduleOptions {
  ScheduleOrder order = ScheduleOrder::horizontal;
  int micro_batches = 1;
  int data_parallel_ranks = 1;  // > 1: a reduce (or scatter) op per gradient bucket
  // ddp: blocks have no owner; otherwise (with > 1 ranks) every block has one.
  Parallelism parallelism = Parallelism::ddp;
  // What gradients travel as in reduce and scatter ops (StepPlan::reduce_dtype): their bytes are
  // the fp32 gradients' scaled to it.
  platform::DType reduce_dtype = platform::DType::fp32;
  // Gradient buckets (data-parallel ranks): consecutive layers, in the order their gradients
  // complete, until a bucket holds at least this many bytes (DDP's bucket_cap_mb, 25 MiB by
  // default); 0: one bucket per layer.
  double bucket_bytes = 25.0 * 1024 * 1024;
  // This rank (world) when blocks have owners. zero1, zero2: the new weights of groups of
  // consecutive gradient buckets gathered, each group's issued with the hook after its last
  // layer's (after the last hook for the last group), so the weights travel while later updates
  // run; a group closes once its shares are about even (share_groups.hpp). zero2, fsdp: a
  // bucket is closed only when no block of it is larger than an even share and its shares are
  // about even (or at the last layer).
  int rank = 0;
  // D above, in layers (>= 1; past the layer count: every host-updated block is finished after
  // the last hook). 0: chosen by the caller (the step driver: enough host updates in flight to
  // occupy the host workers); the schedule itself takes 0 as 1.
  int host_release_delay = 0;
  // α above, in [0, 1): the fraction of the optimizer update deferred into the next forward.
  double defer_fraction = 0.0;
  // How many layers ahead of the forward the carried updates go out (0: all at the step's start,
  // so the host works through them in layer order while the device runs the forward; a bound
  // limits the deferred state held acquired at once).
  int defer_lookahead = 0;
  ModelStateTiers tiers{};
  bool recompute_activations = false;  // activation checkpointing (required for checkpoints off device)
  int prefetch_depth = 2;  // layer visits a fetch (or carried update) is issued ahead, >= 1
  // fsdp: a unit's gathered weights are dropped after each stretch of visits of its layers (true,
  // FSDP's default: each micro-batch's forward and backward gathers again), or kept until the
  // step's end (false: one gather a unit a step, the whole model's weights on the device, as
  // FSDP's reshard_after_forward=False with resharding after backward off under gradient
  // accumulation).
  bool reshard_after_use = true;
  // A host update runs on several host workers at once (as ZeRO-Offload's CPU Adam runs each
  // tensor on every core): its launch is split in pieces of about host_piece_bytes of the
  // block's weights, at most max_host_pieces (0: one piece per block).
  double host_piece_bytes = 0.0;
  int max_host_pieces = 1;
};

// Throws InputError for empty layers, blocks out of order, negative bytes or a bad option.
void validate_schedule_inputs(const std::vector<LayerWork>& layers, const std::vector<BlockWork>& blocks,
                              const ScheduleOptions& options);

// Blocks must be listed layer by layer in forward order (as the step driver registers them).
// The inputs are checked (validate_schedule_inputs) and the plan is validated. The plan's
// schedule name is the order's ("horizontal", "vertical").
StepPlan schedule_plan(const std::vector<LayerWork>& layers, const std::vector<BlockWork>& blocks,
                       const ScheduleOptions& options = {});

// Sharded blocks' weights, each from its owner to every rank: a plan of gather ops alone, one per
// layer (fsdp: per unit of layers), split as a step's gathers are, last layer first. What fsdp runs where every rank must
// hold the whole model (the run's end), since a step leaves the blocks other ranks own as their
// last gathers brought them. Schedule name "weights gather".
StepPlan weights_gather_plan(const std::vector<LayerWork>& layers, const std::vector<BlockWork>& blocks,
                             const ScheduleOptions& options);

// Which blocks a defer fraction α defers: walking the blocks in order, block b is deferred when
// that keeps the deferred weight bytes closest to α of the bytes so far (so every layer with
// several blocks defers about α of them, and α = 0 defers none). Blocks another rank owns are
// never deferred (their weights arrive by gather).
std::vector<bool> deferred_blocks(const std::vector<BlockWork>& blocks, double defer_fraction, int rank);

}  // namespace asteria::plan

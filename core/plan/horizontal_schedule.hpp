#pragma once
// The horizontal (layer-by-layer) schedule: the step a framework with per-parameter backward
// hooks runs, and the first plan generator. With micro-batches m = 0..M-1 (gradient
// accumulation):
//
//   for m: forward(0, m) .. forward(L-1, m); during the first micro-batch's forward, prefetch
//          the state of the blocks updated first (backward order: the blocks of layer L-1-l
//          after forward(l));
//   for m: backward(L-1, m) .. backward(0, m); after the last micro-batch's backward of layer l,
//          with data-parallel ranks reduce(l) (its gradient averaged over the ranks), and then
//          the layer's hook (with data-parallel ranks after backward(l-1) and reduce(l-1), so
//          that waiting for the reduce overlaps the next backward):
//            release the device-updated blocks of layer l+1 (once that layer's device updates
//            are done);
//            finish the host-updated blocks of layer l+D: transfer each one's new weights up to
//            the device (once its update is done), then release them (once all of that layer's
//            host updates are done);
//            transfer the gradient of each host-updated block of layer l down to the host;
//            acquire the blocks of layer l;
//            per block, in block order: [publish if its optimizer activates a refresh one step
//            late], accumulate (a host-updated block's after its gradient transfer), refresh,
//            [publish if it activates at once], update;
//   with sharded optimizer state, a layer's gathers (the owners' new weights to the other ranks)
//   follow the next layer's hook;
//   release the device-updated blocks of layer 0; finish the host-updated blocks of layers
//   D-1 .. 0; the last hooked layer's gathers.
//
// A block's accumulate, publish and update are charged where its update runs (the device, or the
// host workers for blocks whose state is updated there). A layer's device-charged optimizer ops
// form one device launch, which also carries the numerics of its host-charged ones (their hook);
// the host-charged ops of a block form one host launch.
//
// D, the host release delay, is how many hooks later a layer's host-updated blocks are finished.
// The thread that issues the plan waits for a host update only when it reaches the op that needs
// it (the weights transfer), so with D > 1 the host workers run the updates of D layers while
// the next layers' backward and hooks are issued; with D = 1 they are finished at the next
// layer's hook, as device-updated blocks are released. A deferred release keeps the block
// acquired (its state pinned where it is updated) D - 1 hooks longer, so D layers are pinned at
// once: free for state that rests on the host, D layers of staged copies for state that rests
// on NVMe (the step driver bounds D by the host memory that can hold them). The new weights reach the device before the step ends,
// so the next step's forward finds them there.
#include <string>
#include <vector>

#include "core/plan/step_plan.hpp"

namespace asteria::plan {

struct LayerWork {
  std::string name;
  platform::Costs forward;  // of the whole step (split evenly over the micro-batches)
  platform::Costs backward;
  double gradient_bytes = 0.0;  // the layer's gradient bucket, all-reduced under data parallelism
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

struct HorizontalOptions {
  int micro_batches = 1;
  int data_parallel_ranks = 1;  // > 1: a reduce op per layer (its gradient bucket)
  // This rank (world) when blocks have owners: one gather op per block of a layer, sending the
  // owner's new weights to the others, issued with the next layer's hook (after the last hook for
  // the last layer), so the weights travel during the rest of the backward.
  int rank = 0;
  // D above, in layers (>= 1; past the layer count: every host-updated block is finished after
  // the last hook). 0: chosen by the caller (the step driver: enough host updates in flight to
  // occupy the host workers); the schedule itself takes 0 as 1.
  int host_release_delay = 0;
};

// Blocks must be listed layer by layer in forward order (as the step driver registers them).
// Throws InputError for empty layers, blocks out of order, negative bytes or a bad option; the
// plan is validated.
StepPlan horizontal_plan(const std::vector<LayerWork>& layers, const std::vector<BlockWork>& blocks,
                         const HorizontalOptions& options = {});

}  // namespace asteria::plan

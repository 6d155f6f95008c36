#pragma once
// The horizontal (layer-by-layer) schedule: the step a framework with per-parameter backward
// hooks runs, and the first plan generator. With micro-batches m = 0..M-1 (gradient
// accumulation):
//
//   for m: forward(0, m) .. forward(L-1, m); during the first micro-batch's forward, prefetch
//          the state of the blocks updated first (backward order: the blocks of layer L-1-l
//          after forward(l));
//   for m: backward(L-1, m) .. backward(0, m); after the last micro-batch's backward of layer l,
//          the layer's hook:
//            reduce(l) among data-parallel ranks (only when there are several);
//            release the blocks of layer l+1 (once all of that layer's updates are done);
//            acquire the blocks of layer l;
//            per block, in block order: [publish if its optimizer activates a refresh one step
//            late], accumulate, refresh, [publish if it activates at once], update;
//   release the blocks of layer 0.
//
// A block's accumulate, publish and update are charged where its update runs (the device, or the
// host workers for blocks whose state is updated there). A layer's device-charged optimizer ops
// form one device launch, which also carries the numerics of its host-charged ones (their hook);
// the host-charged ops of a block form one host launch.
#include <string>
#include <vector>

#include "core/plan/step_plan.hpp"

namespace asteria::plan {

struct LayerWork {
  std::string name;
  platform::Cost forward;   // of the whole step (split evenly over the micro-batches)
  platform::Cost backward;
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
};

struct HorizontalOptions {
  int micro_batches = 1;
  int data_parallel_ranks = 1;  // > 1: a reduce op per layer (its gradient bucket)
};

// Blocks must be listed layer by layer in forward order (as the step driver registers them).
// Throws InputError for empty layers, blocks out of order or a bad option; the plan is validated.
StepPlan horizontal_plan(const std::vector<LayerWork>& layers, const std::vector<BlockWork>& blocks,
                         const HorizontalOptions& options = {});

}  // namespace asteria::plan

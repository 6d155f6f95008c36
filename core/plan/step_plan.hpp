#pragma once
// A training step as data: typed operations (op.hpp) in issue order, each with its Cost and its
// dependencies, plus the launches that fuse several ops into one executor submission. A plan
// generator (schedule.hpp, and later schedules) writes it; the interpreter
// (core/runtime/driver/plan_interpreter.hpp) runs it on any Platform; the native trace records
// what it ran. Layers and blocks are named so that a plan can be read (to_text) and compared.
//
// Issue semantics: the interpreter takes ops in plan order. Before an op starts, every op it
// depends on has finished: a device op relies on stream order for deps on earlier device ops and
// waits for the others; every other op waits for all of its deps. A launch is submitted when the
// plan reaches the last op that names it (as its launch or as its hook). Ops that run beside the
// issuing thread (device work, host launches, transfers) may still run when a later op is
// issued; the step ends when all of them have, so the next step's ops find their results (a
// transfer of new weights no op of the step depends on is awaited there).
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/plan/op.hpp"
#include "core/platform/comm.hpp"

namespace asteria::plan {

struct LayerInfo {
  std::string name;  // "layer3.attn.q"
};

struct BlockInfo {
  int layer = 0;
  std::string label;  // "layer3.attn.q block 2 (rows 0:128, cols 256:384)"
  int owner = -1;     // sharded state: the data-parallel rank that updates it (-1: every rank)
};

// A bucket: the consecutive layers first_layer..last_layer one collective op moves (as DDP's
// buckets: layers in the order their gradients complete, about bucket_bytes each), their tensors
// as one buffer, or the listed blocks' packed in block order:
//   reduce   the layers' gradients averaged among the data-parallel ranks (blocks: those blocks'
//            gradients only, the ones a scatter would pad too much);
//   scatter  sharded gradients: the blocks' gradients averaged, each only to its owner;
//   gather   sharded state: the blocks' weights from their owners to every rank (by a broadcast
//            when one rank owns them all, else an all-gather).
struct BucketInfo {
  int first_layer = 0;
  int last_layer = 0;
  std::vector<int> blocks;  // owned blocks of those layers, in block order; required by scatter and gather
};

struct Launch {
  Resource on = Resource::device;
  std::string label;  // names its Work: "optimizer layer3.attn.q", "host optimizer <block>"
  // Host launches: equal pieces submitted to as many host workers at once (a multi-threaded CPU
  // kernel, as ZeRO-Offload's CPU Adam runs each tensor on every core); the launch ends with all.
  int pieces = 1;
};

struct StepPlan {
  std::string schedule;  // the generator's name: "horizontal"
  int micro_batches = 1;
  std::vector<LayerInfo> layers;
  std::vector<BlockInfo> blocks;
  std::vector<Launch> launches;
  std::vector<BucketInfo> buckets;
  std::vector<Op> ops;
  // What gradients travel as in reduce and scatter ops (fp32 gradients converted; bf16 sums in
  // fp32 and rounds once, platform::combine_values); weights always travel as they are.
  platform::DType reduce_dtype = platform::DType::fp32;

  std::size_t count(OpKind kind) const;
};

// Throws InputError naming `source` (field "ops[i]...") when: an op runs on a resource that
// cannot run its kind (forward and backward on the device, reduce on the network, transfer on
// the link, store ops and refresh on the issuer, ...); an index (layer, block, bucket,
// micro-batch, launch, hook) is out of range or missing for the op's kind; a bucket's layers are
// out of range or out of order, its collective op's layer is not the bucket's first, or a scatter
// or gather names a bucket without blocks; a transfer moves
// between one tier and itself or has negative bytes; a dep does not point
// to an earlier op; an op's launch is on another resource than the op; an optimizer op has no
// hook, or a hook is not a device launch or is set on an op that is not an optimizer op; an op outside a launch depends on one
// of its members before the launch's last op.
void validate(const StepPlan& plan, const std::string& source = "step plan");

// Blocks in the order of their acquire ops: the order in which the step uses their state (the
// state store's use order). Blocks without an acquire are left out.
std::vector<int> block_use_order(const StepPlan& plan);
// The sets of blocks the plan holds acquired at once, in issue order (acquire .. release): one
// set at each point where an acquire is followed by a release or the step's end (the peaks).
// What the state store must fit together where the updates run.
std::vector<std::vector<int>> blocks_held_together(const StepPlan& plan);
// The sets of blocks whose refresh op the plan has issued and whose update op it has not yet, at
// each point where a refresh is followed by an update or the step's end (the peaks): the refresh
// jobs that still serve no update yet and so cannot be installed early (a carried op pairs with
// the carried op of its block).
std::vector<std::vector<int>> blocks_refreshed_before_update(const StepPlan& plan);

// Index of the op after which launch `l` is submitted (its last op); -1 for a launch no op names.
std::vector<OpId> launch_submit_points(const StepPlan& plan);

// Where the numerics of an optimizer op placed on the host workers run, and so which launch is
// charged for it:
//   own_launch   in its own host launch: the design, and what a data-free run models;
//   hook_launch  inside its hook, the device launch of its backward hook, as the real backend
//                computes values today (its preconditioner service is single-threaded, so one
//                launch per hook computes every optimizer op of the hook); the host launch then
//                has nothing left to run.
enum class NumericsSite { own_launch, hook_launch };
std::string_view to_string(NumericsSite site) noexcept;
// "own_launch" or "hook_launch"; InputError naming `source` and `field` otherwise.
NumericsSite parse_numerics_site(std::string_view text, const std::string& source, const std::string& field);

// Per launch, the ops charged to it when numerics run at `site`, in plan order: its own ops, and
// at hook_launch a device launch also the host-launch ops it is the hook of.
std::vector<std::vector<OpId>> launch_charges(const StepPlan& plan, NumericsSite site);

// A readable, line-per-op text of the plan (golden files, --dump-plan): a header with the
// schedule and counts, the launches, the gradient buckets, then "<id> <kind> <fields> on=<resource> cost=... deps=..."
// (a transfer names its tiers: "from=<tier> to=<tier>").
// Numbers print in their shortest exact form, so equal text means equal plans.
std::string to_text(const StepPlan& plan);

}  // namespace asteria::plan

#include "core/plan/step_plan.hpp"

#include <algorithm>
#include <utility>

#include "core/common/error.hpp"
#include "core/platform/cost_text.hpp"

namespace asteria::plan {
namespace {

std::string op_field(std::size_t i, const char* what) { return "ops[" + std::to_string(i) + "]." + what; }

bool resource_allowed(OpKind kind, Resource on) {
  switch (kind) {
    case OpKind::forward:
    case OpKind::backward: return on == Resource::device;
    case OpKind::reduce: return on == Resource::network;
    case OpKind::prefetch:
    case OpKind::acquire:
    case OpKind::release:
    case OpKind::refresh: return on == Resource::issuer;
    case OpKind::publish: return on != Resource::network;
    case OpKind::accumulate:
    case OpKind::update: return on == Resource::device || on == Resource::host;
    case OpKind::transfer: return on == Resource::link;
    case OpKind::gather:
    case OpKind::scatter: return on == Resource::network;
  }
  return false;
}

}  // namespace

std::size_t StepPlan::count(OpKind kind) const {
  return static_cast<std::size_t>(std::count_if(ops.begin(), ops.end(), [kind](const Op& op) { return op.kind == kind; }));
}

std::vector<OpId> launch_submit_points(const StepPlan& plan) {
  std::vector<OpId> last(plan.launches.size(), -1);
  for (std::size_t i = 0; i < plan.ops.size(); ++i) {
    const Op& op = plan.ops[i];
    for (int l : {op.launch, op.hook})
      if (l >= 0 && static_cast<std::size_t>(l) < last.size()) last[static_cast<std::size_t>(l)] = static_cast<OpId>(i);
  }
  return last;
}

std::string_view to_string(NumericsSite site) noexcept {
  return site == NumericsSite::hook_launch ? "hook_launch" : "own_launch";
}

NumericsSite parse_numerics_site(std::string_view text, const std::string& source, const std::string& field) {
  for (NumericsSite site : {NumericsSite::own_launch, NumericsSite::hook_launch})
    if (text == to_string(site)) return site;
  throw InputError(source, field, "own_launch or hook_launch, found '" + std::string(text) + "'");
}

std::vector<std::vector<OpId>> launch_charges(const StepPlan& plan, NumericsSite site) {
  std::vector<std::vector<OpId>> charged(plan.launches.size());
  for (std::size_t i = 0; i < plan.ops.size(); ++i) {
    const Op& op = plan.ops[i];
    if (op.launch < 0 || static_cast<std::size_t>(op.launch) >= plan.launches.size()) continue;
    int l = op.launch;
    if (site == NumericsSite::hook_launch && op.hook >= 0 && op.hook != op.launch &&
        plan.launches[static_cast<std::size_t>(op.launch)].on == Resource::host)
      l = op.hook;
    charged[static_cast<std::size_t>(l)].push_back(static_cast<OpId>(i));
  }
  return charged;
}

void validate(const StepPlan& plan, const std::string& source) {
  if (plan.layers.empty()) throw InputError(source, "layers", "expected at least one layer");
  if (plan.micro_batches < 1) throw InputError(source, "micro_batches", "expected an integer >= 1");
  const auto layers = static_cast<int>(plan.layers.size());
  const auto blocks = static_cast<int>(plan.blocks.size());
  const auto launches = static_cast<int>(plan.launches.size());
  for (std::size_t b = 0; b < plan.blocks.size(); ++b)
    if (plan.blocks[b].layer < 0 || plan.blocks[b].layer >= layers)
      throw InputError(source, "blocks[" + std::to_string(b) + "].layer",
                       "expected a layer index in [0, " + std::to_string(layers) + ")");
  for (std::size_t b = 0; b < plan.buckets.size(); ++b) {
    const BucketInfo& bucket = plan.buckets[b];
    if (bucket.first_layer < 0 || bucket.first_layer > bucket.last_layer || bucket.last_layer >= layers)
      throw InputError(source, "buckets[" + std::to_string(b) + "]",
                       "layers first..last with 0 <= first <= last < " + std::to_string(layers) + ", found " +
                           std::to_string(bucket.first_layer) + ".." + std::to_string(bucket.last_layer));
    for (int member : bucket.blocks)
      if (member < 0 || member >= blocks || plan.blocks[static_cast<std::size_t>(member)].owner < 0 ||
          plan.blocks[static_cast<std::size_t>(member)].layer < bucket.first_layer ||
          plan.blocks[static_cast<std::size_t>(member)].layer > bucket.last_layer)
        throw InputError(source, "buckets[" + std::to_string(b) + "].blocks",
                         "blocks with an owner in the bucket's layers, found " + std::to_string(member));
  }
  const std::vector<OpId> submitted_at = launch_submit_points(plan);
  std::vector<int> launch_carried(plan.launches.size(), -1);  // per launch: -1 unseen, 0 current, 1 carried
  for (std::size_t l = 0; l < plan.launches.size(); ++l)
    if (plan.launches[l].pieces < 1 || (plan.launches[l].pieces > 1 && plan.launches[l].on != Resource::host))
      throw InputError(source, "launches[" + std::to_string(l) + "].pieces",
                       "1, or more for a host launch (a multi-threaded CPU kernel)");
  for (std::size_t i = 0; i < plan.ops.size(); ++i) {
    const Op& op = plan.ops[i];
    if (!resource_allowed(op.kind, op.on))
      throw InputError(source, op_field(i, "on"),
                       std::string("a resource that can run ") + std::string(to_string(op.kind)) + " ops, found " +
                           std::string(to_string(op.on)));
    if (op.kind == OpKind::forward || op.kind == OpKind::backward) {
      if (op.layer < 0 || op.layer >= layers)
        throw InputError(source, op_field(i, "layer"), "expected a layer index in [0, " + std::to_string(layers) + ")");
      if (op.micro_batch < 0 || op.micro_batch >= plan.micro_batches)
        throw InputError(source, op_field(i, "micro_batch"),
                         "expected a micro-batch in [0, " + std::to_string(plan.micro_batches) + ")");
    }
    if (op.kind == OpKind::transfer && op.block == -1) {
      if (op.layer < 0 || op.layer >= layers)
        throw InputError(source, op_field(i, "layer"),
                         "expected the layer whose tensors the transfer moves, in [0, " + std::to_string(layers) + ")");
    } else if (is_block_op(op.kind)) {
      if (op.block < 0 || op.block >= blocks)
        throw InputError(source, op_field(i, "block"), "expected a block index in [0, " + std::to_string(blocks) + ")");
      if (op.layer != plan.blocks[static_cast<std::size_t>(op.block)].layer)
        throw InputError(source, op_field(i, "layer"), "expected the layer of block " + std::to_string(op.block));
    }
    if (is_collective_op(op.kind)) {
      if (op.bucket < 0 || static_cast<std::size_t>(op.bucket) >= plan.buckets.size())
        throw InputError(source, op_field(i, "bucket"),
                         "expected a bucket index in [0, " + std::to_string(plan.buckets.size()) + ")");
      if (op.layer != plan.buckets[static_cast<std::size_t>(op.bucket)].first_layer)
        throw InputError(source, op_field(i, "layer"), "expected the first layer of bucket " + std::to_string(op.bucket));
      if (op.kind != OpKind::reduce && plan.buckets[static_cast<std::size_t>(op.bucket)].blocks.empty())
        throw InputError(source, op_field(i, "bucket"),
                         "a bucket that lists the blocks a " + std::string(to_string(op.kind)) + " moves, found bucket " +
                             std::to_string(op.bucket) + " with none");
    }
    if (op.carried && (op.kind == OpKind::forward || op.kind == OpKind::backward || is_collective_op(op.kind)))
      throw InputError(source, op_field(i, "carried"),
                       "only optimizer, store and transfer ops carried over from the previous step, found a " +
                           std::string(to_string(op.kind)));
    if (op.carried)
      for (OpId d : op.deps)
        if (d >= 0 && static_cast<std::size_t>(d) < i && !plan.ops[static_cast<std::size_t>(d)].carried)
          throw InputError(source, op_field(i, "deps"),
                           "a carried op depends only on carried ops (it also runs alone, after the last step), found op " +
                               std::to_string(d));
    for (int l : {op.launch, op.hook})
      if (l >= 0 && l < launches) {
        int& seen = launch_carried[static_cast<std::size_t>(l)];
        if (seen < 0) seen = op.carried ? 1 : 0;
        if (seen != (op.carried ? 1 : 0))
          throw InputError(source, op_field(i, "launch"),
                           "carried and current-step ops in different launches, found launch " + std::to_string(l) +
                               " with both");
      }
    if (op.kind == OpKind::transfer && op.from == op.to)
      throw InputError(source, op_field(i, "to"),
                       "a tier other than the one the transfer moves from (" +
                           std::string(platform::to_string(op.from)) + ")");
    if (op.kind == OpKind::transfer && !(op.cost.bytes() >= 0.0))
      throw InputError(source, op_field(i, "cost"), "the bytes the transfer moves (>= 0)");
    if (op.launch != -1) {
      if (op.launch < 0 || op.launch >= launches)
        throw InputError(source, op_field(i, "launch"), "expected -1 or a launch index in [0, " + std::to_string(launches) + ")");
      if (plan.launches[static_cast<std::size_t>(op.launch)].on != op.on)
        throw InputError(source, op_field(i, "launch"), "expected a launch on the op's own resource");
    }
    if (is_optimizer_op(op.kind) && op.hook == -1)
      throw InputError(source, op_field(i, "hook"),
                       "the device launch that carries this optimizer op's numerics (the preconditioner service is "
                       "single-threaded: every optimizer op of a step runs its numerics in plan order, in a launch body)");
    if (op.hook != -1) {
      if (!is_optimizer_op(op.kind))
        throw InputError(source, op_field(i, "hook"), "expected no hook on a non-optimizer op");
      if (op.hook < 0 || op.hook >= launches || plan.launches[static_cast<std::size_t>(op.hook)].on != Resource::device)
        throw InputError(source, op_field(i, "hook"), "expected -1 or the index of a device launch");
    }
    for (OpId d : op.deps) {
      if (d < 0 || static_cast<std::size_t>(d) >= i)
        throw InputError(source, op_field(i, "deps"), "expected indices of earlier ops, found " + std::to_string(d));
      const Op& dep = plan.ops[static_cast<std::size_t>(d)];
      // Ops that share a launch or a hook run in plan order; from outside, a launch's ops finish
      // together, when it has been submitted.
      const bool shared = [&] {
        for (int a : {dep.launch, dep.hook})
          for (int b : {op.launch, op.hook})
            if (a >= 0 && a == b) return true;
        return false;
      }();
      if (shared) continue;
      for (int l : {dep.launch, dep.hook})
        if (l >= 0 && submitted_at[static_cast<std::size_t>(l)] >= static_cast<OpId>(i))
          throw InputError(source, op_field(i, "deps"),
                           "op " + std::to_string(d) + " is part of launch " + std::to_string(l) +
                               ", which is submitted only after this op");
    }
  }
}

std::vector<int> block_use_order(const StepPlan& plan) {
  std::vector<int> order;
  for (const Op& op : plan.ops)
    if (op.kind == OpKind::acquire) order.push_back(op.block);
  return order;
}

std::vector<std::vector<int>> blocks_held_together(const StepPlan& plan) {
  std::vector<std::vector<int>> peaks;
  std::vector<int> held;
  bool grew = false;
  for (const Op& op : plan.ops) {
    if (op.kind == OpKind::acquire) {
      held.push_back(op.block);
      grew = true;
    } else if (op.kind == OpKind::release) {
      if (grew) peaks.push_back(held);
      grew = false;
      std::erase(held, op.block);
    }
  }
  if (grew) peaks.push_back(held);
  return peaks;
}

std::vector<std::vector<int>> blocks_refreshed_before_update(const StepPlan& plan) {
  std::vector<std::vector<int>> peaks;
  std::vector<std::pair<int, bool>> open;  // (block, carried)
  bool grew = false;
  const auto members = [&] {
    std::vector<int> blocks;
    for (const auto& [block, carried] : open) blocks.push_back(block);
    return blocks;
  };
  for (const Op& op : plan.ops) {
    if (op.kind == OpKind::refresh) {
      open.emplace_back(op.block, op.carried);
      grew = true;
    } else if (op.kind == OpKind::update) {
      if (grew) peaks.push_back(members());
      grew = false;
      std::erase(open, std::pair<int, bool>{op.block, op.carried});
    }
  }
  if (grew) peaks.push_back(members());
  return peaks;
}

std::string to_text(const StepPlan& plan) {
  std::string text = "plan " + plan.schedule + ": layers=" + std::to_string(plan.layers.size()) +
                     " micro_batches=" + std::to_string(plan.micro_batches) + " blocks=" +
                     std::to_string(plan.blocks.size()) + " launches=" + std::to_string(plan.launches.size()) +
                     " ops=" + std::to_string(plan.ops.size()) +
                     (plan.reduce_dtype != platform::DType::fp32
                          ? " reduce_dtype=" + std::string(platform::to_string(plan.reduce_dtype))
                          : std::string()) +
                     "\n";
  for (std::size_t l = 0; l < plan.layers.size(); ++l) text += "layer " + std::to_string(l) + " " + plan.layers[l].name + '\n';
  for (std::size_t b = 0; b < plan.blocks.size(); ++b)
    text += "block " + std::to_string(b) + " layer=" + std::to_string(plan.blocks[b].layer) +
            (plan.blocks[b].owner >= 0 ? " owner=" + std::to_string(plan.blocks[b].owner) : "") + " " +
            plan.blocks[b].label + '\n';
  for (std::size_t l = 0; l < plan.launches.size(); ++l)
    text += "launch " + std::to_string(l) + " on=" + std::string(to_string(plan.launches[l].on)) + " " +
            plan.launches[l].label + (plan.launches[l].pieces > 1 ? " pieces=" + std::to_string(plan.launches[l].pieces) : "") +
            '\n';
  for (std::size_t b = 0; b < plan.buckets.size(); ++b) {
    text += "bucket " + std::to_string(b) + " layers=" + std::to_string(plan.buckets[b].first_layer) + ".." +
            std::to_string(plan.buckets[b].last_layer);
    for (std::size_t m = 0; m < plan.buckets[b].blocks.size(); ++m)
      text += (m == 0 ? " blocks=" : ",") + std::to_string(plan.buckets[b].blocks[m]);
    text += '\n';
  }
  for (std::size_t i = 0; i < plan.ops.size(); ++i) {
    const Op& op = plan.ops[i];
    text += "op " + std::to_string(i) + ' ' + std::string(to_string(op.kind));
    if (op.layer >= 0) text += " layer=" + std::to_string(op.layer);
    if (op.micro_batch >= 0) text += " mb=" + std::to_string(op.micro_batch);
    if (op.block >= 0) text += " block=" + std::to_string(op.block);
    if (op.bucket >= 0) text += " bucket=" + std::to_string(op.bucket);
    if (op.kind == OpKind::transfer)
      text += " " + std::string(to_string(op.payload)) + " from=" + std::string(platform::to_string(op.from)) +
              " to=" + std::string(platform::to_string(op.to));
    if (op.carried) text += " carried";
    text += " on=" + std::string(to_string(op.on)) + " cost=" + platform::to_text(op.cost) + " deps=";
    for (std::size_t d = 0; d < op.deps.size(); ++d) {
      if (d) text += ',';
      text += std::to_string(op.deps[d]);
    }
    if (op.launch >= 0) text += " launch=" + std::to_string(op.launch);
    if (op.hook >= 0) text += " hook=" + std::to_string(op.hook);
    text += '\n';
  }
  return text;
}

}  // namespace asteria::plan

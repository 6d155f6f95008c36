#include "core/plan/horizontal_schedule.hpp"

#include <algorithm>

#include "core/common/error.hpp"

namespace asteria::plan {
namespace {

constexpr const char* kSource = "horizontal schedule";

Op make_op(OpKind kind, Resource on, int layer) {
  Op op;
  op.kind = kind;
  op.on = on;
  op.layer = layer;
  return op;
}

platform::Costs per_micro_batch(const platform::Costs& cost, int micro_batches) {
  if (micro_batches == 1) return cost;  // exact: a single micro-batch is the whole step
  return cost.scaled(1.0 / micro_batches);
}

class Builder {
 public:
  Builder(const std::vector<LayerWork>& layers, const std::vector<BlockWork>& blocks, const HorizontalOptions& o)
      : layers_(layers), blocks_(blocks), options_(o), by_layer_(layers.size()), update_of_(blocks.size(), -1),
        delay_(std::min(std::max(1, o.host_release_delay), static_cast<int>(layers.size()))) {
    plan_.schedule = "horizontal";
    plan_.micro_batches = o.micro_batches;
    for (const LayerWork& l : layers) plan_.layers.push_back({l.name});
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      plan_.blocks.push_back({blocks[b].layer, blocks[b].label});
      // A block another rank owns has no state here: only its gather op names it.
      if (blocks[b].owner < 0 || blocks[b].owner == o.rank)
        by_layer_[static_cast<std::size_t>(blocks[b].layer)].push_back(static_cast<int>(b));
    }
  }

  StepPlan build() {
    const int n = static_cast<int>(layers_.size());
    const int m_count = options_.micro_batches;
    OpId previous = -1;
    for (int m = 0; m < m_count; ++m)
      for (int l = 0; l < n; ++l) {
        Op op = make_op(OpKind::forward, Resource::device, l);
        op.micro_batch = m;
        op.cost = per_micro_batch(layers_[static_cast<std::size_t>(l)].forward, m_count);
        previous = add(std::move(op), previous);
        if (m != 0) continue;
        // Forward hooks: start moving the state of the blocks updated first (backward order).
        for (int b : by_layer_[static_cast<std::size_t>(n - 1 - l)]) add(block_op(OpKind::prefetch, Resource::issuer, b));
      }
    // With data-parallel ranks a layer's hook is issued after the next layer's backward (and its
    // reduce), so the issuing thread's wait for the reduce overlaps that backward.
    struct Hook {
      int layer = -1;
      OpId gradient = -1;
      OpId gate = -1;
    } deferred;
    for (int m = 0; m < m_count; ++m)
      for (int l = n - 1; l >= 0; --l) {
        Op op = make_op(OpKind::backward, Resource::device, l);
        op.micro_batch = m;
        op.cost = per_micro_batch(layers_[static_cast<std::size_t>(l)].backward, m_count);
        previous = add(std::move(op), previous);
        if (m != m_count - 1) continue;
        if (options_.data_parallel_ranks == 1) {
          hook(l, previous, previous);
          continue;
        }
        Op reduce = make_op(OpKind::reduce, Resource::network, l);
        reduce.bucket = l;
        reduce.cost = platform::Cost{platform::WorkKind::other, 0.0, layers_[static_cast<std::size_t>(l)].gradient_bytes, 0};
        const OpId reduced = add(std::move(reduce), previous);
        if (deferred.layer >= 0) hook_and_gather(deferred.layer, deferred.gradient, deferred.gate);
        deferred = {l, previous, reduced};
      }
    if (deferred.layer >= 0) hook_and_gather(deferred.layer, deferred.gradient, deferred.gate);
    release_device_blocks(0, -1);
    for (int l = delay_ - 1; l >= 0; --l) finish_host_blocks(l, -1);
    if (gathers_due_ >= 0) gather(gathers_due_);
    validate(plan_, kSource);
    return std::move(plan_);
  }

 private:
  OpId add(Op op, OpId dep = -1) {
    if (dep >= 0) op.deps.insert(op.deps.begin(), dep);
    plan_.ops.push_back(std::move(op));
    return static_cast<OpId>(plan_.ops.size() - 1);
  }

  Op block_op(OpKind kind, Resource on, int b) const {
    Op op = make_op(kind, on, blocks_[static_cast<std::size_t>(b)].layer);
    op.block = b;
    return op;
  }

  bool on_host(int b) const { return blocks_[static_cast<std::size_t>(b)].update_on == Resource::host; }

  // Sharded state: a layer's gathers are issued one hook after its updates (by then they are
  // mostly done, so neither the issuing thread nor a collective queue waits long for them), so the
  // weights travel while the backward and the gradient reduces of the next layers go on. Every
  // rank issues them at the same point, in block order, as collectives must be.
  void hook_and_gather(int l, OpId gradient, OpId gate) {
    hook(l, gradient, gate);
    if (gathers_due_ >= 0) gather(gathers_due_);
    gathers_due_ = l;
  }

  // One gather op per owned block of layer l: the owner's new weights go to the other ranks once
  // the owner's update is done.
  void gather(int l) {
    for (std::size_t b = 0; b < blocks_.size(); ++b) {
      const BlockWork& w = blocks_[b];
      if (w.layer != l || w.owner < 0) continue;
      Op op = block_op(OpKind::gather, Resource::network, static_cast<int>(b));
      op.owner = w.owner;
      op.cost = platform::Cost{platform::WorkKind::other, 0.0, w.weight_bytes, 0};
      if (update_of_[b] >= 0) op.deps.push_back(update_of_[b]);
      add(std::move(op));
    }
  }

  OpId add_transfer(int b, platform::Tier from, platform::Tier to, double bytes, OpId dep) {
    Op op = block_op(OpKind::transfer, Resource::link, b);
    op.from = from;
    op.to = to;
    op.cost = platform::Cost{platform::WorkKind::other, 0.0, bytes, 0};
    return add(std::move(op), dep);
  }

  int add_launch(Resource on, std::string label) {
    plan_.launches.push_back({on, std::move(label)});
    return static_cast<int>(plan_.launches.size() - 1);
  }

  // Releases the blocks of layer l updated where `host` says once all of those updates are done
  // (and after `gate`).
  void release_blocks(int l, bool host, OpId gate) {
    std::vector<OpId> updates;
    for (int b : by_layer_[static_cast<std::size_t>(l)])
      if (on_host(b) == host) updates.push_back(update_of_[static_cast<std::size_t>(b)]);
    for (int b : by_layer_[static_cast<std::size_t>(l)]) {
      if (on_host(b) != host) continue;
      Op op = block_op(OpKind::release, Resource::issuer, b);
      if (gate >= 0) op.deps.push_back(gate);
      op.deps.insert(op.deps.end(), updates.begin(), updates.end());
      add(std::move(op));
    }
  }

  void release_device_blocks(int l, OpId gate) { release_blocks(l, false, gate); }

  // The new weights of layer l's host-updated blocks go up to the device, then the blocks are
  // released (nothing in the step needs those weights: they must be there before the next).
  void finish_host_blocks(int l, OpId gate) {
    for (int b : by_layer_[static_cast<std::size_t>(l)])
      if (on_host(b))
        add_transfer(b, platform::Tier::host, platform::Tier::device, blocks_[static_cast<std::size_t>(b)].weight_bytes,
                     update_of_[static_cast<std::size_t>(b)]);
    release_blocks(l, true, gate);
  }

  // What runs once layer l's gradient exists (`gradient` is its last backward) and is the one
  // the optimizer reads (`gate`: that backward, or the gradient's reduce).
  void hook(int l, OpId gradient, OpId gate) {
    const LayerWork& layer = layers_[static_cast<std::size_t>(l)];
    const int n = static_cast<int>(layers_.size());
    if (l + 1 < n) release_device_blocks(l + 1, gradient);
    if (l + delay_ < n) finish_host_blocks(l + delay_, gradient);
    const auto& members = by_layer_[static_cast<std::size_t>(l)];
    // Host updates read the gradient on the host: it goes down as soon as it exists.
    std::vector<OpId> gradient_down(members.size(), -1);
    for (std::size_t i = 0; i < members.size(); ++i)
      if (on_host(members[i]))
        gradient_down[i] = add_transfer(members[i], platform::Tier::device, platform::Tier::host,
                                        blocks_[static_cast<std::size_t>(members[i])].gradient_bytes, gate);
    std::vector<OpId> acquired;
    for (int b : members) acquired.push_back(add(block_op(OpKind::acquire, Resource::issuer, b), gate));

    const int device_launch = add_launch(Resource::device, "optimizer " + layer.name);
    std::vector<int> launch_of(members.size());
    std::vector<OpId> last(members.size(), -1);
    // One optimizer op of block members[i], after the block's previous one (the reference order).
    auto chain = [&](std::size_t i, OpKind kind, Resource where, platform::Cost cost, int own_launch) {
      Op op = block_op(kind, where, members[i]);
      op.cost = cost;
      op.launch = own_launch;
      op.hook = device_launch;
      if (last[i] < 0) op.deps = {gate, acquired[i]};
      else op.deps = {last[i]};
      if (kind == OpKind::accumulate && gradient_down[i] >= 0) op.deps.push_back(gradient_down[i]);
      last[i] = add(std::move(op));
      return last[i];
    };
    // First every block's publication point, statistics and refresh, then every update: the
    // updates go out together (one multi-tensor launch on the device, host tasks in block order).
    for (std::size_t i = 0; i < members.size(); ++i) {
      const BlockWork& w = blocks_[static_cast<std::size_t>(members[i])];
      launch_of[i] = w.update_on == Resource::device ? device_launch : add_launch(w.update_on, "host optimizer " + w.label);
      if (w.activation_delay == 1) chain(i, OpKind::publish, w.update_on, w.publish, launch_of[i]);
      chain(i, OpKind::accumulate, w.update_on, w.accumulate, launch_of[i]);
      chain(i, OpKind::refresh, Resource::issuer, {}, -1);
      if (w.activation_delay == 0) chain(i, OpKind::publish, w.update_on, w.publish, launch_of[i]);
    }
    for (std::size_t i = 0; i < members.size(); ++i) {
      const BlockWork& w = blocks_[static_cast<std::size_t>(members[i])];
      update_of_[static_cast<std::size_t>(members[i])] = chain(i, OpKind::update, w.update_on, w.apply, launch_of[i]);
    }
  }

  const std::vector<LayerWork>& layers_;
  const std::vector<BlockWork>& blocks_;
  HorizontalOptions options_;
  std::vector<std::vector<int>> by_layer_;
  std::vector<OpId> update_of_;
  int delay_;  // host release delay, in [1, layers]
  int gathers_due_ = -1;  // the layer whose gathers the next hook issues (-1: none)
  StepPlan plan_;
};

}  // namespace

StepPlan horizontal_plan(const std::vector<LayerWork>& layers, const std::vector<BlockWork>& blocks,
                         const HorizontalOptions& options) {
  if (layers.empty()) throw InputError(kSource, "layers", "expected at least one layer");
  if (options.micro_batches < 1) throw InputError(kSource, "micro_batches", "expected an integer >= 1");
  if (options.data_parallel_ranks < 1) throw InputError(kSource, "data_parallel_ranks", "expected an integer >= 1");
  if (options.rank < 0 || options.rank >= options.data_parallel_ranks)
    throw InputError(kSource, "rank", "expected a rank in [0, " + std::to_string(options.data_parallel_ranks) + ")");
  for (const BlockWork& b : blocks)
    if (b.owner >= options.data_parallel_ranks || b.owner < -1)
      throw InputError(kSource, "owner", "expected -1 or a rank in [0, " + std::to_string(options.data_parallel_ranks) +
                                             ") for block " + b.label);
  if (options.host_release_delay < 0)
    throw InputError(kSource, "host_release_delay", "expected an integer >= 1 (or 0: 1)");
  int previous_layer = 0;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const BlockWork& w = blocks[b];
    const std::string field = "blocks[" + std::to_string(b) + "]";
    if (w.layer < previous_layer || w.layer >= static_cast<int>(layers.size()))
      throw InputError(kSource, field + ".layer", "expected blocks listed layer by layer in forward order");
    previous_layer = w.layer;
    if (w.activation_delay != 0 && w.activation_delay != 1)
      throw InputError(kSource, field + ".activation_delay", "expected 0 or 1");
    if (w.update_on != Resource::device && w.update_on != Resource::host)
      throw InputError(kSource, field + ".update_on", "expected device or host");
    if (!(w.gradient_bytes >= 0.0)) throw InputError(kSource, field + ".gradient_bytes", "expected bytes >= 0");
    if (!(w.weight_bytes >= 0.0)) throw InputError(kSource, field + ".weight_bytes", "expected bytes >= 0");
  }
  return Builder(layers, blocks, options).build();
}

}  // namespace asteria::plan

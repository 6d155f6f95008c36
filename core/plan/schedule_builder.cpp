// The one builder behind the horizontal and vertical schedules (schedule.hpp): the visit order is
// the only difference between them; hooks, deferred updates and model-state moves follow it.
#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "core/common/error.hpp"
#include "core/plan/share_groups.hpp"
#include "core/plan/visit_order.hpp"
#include "core/plan/schedule.hpp"

namespace asteria::plan {
namespace {

using platform::Tier;

constexpr const char* kSource = "step schedule";

// v[i] for an int index.
template <class V>
decltype(auto) nth(V& v, int i) {
  return v[static_cast<std::size_t>(i)];
}

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
  Builder(const std::vector<LayerWork>& layers, const std::vector<BlockWork>& blocks, const ScheduleOptions& o)
      : layers_(layers), blocks_(blocks), options_(o), by_layer_(layers.size()), deferred_by_layer_(layers.size()),
        update_of_(blocks.size(), -1), ready_for_use_(layers.size()),
        delay_(std::min(std::max(1, o.host_release_delay), static_cast<int>(layers.size()))),
        visits_(visit_order(o.order, static_cast<int>(layers.size()), o.micro_batches)) {
    plan_.schedule = std::string(to_string(o.order));
    plan_.micro_batches = o.micro_batches;
    plan_.reduce_dtype = o.reduce_dtype;
    for (const LayerWork& l : layers) plan_.layers.push_back({l.name});
    const std::vector<bool> deferred = deferred_blocks(blocks, o.defer_fraction, o.rank);
    for (std::size_t b = 0; b < blocks.size(); ++b) {
      plan_.blocks.push_back({blocks[b].layer, blocks[b].label, blocks[b].owner});
      // A block another rank owns has no state here: only its gather op names it.
      if (blocks[b].owner >= 0 && blocks[b].owner != o.rank) continue;
      auto& list = deferred[b] ? deferred_by_layer_ : by_layer_;
      list[static_cast<std::size_t>(blocks[b].layer)].push_back(static_cast<int>(b));
    }
    // Runs: stretches of consecutive visits of one layer (one weights residency each).
    for (std::size_t v = 0; v < visits_.size(); ++v) {
      if (runs_.empty() || runs_.back().layer != visits_[v].layer) runs_.push_back({visits_[v].layer, v, v});
      runs_.back().last = v;
      run_of_.push_back(static_cast<int>(runs_.size() - 1));
    }
    ready_of_run_.assign(runs_.size(), {});
    if (o.parallelism == Parallelism::fsdp) units_ = fsdp_units(layers, blocks, o);
    kept_.assign(units_.empty() ? 0 : static_cast<std::size_t>(units_.back()) + 1, {});
    op_of_visit_.assign(visits_.size(), -1);
    checkpoint_out_.assign(layers.size() * static_cast<std::size_t>(o.micro_batches), -1);
    checkpoint_in_.assign(layers.size() * static_cast<std::size_t>(o.micro_batches), -1);
    gradient_out_.assign(layers.size(), -1);
    for (std::size_t v = visits_.size(); v-- > 0;)
      if (visits_[v].kind == OpKind::backward && last_backward_.size() < layers.size() + 1) {
        if (last_backward_.empty()) last_backward_.assign(layers.size(), -1);
        auto& last = last_backward_[static_cast<std::size_t>(visits_[v].layer)];
        if (last < 0) last = static_cast<int>(v);
      }
    first_forward_.assign(layers.size(), -1);
    for (std::size_t v = 0; v < visits_.size(); ++v)
      if (visits_[v].kind == OpKind::forward && first_forward_[static_cast<std::size_t>(visits_[v].layer)] < 0)
        first_forward_[static_cast<std::size_t>(visits_[v].layer)] = static_cast<int>(v);
  }

  // The gathers of every layer's weights from their owners, last layer first.
  StepPlan build_weights_gathers() {
    plan_.schedule = "weights gather";
    // Last layer first; under fsdp a unit's layers together, as its steps gather them (a gather
    // per layer made the run's end cost more than a step at 1,024 simulated GPUs).
    for (int l = static_cast<int>(layers_.size()) - 1; l >= 0;) {
      const BucketInfo range = units_.empty() ? BucketInfo{l, l, {}} : unit_layers(units_, units_[static_cast<std::size_t>(l)]);
      gather(range, {});
      l = range.first_layer - 1;
    }
    validate(plan_, kSource);
    return std::move(plan_);
  }

  StepPlan build() {
    const int depth = options_.prefetch_depth;
    carry_up_to(carried_lookahead() - 1);
    for (int r = 0; r < std::min<int>(depth, static_cast<int>(runs_.size())); ++r) run_ahead(r, -1);
    for (int v = 0; v < std::min<int>(depth, static_cast<int>(visits_.size())); ++v) visit_ahead(v, -1);
    struct Hook {
      int layer = -1;
      OpId gradient = -1;
      OpId gate = -1;
      int bucket = -1;  // a data-parallel hook: its gradient bucket (gradient_buckets_)
    } deferred;
    std::vector<Hook> after_backward;  // data-parallel: the layers' hooks, in gradient order
    for (std::size_t v = 0; v < visits_.size(); ++v) {
      const Visit& visit = visits_[v];
      const OpId op = emit_visit(v);
      const int r = run_of_[v];
      // A layer's stretch of backward visits ends: its gradient goes where gradients rest.
      const bool stretch_ends = v + 1 == visits_.size() || visits_[v + 1].layer != visit.layer ||
                                visits_[v + 1].kind != OpKind::backward;
      if (visit.kind == OpKind::backward && stretch_ends && offloaded(options_.tiers.gradients))
        nth(gradient_out_, visit.layer) =
            add_transfer(-1, visit.layer, Payload::gradient, Tier::device, options_.tiers.gradients,
                         layer(visit.layer).gradient_bytes, {op});
      if (nth(runs_, r).last == v) {
        if (r + depth < static_cast<int>(runs_.size())) run_ahead(r + depth, op);
      }
      if (v + static_cast<std::size_t>(depth) < visits_.size()) visit_ahead(static_cast<int>(v) + depth, op);
      if (visit.kind != OpKind::backward || nth(last_backward_, visit.layer) != static_cast<int>(v))
        continue;
      // The layer's gradient is complete (on the device, or where gradients rest).
      const int l = visit.layer;
      const OpId gradient = nth(gradient_out_, l) >= 0 ? nth(gradient_out_, l) : op;
      // A hook that waits for something on the way (the gradient's reduce, or its move to the
      // host for host updates or to where gradients rest) is issued after the next layer's
      // backward visits, so that the issuing thread's wait overlaps that backward.
      const bool host_updates = std::any_of(nth(by_layer_, l).begin(),
                                            nth(by_layer_, l).end(), [&](int b) { return on_host(b); });
      if (options_.data_parallel_ranks == 1 && gradient == op && !host_updates) {
        if (deferred.layer >= 0) hook(deferred.layer, deferred.gradient, deferred.gate);
        deferred = {};
        hook(l, gradient, gradient);
        continue;
      }
      if (options_.data_parallel_ranks > 1) {
        // The layer's gradient joins the open bucket, reduced once the bucket is full. As DDP,
        // the updates wait for their reduces after the last backward, so that no wait on the
        // network stands between two backwards on the in-order stream or on the issuer.
        after_backward.push_back({l, gradient, -1, add_to_bucket(l, op)});
        continue;
      }
      if (deferred.layer >= 0) hook(deferred.layer, deferred.gradient, deferred.gate);
      deferred = {l, gradient, gradient};
    }
    if (deferred.layer >= 0) hook(deferred.layer, deferred.gradient, deferred.gate);
    close_bucket();
    // zero1, zero2: the new weights go out by groups of consecutive gradient buckets, a group
    // once its shares are about even (the last with the rest), one hook after its last layer's
    // (its updates mostly done), so they travel while the next updates run. (fsdp gathers
    // weights before their uses instead.)
    const bool gathers_after_update =
        options_.parallelism == Parallelism::zero1 || options_.parallelism == Parallelism::zero2;
    BucketInfo group{-1, -1, {}};
    std::optional<BucketInfo> gather_due;
    for (std::size_t i = 0; i < after_backward.size(); ++i) {
      const Hook& h = after_backward[i];
      const GradientBucket& bucket = nth(gradient_buckets_, h.bucket);
      hook(h.layer, h.gradient, bucket.gate);
      if (gather_due) after_updates(*std::exchange(gather_due, std::nullopt));
      if (!gathers_after_update) continue;
      if (i + 1 < after_backward.size() && after_backward[i + 1].bucket == h.bucket) continue;
      group = group.last_layer < 0 ? BucketInfo{bucket.first_layer, bucket.last_layer, {}}
                                   : BucketInfo{std::min(group.first_layer, bucket.first_layer),
                                                std::max(group.last_layer, bucket.last_layer), {}};
      if (i + 1 == after_backward.size() ||
          shares_are_even(blocks_, options_.data_parallel_ranks, group, &BlockWork::weight_bytes))
        gather_due = std::exchange(group, BucketInfo{-1, -1, {}});
    }
    if (last_hooked_ >= 0) release_device_blocks(last_hooked_, -1);
    for (int i = static_cast<int>(hooked_.size()) - std::min<int>(delay_, static_cast<int>(hooked_.size()));
         i < static_cast<int>(hooked_.size()); ++i)
      if (i >= 0 && !nth(finished_, i)) finish_host_blocks(nth(hooked_, i), -1);
    if (gather_due) after_updates(*gather_due);
    validate(plan_, kSource);
    return std::move(plan_);
  }

 private:
  struct Run {
    int layer = 0;
    std::size_t first = 0;
    std::size_t last = 0;
  };

  const LayerWork& layer(int l) const { return nth(layers_, l); }
  const BlockWork& block(int b) const { return nth(blocks_, b); }
  static bool offloaded(Tier tier) { return tier != Tier::device; }
  bool on_host(int b) const { return block(b).update_on == Resource::host; }
  std::size_t slot(int l, int m) const {
    return static_cast<std::size_t>(l) * static_cast<std::size_t>(options_.micro_batches) + static_cast<std::size_t>(m);
  }

  OpId add(Op op, OpId dep = -1) {
    if (dep >= 0) op.deps.insert(op.deps.begin(), dep);
    op.carried = op.carried || carrying_;
    plan_.ops.push_back(std::move(op));
    return static_cast<OpId>(plan_.ops.size() - 1);
  }

  Op block_op(OpKind kind, Resource on, int b) const {
    Op op = make_op(kind, on, block(b).layer);
    op.block = b;
    return op;
  }

  // A move of `bytes` between two tiers; `b` < 0: of layer l's tensors. No op for 0 bytes.
  OpId add_transfer(int b, int l, Payload payload, Tier from, Tier to, double bytes, std::vector<OpId> deps) {
    Op op = make_op(OpKind::transfer, Resource::link, l);
    op.block = b;
    op.payload = payload;
    op.from = from;
    op.to = to;
    op.cost = platform::Cost{platform::WorkKind::other, 0.0, bytes, 0};
    std::erase(deps, -1);
    op.deps = std::move(deps);
    return add(std::move(op));
  }

  int add_launch(Resource on, std::string label) {
    plan_.launches.push_back({on, std::move(label)});
    return static_cast<int>(plan_.launches.size() - 1);
  }

  // Issued `prefetch_depth` runs ahead (after `freed`, the op that frees a buffer): the layer's
  // carried updates (before its first forward), then its weights' fetch or (fsdp) gather.
  void run_ahead(int r, OpId freed) {
    const Run& run = nth(runs_, r);
    const int l = run.layer;
    const bool first_forward = nth(first_forward_, l) == static_cast<int>(run.first);
    if (first_forward) carry_up_to(l);
    auto& ready = nth(ready_of_run_, r);
    if (options_.parallelism == Parallelism::fsdp) {
      // A unit's weights stay gathered over consecutive runs of its layers (kept, not resharded
      // after use: its first gather serves the step).
      const int unit = nth(units_, l);
      std::vector<OpId>& kept = nth(kept_, unit);
      if (r > 0 && units_[static_cast<std::size_t>(nth(runs_, r - 1).layer)] == unit) ready = nth(ready_of_run_, r - 1);
      else if (!kept.empty()) ready = kept;
      else ready = gather(unit_layers(units_, unit), {freed});
      if (!options_.reshard_after_use) kept = ready;
      return;
    }
    if (!offloaded(options_.tiers.weights)) return;
    std::vector<OpId> deps = {freed};
    if (first_forward) deps.insert(deps.end(), nth(ready_for_use_, l).begin(),
                                   nth(ready_for_use_, l).end());
    ready = {add_transfer(-1, l, Payload::weights, options_.tiers.weights, Tier::device, layer(l).weight_bytes, deps)};
  }

  // Issued `prefetch_depth` visits ahead: a backward visit's checkpoint comes back.
  void visit_ahead(int v, OpId freed) {
    const Visit& visit = nth(visits_, v);
    if (visit.kind != OpKind::backward || !offloaded(options_.tiers.checkpoints)) return;
    const std::size_t s = slot(visit.layer, visit.micro_batch);
    checkpoint_in_[s] = add_transfer(-1, visit.layer, Payload::checkpoint, options_.tiers.checkpoints, Tier::device,
                                     layer(visit.layer).checkpoint_bytes / options_.micro_batches,
                                     {checkpoint_out_[s], freed});
  }

  OpId emit_visit(std::size_t v) {
    const Visit& visit = visits_[v];
    const LayerWork& w = layer(visit.layer);
    const int m_count = options_.micro_batches;
    Op op = make_op(visit.kind, Resource::device, visit.layer);
    op.micro_batch = visit.micro_batch;
    op.cost = per_micro_batch(visit.kind == OpKind::forward ? w.forward : w.backward, m_count);
    if (visit.kind == OpKind::backward && options_.recompute_activations)
      op.cost.merge(per_micro_batch(w.forward, m_count));  // the forward again, for the activations not kept
    const int r = run_of_[v];
    if (nth(runs_, r).first == v)
      for (OpId d : nth(ready_of_run_, r)) op.deps.push_back(d);
    if (visit.kind == OpKind::forward && nth(first_forward_, visit.layer) == static_cast<int>(v))
      for (OpId d : nth(ready_for_use_, visit.layer)) op.deps.push_back(d);
    const std::size_t s = slot(visit.layer, visit.micro_batch);
    if (visit.kind == OpKind::backward && checkpoint_in_[s] >= 0) op.deps.push_back(checkpoint_in_[s]);
    // Stream order: after the prior visit.
    if (v > 0) op.deps.insert(op.deps.begin(), op_of_visit_[v - 1]);
    const OpId id = add(std::move(op));
    op_of_visit_[v] = id;
    // Forward hooks: start moving the state of the blocks updated first (backward order), the
    // k-th layer's first forward prefetching the k-th hooked layer's blocks.
    if (visit.kind == OpKind::forward && nth(first_forward_, visit.layer) == static_cast<int>(v)) {
      const int hooked = static_cast<int>(layers_.size()) - 1 - visit.layer;
      for (int b : nth(by_layer_, hooked)) add(block_op(OpKind::prefetch, Resource::issuer, b));
      after_first_forward(visit.layer);
    }
    if (visit.kind == OpKind::forward && offloaded(options_.tiers.checkpoints))
      checkpoint_out_[s] = add_transfer(-1, visit.layer, Payload::checkpoint, Tier::device, options_.tiers.checkpoints,
                                        w.checkpoint_bytes / m_count, {id});
    return id;
  }

  // Gradient buckets (DDP's): adjacent layers join the open bucket as their gradients complete;
  // it closes once it holds bucket_bytes (each layer alone at 0) and, with sharded gradients, its
  // shares are whole and even. Returns the index of the bucket l joined (gradient_buckets_).
  int add_to_bucket(int l, OpId backward) {
    if (open_.last_layer >= 0 && l != open_.first_layer - 1 && l != open_.last_layer + 1) close_bucket();
    if (open_.last_layer < 0) open_ = {l, l, {}};
    open_.first_layer = std::min(open_.first_layer, l);
    open_.last_layer = std::max(open_.last_layer, l);
    open_bytes_ += layer(l).gradient_bytes;
    open_shares_.add_layer(l);
    open_ready_ = backward;
    const auto index = static_cast<int>(gradient_buckets_.size());
    if (open_bytes_ >= options_.bucket_bytes &&
        (!shards_gradients(options_.parallelism) || open_shares_.whole_and_even(open_)))
      close_bucket();
    return index;
  }

  // The open bucket's collectives after its last backward (gradient_collectives; one communicator
  // runs them in order); the last is the bucket's gate.
  void close_bucket() {
    if (open_.last_layer < 0) return;
    GradientBucket closed{open_.first_layer, open_.last_layer, -1};
    const double wire = static_cast<double>(platform::bytes_per_element(options_.reduce_dtype)) / 4.0;
    for (BucketCollective& c :
         gradient_collectives(blocks_, options_.data_parallel_ranks, options_.parallelism, open_, open_bytes_)) {
      Op op = make_op(c.kind, Resource::network, c.bucket.first_layer);
      op.bucket = static_cast<int>(plan_.buckets.size());
      op.cost = platform::Cost{platform::WorkKind::other, 0.0, c.bytes * wire, 0};
      op.deps = {open_ready_};
      if (closed.gate >= 0) op.deps.push_back(closed.gate);
      plan_.buckets.push_back(std::move(c.bucket));
      closed.gate = add(std::move(op));
    }
    gradient_buckets_.push_back(closed);
    open_ = {-1, -1, {}};
    open_bytes_ = 0.0;
    open_shares_.clear();
  }

  // The gathers of `layers`' owned blocks (weight_gathers), after `deps` and, `after_updates`,
  // this rank's updates of their blocks; each names a bucket of its own. Returns them.
  std::vector<OpId> gather(const BucketInfo& layers, std::vector<OpId> deps, bool after_updates = false) {
    std::erase(deps, -1);
    std::vector<OpId> gathers;
    for (BucketCollective& c : weight_gathers(layers_, blocks_, options_.data_parallel_ranks, layers)) {
      Op op = make_op(OpKind::gather, Resource::network, c.bucket.first_layer);
      op.bucket = static_cast<int>(plan_.buckets.size());
      op.cost = platform::Cost{platform::WorkKind::other, 0.0, c.bytes, 0};
      op.deps = deps;
      for (int b : c.bucket.blocks)
        if (after_updates && nth(update_of_, b) >= 0) op.deps.push_back(nth(update_of_, b));
      plan_.buckets.push_back(std::move(c.bucket));
      gathers.push_back(add(std::move(op)));
    }
    return gathers;
  }

  // zero1, zero2: the new weights of `layers`' blocks, after this rank's updates of them.
  void after_updates(const BucketInfo& layers) { gather(layers, {}, /*after_updates=*/true); }

  // Releases the listed blocks updated where `host` says once all of those updates are done (and
  // after `gate`).
  void release_blocks(const std::vector<int>& members, bool host, OpId gate) {
    std::vector<OpId> updates;
    for (int b : members)
      if (on_host(b) == host) updates.push_back(nth(update_of_, b));
    for (int b : members) {
      if (on_host(b) != host) continue;
      Op op = block_op(OpKind::release, Resource::issuer, b);
      if (gate >= 0) op.deps.push_back(gate);
      op.deps.insert(op.deps.end(), updates.begin(), updates.end());
      add(std::move(op));
    }
  }

  void release_device_blocks(int l, OpId gate) { release_blocks(nth(by_layer_, l), false, gate); }

  // Where a block's new weights go after its update: from the host (a host update) or the device
  // to where weights rest; -1 when they are there already.
  OpId weights_back(int b) {
    const Tier at = on_host(b) ? Tier::host : Tier::device;
    if (at == options_.tiers.weights) return -1;
    return add_transfer(b, block(b).layer, Payload::weights, at, options_.tiers.weights, block(b).weight_bytes,
                        {nth(update_of_, b)});
  }

  // The new weights of the host-updated blocks of the hooked layer `h` go where weights rest,
  // then the blocks are released (nothing in the step needs those weights: they must be there
  // before the next step's first use).
  void finish_host_blocks(int l, OpId gate) {
    const auto it = std::find(hooked_.begin(), hooked_.end(), l);
    nth(finished_, it - hooked_.begin()) = true;
    for (int b : nth(by_layer_, l))
      if (on_host(b)) weights_back(b);
    release_blocks(nth(by_layer_, l), true, gate);
  }

  // The gradient of block b where its update reads it: down to the host for a host update
  // (unless gradients rest there), back up for a device update when they rest elsewhere.
  OpId gradient_to_update(int b, OpId gate) {
    const Tier rests = options_.tiers.gradients;
    const Tier reads = on_host(b) ? Tier::host : Tier::device;
    if (rests == reads) return -1;
    return add_transfer(b, block(b).layer, Payload::gradient, rests, reads, block(b).gradient_bytes, {gate});
  }

  // Acquire, optimizer phases and update of `members` (one layer's), after `gate`; the
  // device-charged ones in one launch `label`; fills update_of_.
  void optimizer_step(const std::vector<int>& members, OpId gate, const std::vector<OpId>& gradient_moves,
                      const std::string& label) {
    std::vector<OpId> acquired;
    for (int b : members) acquired.push_back(add(block_op(OpKind::acquire, Resource::issuer, b), gate));
    const int device_launch = add_launch(Resource::device, label);
    std::vector<int> launch_of(members.size());
    std::vector<OpId> last(members.size(), -1);
    // One optimizer op of block members[i], after the block's previous one (the reference order).
    auto chain = [&](std::size_t i, OpKind kind, Resource where, platform::Cost cost, int own_launch) {
      Op op = block_op(kind, where, members[i]);
      op.cost = cost;
      op.launch = own_launch;
      op.hook = device_launch;
      if (last[i] < 0) {
        if (gate >= 0) op.deps.push_back(gate);
        op.deps.push_back(acquired[i]);
      } else {
        op.deps = {last[i]};
      }
      if (kind == OpKind::accumulate && gradient_moves[i] >= 0) op.deps.push_back(gradient_moves[i]);
      last[i] = add(std::move(op));
      return last[i];
    };
    // First every block's publication point, statistics and refresh, then every update: the
    // updates go out together (one multi-tensor launch on the device, host tasks in block order).
    for (std::size_t i = 0; i < members.size(); ++i) {
      const BlockWork& w = block(members[i]);
      if (w.update_on == Resource::device) {
        launch_of[i] = device_launch;
      } else {
        launch_of[i] = add_launch(w.update_on, "host optimizer " + w.label);
        if (options_.host_piece_bytes > 0.0)
          plan_.launches.back().pieces = static_cast<int>(std::clamp(
              std::ceil(w.weight_bytes / options_.host_piece_bytes), 1.0, static_cast<double>(options_.max_host_pieces)));
      }
      if (w.activation_delay == 1) chain(i, OpKind::publish, w.update_on, w.publish, launch_of[i]);
      chain(i, OpKind::accumulate, w.update_on, w.accumulate, launch_of[i]);
      chain(i, OpKind::refresh, Resource::issuer, {}, -1);
      if (w.activation_delay == 0) chain(i, OpKind::publish, w.update_on, w.publish, launch_of[i]);
    }
    for (std::size_t i = 0; i < members.size(); ++i) {
      const BlockWork& w = block(members[i]);
      update_of_[static_cast<std::size_t>(members[i])] = chain(i, OpKind::update, w.update_on, w.apply, launch_of[i]);
    }
  }

  // What runs once layer l's gradient exists (`gradient`: its last backward, or its move to where
  // gradients rest) and is the one the optimizer reads (`gate`: that, or the gradient's reduce).
  void hook(int l, OpId gradient, OpId gate) {
    if (last_hooked_ >= 0) release_device_blocks(last_hooked_, gradient);
    hooked_.push_back(l);
    finished_.push_back(false);
    if (static_cast<int>(hooked_.size()) > delay_) {
      const std::size_t due = hooked_.size() - 1 - static_cast<std::size_t>(delay_);
      if (!finished_[due]) finish_host_blocks(hooked_[due], gradient);
    }
    last_hooked_ = l;
    // The gradients of deferred host-updated blocks go down now; their step runs in the next plan.
    for (int b : nth(deferred_by_layer_, l))
      if (on_host(b)) gradient_to_update(b, gate);
    const auto& members = nth(by_layer_, l);
    if (members.empty()) return;
    std::vector<OpId> moves;
    for (int b : members) moves.push_back(gradient_to_update(b, gate));
    optimizer_step(members, gate, moves, "optimizer " + layer(l).name);
    // A device update's new weights go back to where weights rest (the next fetch reads them).
    for (int b : members)
      if (!on_host(b)) weights_back(b);
  }

  // The previous step's deferred blocks of layer l: their whole optimizer step, carried, before
  // the layer's first forward of this step. ready_for_use_[l] collects what that forward (and
  // the fetch of its weights) waits for.
  void carried_hook(int l) {
    const auto& members = nth(deferred_by_layer_, l);
    if (members.empty()) return;
    carrying_ = true;
    std::vector<OpId> moves;
    for (int b : members) {
      // A device update of weights that rest elsewhere fetches them first; a deferred device
      // update whose gradient rests off the device brings it back.
      OpId fetched = -1;
      if (!on_host(b) && offloaded(options_.tiers.weights))
        fetched = add_transfer(b, l, Payload::weights, options_.tiers.weights, Tier::device, block(b).weight_bytes, {});
      const OpId gradient = on_host(b) ? -1 : gradient_to_update(b, -1);
      moves.push_back(gradient >= 0 ? gradient : fetched);
      if (gradient >= 0 && fetched >= 0) nth(plan_.ops, gradient).deps.push_back(fetched);
    }
    optimizer_step(members, -1, moves, "carried optimizer " + layer(l).name);
    for (int b : members) {
      const OpId back = weights_back(b);
      nth(ready_for_use_, l).push_back(back >= 0 ? back : nth(update_of_, b));
    }
    carrying_ = false;
  }

  // Carried hooks go out in layer order, `defer_lookahead` layers ahead of the forward (all of
  // them at the step's start by default), so the host workers run the deferred updates while the
  // device runs the forward of the layers before.
  void carry_up_to(int l) {
    for (; next_carried_ <= std::min(l, static_cast<int>(layers_.size()) - 1); ++next_carried_) carried_hook(next_carried_);
  }

  // After a layer's first forward (which waited for its carried updates): its carried blocks are
  // released, and the carried hook `defer_lookahead` layers on goes out.
  void after_first_forward(int l) {
    const bool was = std::exchange(carrying_, true);
    const auto& members = nth(deferred_by_layer_, l);
    release_blocks(members, false, -1);
    release_blocks(members, true, -1);
    carrying_ = was;
    carry_up_to(l + carried_lookahead());
  }

  int carried_lookahead() const {
    return options_.defer_lookahead > 0 ? options_.defer_lookahead : static_cast<int>(layers_.size());
  }

  const std::vector<LayerWork>& layers_;
  const std::vector<BlockWork>& blocks_;
  ScheduleOptions options_;
  std::vector<std::vector<int>> by_layer_;           // blocks hooked in the backward
  std::vector<std::vector<int>> deferred_by_layer_;  // blocks whose step is carried into the next plan
  std::vector<OpId> update_of_;
  BucketInfo open_{-1, -1, {}};  // the bucket filling up (last_layer -1: none)
  double open_bytes_ = 0.0;
  ShareTally open_shares_{blocks_, options_.data_parallel_ranks, &BlockWork::gradient_bytes};
  OpId open_ready_ = -1;     // the backward after which the open bucket's gradients are complete
  // A gradient bucket's layers and the op its hooks wait for (its last collective).
  struct GradientBucket {
    int first_layer = 0;
    int last_layer = 0;
    OpId gate = -1;
  };
  std::vector<GradientBucket> gradient_buckets_;
  std::vector<std::vector<OpId>> ready_for_use_;  // per layer: carried ops its first forward waits for
  int delay_;  // host release delay, in [1, layers]
  std::vector<Visit> visits_;
  std::vector<Run> runs_;
  std::vector<int> run_of_;
  std::vector<std::vector<OpId>> ready_of_run_;  // per run: its weights' fetch or gathers
  std::vector<int> units_;                        // fsdp: per layer, its unit (fsdp_units)
  std::vector<std::vector<OpId>> kept_;           // fsdp kept (not resharded after use): per unit
  std::vector<OpId> op_of_visit_;
  std::vector<OpId> checkpoint_out_;  // per (layer, micro-batch)
  std::vector<OpId> checkpoint_in_;
  std::vector<OpId> gradient_out_;  // per layer: its last move to where gradients rest
  std::vector<int> last_backward_;  // per layer: its last backward visit
  std::vector<int> first_forward_;  // per layer: its first forward visit
  std::vector<int> hooked_;         // layers in hook order
  std::vector<bool> finished_;      // per hooked layer: its host-updated blocks finished
  int last_hooked_ = -1;
  bool carrying_ = false;  // ops added now are carried
  int next_carried_ = 0;  // the next layer whose carried hook has not gone out
  StepPlan plan_;
};

}  // namespace

StepPlan schedule_plan(const std::vector<LayerWork>& layers, const std::vector<BlockWork>& blocks,
                       const ScheduleOptions& options) {
  validate_schedule_inputs(layers, blocks, options);
  return Builder(layers, blocks, options).build();
}

StepPlan weights_gather_plan(const std::vector<LayerWork>& layers, const std::vector<BlockWork>& blocks,
                             const ScheduleOptions& options) {
  validate_schedule_inputs(layers, blocks, options);
  return Builder(layers, blocks, options).build_weights_gathers();
}

}  // namespace asteria::plan

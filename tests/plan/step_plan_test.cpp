// What makes a plan valid, what the horizontal schedule promises about its ops, and the facts the
// runtime reads off a plan (the store's use order, when launches go out).
#include <gtest/gtest.h>

#include <algorithm>

#include "core/common/error.hpp"
#include "core/plan/schedule.hpp"

namespace asteria::plan {
namespace {

platform::Cost gemm(double flops) { return {platform::WorkKind::gemm, flops, flops / 1000.0, 8}; }

// Three layers of two blocks; block b's gradient is 100 + b bytes and its weights 200 + b.
StepPlan small_plan(Resource update_on = Resource::device, int delay = 1, int host_release_delay = 0) {
  std::vector<LayerWork> layers = {{"l0", gemm(1e9), gemm(2e9), 64.0}, {"l1", gemm(1e9), gemm(2e9), 64.0},
                                   {"l2", gemm(1e9), gemm(2e9), 64.0}};
  std::vector<BlockWork> blocks;
  for (int l = 0; l < 3; ++l)
    for (int b = 0; b < 2; ++b) {
      const double id = static_cast<double>(blocks.size());
      std::string label = "l";  // appended piece by piece: GCC 12 warns falsely (-Wrestrict) on a + chain
      label += std::to_string(l);
      label += '/';
      label += std::to_string(b);
      blocks.push_back({l, std::move(label), delay, update_on, gemm(1e6), gemm(2e6), gemm(3e6), 100.0 + id, 200.0 + id});
    }
  return schedule_plan(layers, blocks, {.host_release_delay = host_release_delay});
}

// Index of the first op matching `match`, -1 if none.
template <class Match>
OpId find_op(const StepPlan& plan, Match match) {
  const auto it = std::find_if(plan.ops.begin(), plan.ops.end(), match);
  return it == plan.ops.end() ? -1 : static_cast<OpId>(it - plan.ops.begin());
}

std::string field_of(const StepPlan& plan) {
  try {
    validate(plan, "test plan");
  } catch (const InputError& e) {
    return e.field();
  }
  return "";
}

TEST(StepPlan, TheStoreUsesBlocksInBackwardOrder) {
  const StepPlan plan = small_plan();
  EXPECT_EQ(block_use_order(plan), (std::vector<int>{4, 5, 2, 3, 0, 1}));
  // Prefetches during the forward pass ask for them in that order too.
  std::vector<int> prefetched;
  for (const Op& op : plan.ops)
    if (op.kind == OpKind::prefetch) prefetched.push_back(op.block);
  EXPECT_EQ(prefetched, block_use_order(plan));
}

TEST(StepPlan, BlocksHeldTogetherAreALayerAndTheHostUpdatesStillInFlight) {
  // Device updates: a layer's blocks are acquired together and released at the next hook, so
  // each peak is one layer.
  EXPECT_EQ(blocks_held_together(small_plan()), (std::vector<std::vector<int>>{{4, 5}, {2, 3}, {0, 1}}));
  // Host updates with a release delay of 2 layers: two layers are held at once.
  const std::vector<std::vector<int>> host = blocks_held_together(small_plan(Resource::host, 0, 2));
  ASSERT_FALSE(host.empty());
  std::size_t largest = 0;
  for (const std::vector<int>& set : host) largest = std::max(largest, set.size());
  EXPECT_EQ(largest, 4U);
}

TEST(StepPlan, BlocksRefreshedBeforeTheirUpdateAreOneHookAtATime) {
  // A hook refreshes every block of its layer, then updates them all: each peak is one layer,
  // wherever the updates run.
  for (Resource site : {Resource::device, Resource::host})
    EXPECT_EQ(blocks_refreshed_before_update(small_plan(site)), (std::vector<std::vector<int>>{{4, 5}, {2, 3}, {0, 1}}))
        << to_string(site);
}

TEST(StepPlan, EveryBlockGoesThroughItsPhasesInTheReferenceOrder) {
  for (int delay : {0, 1}) {
    const StepPlan plan = small_plan(Resource::device, delay);
    for (int b = 0; b < 6; ++b) {
      std::vector<OpKind> kinds;
      for (const Op& op : plan.ops)
        if (op.block == b) kinds.push_back(op.kind);
      const std::vector<OpKind> expected =
          delay == 1 ? std::vector<OpKind>{OpKind::prefetch, OpKind::acquire, OpKind::publish, OpKind::accumulate,
                                           OpKind::refresh, OpKind::update, OpKind::release}
                     : std::vector<OpKind>{OpKind::prefetch, OpKind::acquire, OpKind::accumulate, OpKind::refresh,
                                           OpKind::publish, OpKind::update, OpKind::release};
      EXPECT_EQ(kinds, expected) << "block " << b << ", delay " << delay;
    }
  }
}

TEST(StepPlan, DependenciesPointBackwardsAndGateEachLayerOnItsGradient) {
  const StepPlan plan = small_plan();
  for (std::size_t i = 0; i < plan.ops.size(); ++i)
    for (OpId d : plan.ops[i].deps) EXPECT_LT(d, static_cast<OpId>(i));
  // Every acquire waits for its own layer's backward.
  for (const Op& op : plan.ops) {
    if (op.kind != OpKind::acquire) continue;
    ASSERT_EQ(op.deps.size(), 1u);
    const Op& gate = plan.ops[static_cast<std::size_t>(op.deps[0])];
    EXPECT_EQ(gate.kind, OpKind::backward);
    EXPECT_EQ(gate.layer, op.layer);
  }
}

TEST(StepPlan, HostUpdatesAreHostLaunchesCarriedByTheLayersDeviceHook) {
  const StepPlan plan = small_plan(Resource::host);
  const std::vector<OpId> submitted = launch_submit_points(plan);
  int host_launches = 0;
  for (std::size_t l = 0; l < plan.launches.size(); ++l) {
    if (plan.launches[l].on != Resource::host) continue;
    ++host_launches;
    // A host launch holds one block's accumulate, publish and update, and goes out at its update.
    const Op& last = plan.ops[static_cast<std::size_t>(submitted[l])];
    EXPECT_EQ(last.kind, OpKind::update);
    for (const Op& op : plan.ops)
      if (op.launch == static_cast<int>(l)) {
        EXPECT_EQ(op.block, last.block);
        EXPECT_EQ(op.on, Resource::host);
        ASSERT_GE(op.hook, 0);
        EXPECT_EQ(plan.launches[static_cast<std::size_t>(op.hook)].on, Resource::device);
      }
  }
  EXPECT_EQ(host_launches, 6);
}

TEST(StepPlan, AtTheHookLaunchAHostOpIsChargedToTheDeviceLaunchThatComputesIt) {
  for (const Resource on : {Resource::device, Resource::host}) {
    const StepPlan plan = small_plan(on);
    const auto own = launch_charges(plan, NumericsSite::own_launch);
    const auto hook = launch_charges(plan, NumericsSite::hook_launch);
    ASSERT_EQ(own.size(), plan.launches.size());
    ASSERT_EQ(hook.size(), plan.launches.size());
    std::size_t charged_own = 0, charged_hook = 0;
    for (std::size_t l = 0; l < plan.launches.size(); ++l) {
      charged_own += own[l].size();
      charged_hook += hook[l].size();
      for (OpId i : own[l]) EXPECT_EQ(plan.ops[static_cast<std::size_t>(i)].launch, static_cast<int>(l));
      if (plan.launches[l].on == Resource::host) {
        EXPECT_TRUE(hook[l].empty()) << "host launch " << l << " keeps ops at the hook launch";
        continue;
      }
      // A device launch: its own ops, then (in plan order) the host ops it is the hook of.
      EXPECT_TRUE(std::is_sorted(hook[l].begin(), hook[l].end()));
      for (OpId i : hook[l]) {
        const Op& op = plan.ops[static_cast<std::size_t>(i)];
        EXPECT_TRUE(op.launch == static_cast<int>(l) || op.hook == static_cast<int>(l));
      }
    }
    EXPECT_EQ(charged_own, charged_hook) << "every launch op is charged exactly once at either site";
    if (on == Resource::device) {
      EXPECT_EQ(own, hook);
    }
  }
  EXPECT_EQ(parse_numerics_site("hook_launch", "t", "f"), NumericsSite::hook_launch);
  EXPECT_EQ(to_string(NumericsSite::own_launch), "own_launch");
  EXPECT_THROW(parse_numerics_site("device", "t", "f"), InputError);
}

TEST(StepPlan, InvalidPlansNameTheFieldAtFault) {
  {
    StepPlan plan = small_plan();
    plan.ops[3].deps.push_back(7);  // a later op
    EXPECT_EQ(field_of(plan), "ops[3].deps");
  }
  {
    StepPlan plan = small_plan();
    plan.ops[0].on = Resource::host;  // a forward on the host workers
    EXPECT_EQ(field_of(plan), "ops[0].on");
  }
  {
    StepPlan plan = small_plan();
    auto it = std::find_if(plan.ops.begin(), plan.ops.end(), [](const Op& op) { return op.kind == OpKind::acquire; });
    it->block = 99;
    EXPECT_EQ(field_of(plan), "ops[" + std::to_string(it - plan.ops.begin()) + "].block");
  }
  {
    StepPlan plan = small_plan();
    auto it = std::find_if(plan.ops.begin(), plan.ops.end(), [](const Op& op) { return op.kind == OpKind::acquire; });
    it->hook = 0;  // only optimizer ops have a hook
    EXPECT_EQ(field_of(plan), "ops[" + std::to_string(it - plan.ops.begin()) + "].hook");
  }
  {
    // An op outside a launch that waits for one of its ops before the launch has gone out.
    StepPlan plan = small_plan();
    auto upd = std::find_if(plan.ops.begin(), plan.ops.end(), [](const Op& op) { return op.kind == OpKind::accumulate; });
    const OpId inside = static_cast<OpId>(upd - plan.ops.begin());
    Op waiter;
    waiter.kind = OpKind::prefetch;
    waiter.on = Resource::issuer;
    waiter.layer = upd->layer;
    waiter.block = upd->block;
    waiter.deps = {inside};
    plan.ops.insert(plan.ops.begin() + inside + 1, waiter);
    for (std::size_t i = static_cast<std::size_t>(inside) + 2; i < plan.ops.size(); ++i)
      for (OpId& d : plan.ops[i].deps)
        if (d > inside) ++d;
    EXPECT_EQ(field_of(plan), "ops[" + std::to_string(inside + 1) + "].deps");
  }
  {
    StepPlan plan = small_plan();
    auto it = std::find_if(plan.ops.begin(), plan.ops.end(), [](const Op& op) { return op.kind == OpKind::refresh; });
    it->hook = -1;  // an optimizer op whose numerics no launch carries
    EXPECT_EQ(field_of(plan), "ops[" + std::to_string(it - plan.ops.begin()) + "].hook");
  }
  {
    // Gradient buckets: a reduce names a bucket of the plan and that bucket's first layer, and a
    // bucket's layers are in range and in order.
    const std::vector<LayerWork> layers = {{"l0", gemm(1e9), gemm(2e9), 64.0}, {"l1", gemm(1e9), gemm(2e9), 64.0}};
    const StepPlan two = schedule_plan(layers, {}, {.data_parallel_ranks = 2, .bucket_bytes = 0.0});
    const OpId r = find_op(two, [](const Op& op) { return op.kind == OpKind::reduce; });
    ASSERT_GE(r, 0);
    EXPECT_EQ(field_of(two), "");
    StepPlan plan = two;
    plan.ops[static_cast<std::size_t>(r)].bucket = 2;
    EXPECT_EQ(field_of(plan), "ops[" + std::to_string(r) + "].bucket");
    plan = two;
    plan.ops[static_cast<std::size_t>(r)].layer = 1 - plan.ops[static_cast<std::size_t>(r)].layer;
    EXPECT_EQ(field_of(plan), "ops[" + std::to_string(r) + "].layer");
    plan = two;
    plan.buckets[1] = {1, 0};
    EXPECT_EQ(field_of(plan), "buckets[1]");
    plan.buckets[1] = {0, 2};
    EXPECT_EQ(field_of(plan), "buckets[1]");
  }
  {
    StepPlan plan = small_plan(Resource::host);
    const OpId t = find_op(plan, [](const Op& op) { return op.kind == OpKind::transfer; });
    plan.ops[static_cast<std::size_t>(t)].to = plan.ops[static_cast<std::size_t>(t)].from;  // nowhere to go
    EXPECT_EQ(field_of(plan), "ops[" + std::to_string(t) + "].to");
    plan = small_plan(Resource::host);
    plan.ops[static_cast<std::size_t>(t)].on = Resource::issuer;  // a transfer runs on the link
    EXPECT_EQ(field_of(plan), "ops[" + std::to_string(t) + "].on");
  }
  EXPECT_THROW(schedule_plan({}, {}), InputError);
  EXPECT_THROW(schedule_plan({{"a", {}, {}, 0.0}}, {{0, "x", 0, Resource::host, {}, {}, {}, -1.0, 0.0}}), InputError);
  EXPECT_THROW(schedule_plan({{"a", {}, {}, 0.0}}, {}, {.host_release_delay = -1}), InputError);
  EXPECT_THROW(schedule_plan({{"a", {}, {}, 0.0}}, {{1, "x", 0, Resource::device, {}, {}, {}}}), InputError);
  EXPECT_THROW(schedule_plan({{"a", {}, {}, 0.0}}, {}, {.micro_batches = 0}), InputError);
  EXPECT_THROW(schedule_plan({{"a", {}, {}, 0.0}}, {}, {.bucket_bytes = -1.0}), InputError);
}

TEST(OpKinds, NamesReadBack) {
  for (int k = 0; k < kOpKindCount; ++k) {
    const auto kind = static_cast<OpKind>(k);
    EXPECT_EQ(parse_op_kind(to_string(kind), "test", "kind"), kind);
  }
  EXPECT_EQ(to_string(OpKind::transfer), "transfer");
  EXPECT_THROW(parse_op_kind("jump", "test", "kind"), InputError);
  EXPECT_EQ(parse_resource("network", "test", "on"), Resource::network);
  EXPECT_EQ(parse_resource("link", "test", "on"), Resource::link);
  EXPECT_TRUE(is_block_op(OpKind::transfer));
  EXPECT_FALSE(is_optimizer_op(OpKind::transfer));
}

// A host update moves its block's gradient down before it and the new weights up after it:
// backward(layer) -> transfer device->host (gradient bytes) -> accumulate .. update on the host
// -> transfer host->device (weight bytes). Device updates move nothing.
TEST(StepPlan, HostUpdatesMoveTheGradientDownAndTheWeightsUp) {
  EXPECT_EQ(small_plan(Resource::device).count(OpKind::transfer), 0u);
  const StepPlan plan = small_plan(Resource::host);
  EXPECT_EQ(plan.count(OpKind::transfer), 12u);  // two per block
  for (int b = 0; b < 6; ++b) {
    SCOPED_TRACE("block " + std::to_string(b));
    const auto of_block = [b](OpKind kind) { return [b, kind](const Op& op) { return op.block == b && op.kind == kind; }; };
    const OpId down = find_op(plan, [b](const Op& op) {
      return op.block == b && op.kind == OpKind::transfer && op.from == platform::Tier::device;
    });
    const OpId up = find_op(plan, [b](const Op& op) {
      return op.block == b && op.kind == OpKind::transfer && op.from == platform::Tier::host;
    });
    ASSERT_GE(down, 0);
    ASSERT_GE(up, 0);
    const Op& d = plan.ops[static_cast<std::size_t>(down)];
    const Op& u = plan.ops[static_cast<std::size_t>(up)];
    EXPECT_EQ(d.on, Resource::link);
    EXPECT_EQ(d.to, platform::Tier::host);
    EXPECT_EQ(u.to, platform::Tier::device);
    EXPECT_EQ(d.cost.bytes(), 100.0 + b);
    EXPECT_EQ(u.cost.bytes(), 200.0 + b);
    // The gradient leaves once its layer's backward is done; the host accumulate reads it.
    ASSERT_EQ(d.deps.size(), 1u);
    EXPECT_EQ(plan.ops[static_cast<std::size_t>(d.deps[0])].kind, OpKind::backward);
    EXPECT_EQ(plan.ops[static_cast<std::size_t>(d.deps[0])].layer, d.layer);
    const Op& accumulate = plan.ops[static_cast<std::size_t>(find_op(plan, of_block(OpKind::accumulate)))];
    EXPECT_NE(std::find(accumulate.deps.begin(), accumulate.deps.end(), down), accumulate.deps.end());
    // The weights leave once the update is done.
    EXPECT_EQ(u.deps, std::vector<OpId>{find_op(plan, of_block(OpKind::update))});
    EXPECT_LT(up, find_op(plan, of_block(OpKind::release)));
  }
  EXPECT_NE(to_text(plan).find("transfer layer=2 block=4 gradient from=device to=host on=link cost=other/0/104/0"),
            std::string::npos)
      << to_text(plan);
}

// With host release delay D the host-updated blocks of layer m are finished (weights up, then
// released) in the hook of layer m - D, or after the last hook when m < D; device-updated blocks
// are released at the next layer's hook whatever D is, so device plans do not depend on it. A
// layer with host updates waits for its gradient's move to the host: its hook is issued after
// the next layer's backward (the hook of layer k between backward(k - 1) and backward(k - 2)).
TEST(StepPlan, HostReleaseDelayFinishesHostBlocksDLayersLater) {
  EXPECT_EQ(to_text(small_plan(Resource::device, 1, 3)), to_text(small_plan(Resource::device, 1, 1)));
  EXPECT_EQ(to_text(small_plan(Resource::host, 1, 0)), to_text(small_plan(Resource::host, 1, 1)));
  for (int d : {1, 2, 3, 7}) {
    SCOPED_TRACE("D = " + std::to_string(d));
    const StepPlan plan = small_plan(Resource::host, 1, d);
    for (int m = 0; m < 3; ++m) {
      const OpId backward_m = find_op(plan, [m](const Op& op) { return op.kind == OpKind::backward && op.layer == m; });
      const int after = std::max(m - d - 1, 0);
      const OpId finished_after =
          find_op(plan, [&](const Op& op) { return op.kind == OpKind::backward && op.layer == after; });
      const OpId next_backward =
          m - d - 2 >= 0 ? find_op(plan, [&](const Op& op) { return op.kind == OpKind::backward && op.layer == m - d - 2; })
                         : static_cast<OpId>(plan.ops.size());
      for (const Op& op : plan.ops) {
        const auto i = static_cast<OpId>(&op - plan.ops.data());
        const bool finishing = op.layer == m && (op.kind == OpKind::release ||
                                                 (op.kind == OpKind::transfer && op.from == platform::Tier::host));
        if (!finishing) continue;
        EXPECT_GT(i, std::max(backward_m, finished_after)) << to_string(op.kind) << " of layer " << m;
        EXPECT_LT(i, next_backward) << to_string(op.kind) << " of layer " << m;
      }
    }
  }
}

}  // namespace
}  // namespace asteria::plan

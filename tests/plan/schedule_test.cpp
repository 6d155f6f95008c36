// The vertical schedule (GreedySnake) against the horizontal one: visit orders, how often each
// schedule moves weights, gradients and checkpoints when they rest off the device, and deferred
// (carried) updates.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "core/common/error.hpp"
#include "core/plan/schedule.hpp"

namespace asteria::plan {
namespace {

using platform::Tier;

platform::Cost gemm(double flops) { return {platform::WorkKind::gemm, flops, flops / 1000.0, 8}; }

// L layers of one weight each, two blocks per layer (100 B of weights each), the second of each
// layer updated where `second_on` says.
std::vector<LayerWork> layers(int count) {
  std::vector<LayerWork> out;
  for (int l = 0; l < count; ++l)
    out.push_back({"l" + std::to_string(l), gemm(1e9), gemm(2e9), 800.0, 400.0, 1000.0});
  return out;
}
std::vector<BlockWork> blocks(int count, Resource second_on = Resource::device) {
  std::vector<BlockWork> out;
  for (int l = 0; l < count; ++l)
    for (int b = 0; b < 2; ++b)
      out.push_back({l, "l" + std::to_string(l) + "/" + std::to_string(b), 0, b == 1 ? second_on : Resource::device,
                     gemm(1e6), gemm(1e6), {}, 100.0, 100.0});
  return out;
}

std::vector<std::pair<int, int>> visits(const StepPlan& plan, OpKind kind) {
  std::vector<std::pair<int, int>> out;
  for (const Op& op : plan.ops)
    if (op.kind == kind) out.emplace_back(op.layer, op.micro_batch);
  return out;
}

std::size_t transfers(const StepPlan& plan, Payload payload, Tier from, Tier to, bool layer_level = true) {
  return static_cast<std::size_t>(std::count_if(plan.ops.begin(), plan.ops.end(), [&](const Op& op) {
    return op.kind == OpKind::transfer && op.payload == payload && op.from == from && op.to == to &&
           (op.block < 0) == layer_level;
  }));
}

TEST(Schedule, VerticalVisitsEveryMicroBatchOfALayerBeforeTheNextInSnakeOrder) {
  const StepPlan plan = schedule_plan(layers(3), blocks(3), {.order = ScheduleOrder::vertical, .micro_batches = 3});
  EXPECT_EQ(plan.schedule, "vertical");
  using V = std::vector<std::pair<int, int>>;
  EXPECT_EQ(visits(plan, OpKind::forward), (V{{0, 0}, {0, 1}, {0, 2}, {1, 2}, {1, 1}, {1, 0}, {2, 0}, {2, 1}, {2, 2}}));
  // The backward starts with the micro-batch the forward ended with, and keeps reversing.
  EXPECT_EQ(visits(plan, OpKind::backward), (V{{2, 2}, {2, 1}, {2, 0}, {1, 0}, {1, 1}, {1, 2}, {0, 2}, {0, 1}, {0, 0}}));
  const StepPlan horizontal = schedule_plan(layers(3), blocks(3), {.micro_batches = 3});
  EXPECT_EQ(visits(horizontal, OpKind::forward).front(), (std::pair{0, 0}));
  EXPECT_EQ(visits(horizontal, OpKind::forward)[1], (std::pair{1, 0}));
  // Micro-batch after micro-batch: the second one's forward follows the first one's backward.
  const auto first_of_second = std::find_if(horizontal.ops.begin(), horizontal.ops.end(), [](const Op& op) {
    return op.kind == OpKind::forward && op.micro_batch == 1;
  });
  const auto last_of_first = std::find_if(horizontal.ops.rbegin(), horizontal.ops.rend(), [](const Op& op) {
    return op.kind == OpKind::backward && op.micro_batch == 0;
  });
  EXPECT_LT(std::distance(horizontal.ops.begin(), last_of_first.base()) - 1,
            std::distance(horizontal.ops.begin(), first_of_second));
  // Same ops otherwise: the order changes time, not what is computed.
  for (OpKind kind : {OpKind::forward, OpKind::backward, OpKind::accumulate, OpKind::update, OpKind::acquire})
    EXPECT_EQ(plan.count(kind), horizontal.count(kind)) << to_string(kind);
}

TEST(Schedule, EachBlockIsHookedAfterTheLastBackwardOfItsLayer) {
  for (ScheduleOrder order : {ScheduleOrder::horizontal, ScheduleOrder::vertical}) {
    const StepPlan plan = schedule_plan(layers(3), blocks(3, Resource::host), {.order = order, .micro_batches = 2});
    for (std::size_t i = 0; i < plan.ops.size(); ++i) {
      if (plan.ops[i].kind != OpKind::accumulate) continue;
      const auto later_backward = std::find_if(plan.ops.begin() + static_cast<long>(i), plan.ops.end(), [&](const Op& op) {
        return op.kind == OpKind::backward && op.layer == plan.ops[i].layer;
      });
      EXPECT_EQ(later_backward, plan.ops.end()) << to_string(order) << ": op " << i;
    }
  }
}

// Data-parallel steps update as DDP does: every layer's optimizer ops come after the step's last
// backward, so that no update waiting for its gradient's reduce stands between two backwards on
// the in-order device stream (one rank keeps each layer's update right behind its backward).
TEST(Schedule, DataParallelUpdatesFollowTheLastBackward) {
  for (ScheduleOrder order : {ScheduleOrder::horizontal, ScheduleOrder::vertical}) {
    const auto last_backward_before_an_update = [&](int ranks) {
      const StepPlan plan =
          schedule_plan(layers(4), blocks(4),
                        {.order = order, .micro_batches = 2, .data_parallel_ranks = ranks, .bucket_bytes = 0.0});
      std::size_t last_backward = 0, first_update = plan.ops.size();
      for (std::size_t i = 0; i < plan.ops.size(); ++i) {
        if (plan.ops[i].kind == OpKind::backward) last_backward = i;
        if (plan.ops[i].kind == OpKind::update) first_update = std::min(first_update, i);
      }
      EXPECT_EQ(plan.count(OpKind::reduce), ranks > 1 ? 4u : 0u);
      return first_update > last_backward;
    };
    EXPECT_TRUE(last_backward_before_an_update(2)) << to_string(order);
    EXPECT_FALSE(last_backward_before_an_update(1)) << to_string(order);
  }
}

// Gradient buckets as DDP's: layers join a bucket in the order their gradients complete (the last
// layer first) until it holds bucket_bytes; its reduce waits for the backward of the bucket's last
// layer (the lowest), moves the bucket's bytes, and gates the updates of each of its layers.
TEST(Schedule, GradientBucketsFollowTheGradientOrder) {
  for (ScheduleOrder order : {ScheduleOrder::horizontal, ScheduleOrder::vertical}) {
    // 7 layers of 800 B; buckets of >= 2000 B: {6,5,4}, {3,2,1}, {0}.
    const StepPlan plan = schedule_plan(
        layers(7), blocks(7),
        {.order = order, .micro_batches = 2, .data_parallel_ranks = 2, .bucket_bytes = 2000.0});
    ASSERT_EQ(plan.buckets.size(), 3u) << to_string(order);
    const std::vector<std::pair<int, int>> expected = {{4, 6}, {1, 3}, {0, 0}};
    std::vector<OpId> reduce_of(plan.buckets.size(), -1);
    std::vector<OpId> last_backward(7, -1);
    for (std::size_t i = 0; i < plan.ops.size(); ++i) {
      const Op& op = plan.ops[i];
      if (op.kind == OpKind::backward) last_backward[static_cast<std::size_t>(op.layer)] = static_cast<OpId>(i);
      if (op.kind != OpKind::reduce) continue;
      const BucketInfo& bucket = plan.buckets[static_cast<std::size_t>(op.bucket)];
      EXPECT_EQ((std::pair{bucket.first_layer, bucket.last_layer}), expected[static_cast<std::size_t>(op.bucket)]);
      EXPECT_EQ(op.layer, bucket.first_layer);
      EXPECT_EQ(op.cost.bytes(), 800.0 * (bucket.last_layer - bucket.first_layer + 1));
      // Issued right after the backward that completes its lowest layer, and waiting for it.
      ASSERT_EQ(op.deps.size(), 1u);
      EXPECT_EQ(op.deps[0], last_backward[static_cast<std::size_t>(bucket.first_layer)]);
      reduce_of[static_cast<std::size_t>(op.bucket)] = static_cast<OpId>(i);
    }
    for (OpId r : reduce_of) EXPECT_GE(r, 0);
    // Each block's acquire (the start of its optimizer step) waits for its layer's bucket.
    for (const Op& op : plan.ops) {
      if (op.kind != OpKind::acquire) continue;
      const std::size_t bucket = op.layer >= 4 ? 0 : op.layer >= 1 ? 1 : 2;
      EXPECT_NE(std::find(op.deps.begin(), op.deps.end(), reduce_of[bucket]), op.deps.end()) << op.layer;
    }
  }
  // One bucket per layer at 0; one bucket for the whole model when it holds less than a bucket.
  EXPECT_EQ(schedule_plan(layers(5), blocks(5), {.data_parallel_ranks = 2, .bucket_bytes = 0.0}).buckets.size(), 5u);
  const StepPlan whole = schedule_plan(layers(5), blocks(5), {.data_parallel_ranks = 2, .bucket_bytes = 1e9});
  ASSERT_EQ(whole.buckets.size(), 1u);
  EXPECT_EQ(whole.buckets[0].first_layer, 0);
  EXPECT_EQ(whole.buckets[0].last_layer, 4);
  EXPECT_TRUE(schedule_plan(layers(5), blocks(5), {}).buckets.empty());  // one rank: nothing to reduce
}

// Sharded state: the new weights go out in all-gathers of consecutive gradient buckets, a group
// closing once the ranks' shares in it are about even (padding to the largest share adds at most
// a quarter), the last group with the rest; a block larger than an even share of its group goes
// alone, by a broadcast of its bytes. An all-gather moves ranks x the largest share. Each gather
// waits for this rank's own updates of its blocks (and no other); every owned block goes out once.
TEST(Schedule, ShardedStateGathersBucketsOnceTheirSharesAreEven) {
  struct Expect {
    const char* owners;  // how blocks are owned
    std::size_t gathers;
  };
  for (const auto& [how, gathers] :
       {Expect{"alternating", 3}, Expect{"two thirds on rank 0", 1}, Expect{"alternating, one huge", 4}}) {
    std::vector<BlockWork> owned = blocks(7);
    for (std::size_t b = 0; b < owned.size(); ++b)
      owned[b].owner = std::string(how) == "two thirds on rank 0" ? (b % 3 == 0 ? 1 : 0) : static_cast<int>(b % 2);
    // The layers' weights as the forward reads them: their blocks' bytes (no compute copy to scale to).
    std::vector<LayerWork> weights_as_read = layers(7);
    for (LayerWork& l : weights_as_read) l.weight_bytes = 200.0;
    if (std::string(how) == "alternating, one huge") {
      owned[13].weight_bytes = 5000.0;  // layer 6, rank 1
      weights_as_read[6].weight_bytes = 5100.0;
    }
    for (int rank : {0, 1}) {
      const StepPlan plan =
          schedule_plan(weights_as_read, owned,
                        {.data_parallel_ranks = 2, .parallelism = Parallelism::zero1, .bucket_bytes = 2000.0, .rank = rank});
      std::vector<OpId> update_of(owned.size(), -1);
      std::vector<int> sent(owned.size(), 0);
      int next_layer = 6;  // gathers go out in gradient order, the last layer first
      for (std::size_t i = 0; i < plan.ops.size(); ++i) {
        const Op& op = plan.ops[i];
        if (op.kind == OpKind::update) update_of[static_cast<std::size_t>(op.block)] = static_cast<OpId>(i);
        if (op.kind != OpKind::gather) continue;
        const BucketInfo& range = plan.buckets[static_cast<std::size_t>(op.bucket)];
        const bool alone = range.blocks.size() == 1;  // here every group holds several blocks
        if (!alone) {
          EXPECT_EQ(range.last_layer, next_layer) << how;
          next_layer = range.first_layer - 1;
        }
        double share[2] = {0.0, 0.0};
        std::vector<OpId> own;
        for (int member : range.blocks) {
          const auto b = static_cast<std::size_t>(member);
          EXPECT_TRUE(owned[b].layer >= range.first_layer && owned[b].layer <= range.last_layer);
          ++sent[b];
          share[owned[b].owner] += owned[b].weight_bytes;
          if (owned[b].owner != rank) continue;
          ASSERT_GE(update_of[b], 0) << how << ": a gather before an update of its own";
          own.push_back(update_of[b]);
        }
        const double largest = std::max(share[0], share[1]);
        EXPECT_EQ(op.deps, own) << how;
        if (alone) {
          EXPECT_EQ(op.cost.bytes(), largest) << how << ": a block alone is broadcast";
          EXPECT_EQ(range.first_layer, range.last_layer);
          EXPECT_EQ(owned[static_cast<std::size_t>(range.blocks[0])].weight_bytes, 5000.0) << how;
          continue;
        }
        EXPECT_EQ(op.cost.bytes(), 2.0 * largest) << how;
        if (range.first_layer > 0) EXPECT_LE(2.0 * largest, 1.25 * (share[0] + share[1])) << how;
        EXPECT_EQ(op.layer, range.first_layer);
      }
      EXPECT_EQ(next_layer, -1) << how << ": every layer's weights gathered";
      EXPECT_EQ(plan.count(OpKind::gather), gathers) << how;
      for (std::size_t b = 0; b < owned.size(); ++b) {
        EXPECT_EQ(sent[b], 1) << how << ": block " << b;
        EXPECT_EQ(plan.blocks[b].owner, owned[b].owner);
        EXPECT_EQ(update_of[b] >= 0, owned[b].owner == rank) << how << ": block " << b;
      }
    }
  }
}

// Weights resting on the host are fetched before each run of visits of a layer: every visit in
// the horizontal schedule (per micro-batch 2·L, less one where the top layer's forward meets its
// backward and, between micro-batches, where the bottom layer's backward meets the next forward),
// once per layer and pass in the vertical one (2·L − 1).
TEST(Schedule, WeightFetchesFollowTheVisitOrder) {
  const int l = 4;
  const int m = 3;
  const ModelStateTiers host_weights{.weights = Tier::host};
  const StepPlan horizontal = schedule_plan(layers(l), blocks(l), {.micro_batches = m, .tiers = host_weights});
  const StepPlan vertical =
      schedule_plan(layers(l), blocks(l), {.order = ScheduleOrder::vertical, .micro_batches = m, .tiers = host_weights});
  EXPECT_EQ(transfers(horizontal, Payload::weights, Tier::host, Tier::device), static_cast<std::size_t>(m * (2 * l - 1) - (m - 1)));
  EXPECT_EQ(transfers(vertical, Payload::weights, Tier::host, Tier::device), static_cast<std::size_t>(2 * l - 1));
  // Device updates write the new weights back where they rest, once per block.
  EXPECT_EQ(transfers(vertical, Payload::weights, Tier::device, Tier::host, false), static_cast<std::size_t>(2 * l));
  // A fetch moves the layer's weight bytes, and each visit waits for the fetch of its run.
  for (const StepPlan* plan : {&horizontal, &vertical})
    for (std::size_t i = 0; i < plan->ops.size(); ++i) {
      const Op& op = plan->ops[i];
      if (op.kind == OpKind::transfer && op.block < 0) {
        EXPECT_EQ(op.cost.bytes(), 400.0);
      }
      if (op.kind != OpKind::forward && op.kind != OpKind::backward) continue;
      // The latest fetch of this layer issued before the visit is among its deps or its run's.
      OpId fetch = -1;
      for (std::size_t j = 0; j < i; ++j)
        if (plan->ops[j].kind == OpKind::transfer && plan->ops[j].block < 0 && plan->ops[j].layer == op.layer &&
            plan->ops[j].payload == Payload::weights)
          fetch = static_cast<OpId>(j);
      ASSERT_GE(fetch, 0) << "op " << i;
    }
  // Device-resident weights move nothing.
  EXPECT_EQ(schedule_plan(layers(l), blocks(l), {.micro_batches = m}).count(OpKind::transfer), 0u);
}

// Gradients resting on the host: the horizontal schedule sends each micro-batch's gradient down
// (accumulated there, as ZeRO-Offload does), the vertical one each layer's once; device updates
// bring their block's gradient back, host updates find it there.
TEST(Schedule, GradientMovesFollowTheVisitOrder) {
  const int l = 3;
  const int m = 4;
  const ModelStateTiers host_gradients{.gradients = Tier::host};
  for (ScheduleOrder order : {ScheduleOrder::horizontal, ScheduleOrder::vertical}) {
    const StepPlan plan =
        schedule_plan(layers(l), blocks(l, Resource::host), {.order = order, .micro_batches = m, .tiers = host_gradients});
    const std::size_t expected = order == ScheduleOrder::horizontal ? static_cast<std::size_t>(l * m) : static_cast<std::size_t>(l);
    EXPECT_EQ(transfers(plan, Payload::gradient, Tier::device, Tier::host), expected) << to_string(order);
    EXPECT_EQ(transfers(plan, Payload::gradient, Tier::host, Tier::device, false), static_cast<std::size_t>(l));
    EXPECT_EQ(transfers(plan, Payload::gradient, Tier::device, Tier::host, false), 0u);
  }
}

TEST(Schedule, CheckpointsGoAwayAfterEachForwardAndComeBackBeforeItsBackward) {
  const int l = 3;
  const int m = 2;
  const ScheduleOptions options{.order = ScheduleOrder::vertical,
                                .micro_batches = m,
                                .tiers = {.checkpoints = Tier::nvme},
                                .recompute_activations = true};
  const StepPlan plan = schedule_plan(layers(l), blocks(l), options);
  EXPECT_EQ(transfers(plan, Payload::checkpoint, Tier::device, Tier::nvme), static_cast<std::size_t>(l * m));
  EXPECT_EQ(transfers(plan, Payload::checkpoint, Tier::nvme, Tier::device), static_cast<std::size_t>(l * m));
  for (std::size_t i = 0; i < plan.ops.size(); ++i) {
    const Op& op = plan.ops[i];
    if (op.kind == OpKind::transfer && op.payload == Payload::checkpoint) {
      EXPECT_EQ(op.cost.bytes(), 1000.0 / m);
    }
    if (op.kind != OpKind::backward) continue;
    // The recompute: a backward is charged its forward again.
    EXPECT_DOUBLE_EQ(op.cost.flops(), (2e9 + 1e9) / m);
    const bool waits = std::any_of(op.deps.begin(), op.deps.end(), [&](OpId d) {
      const Op& dep = plan.ops[static_cast<std::size_t>(d)];
      return dep.kind == OpKind::transfer && dep.payload == Payload::checkpoint && dep.layer == op.layer &&
             dep.to == Tier::device;
    });
    EXPECT_TRUE(waits) << "backward op " << i;
  }
  EXPECT_THROW(schedule_plan(layers(l), blocks(l), {.tiers = {.checkpoints = Tier::host}}), InputError);
}

TEST(Schedule, DeferredBlocksAreAboutTheFractionOfTheWeightBytes) {
  std::vector<BlockWork> many;
  for (int b = 0; b < 40; ++b) many.push_back({b / 4, "b", 0, Resource::host, {}, {}, {}, 10.0, 10.0 + b % 3});
  for (double alpha : {0.0, 0.1, 0.25, 0.5, 0.9}) {
    const std::vector<bool> deferred = deferred_blocks(many, alpha, 0);
    double all = 0.0;
    double kept = 0.0;
    for (std::size_t b = 0; b < many.size(); ++b) {
      all += many[b].weight_bytes;
      if (deferred[b]) kept += many[b].weight_bytes;
    }
    EXPECT_NEAR(kept / all, alpha, 12.0 / all) << alpha;  // within one block
  }
  const std::vector<bool> none = deferred_blocks(many, 0.0, 0);
  EXPECT_EQ(std::count(none.begin(), none.end(), true), 0);
}

// Deferred updates: the whole optimizer step of a deferred block is carried into the next plan,
// issued before its layer's first forward, which waits for it (weights are never stale).
TEST(Schedule, DeferredUpdatesAreCarriedIntoTheNextForward) {
  const int l = 4;
  const ScheduleOptions options{.order = ScheduleOrder::vertical, .micro_batches = 2, .defer_fraction = 0.5};
  const StepPlan plan = schedule_plan(layers(l), blocks(l, Resource::host), options);
  std::set<int> carried_blocks;
  std::set<int> current_blocks;
  for (const Op& op : plan.ops)
    if (op.kind == OpKind::update) (op.carried ? carried_blocks : current_blocks).insert(op.block);
  EXPECT_EQ(carried_blocks.size(), static_cast<std::size_t>(l));  // half of the 2·L blocks
  EXPECT_EQ(carried_blocks.size() + current_blocks.size(), static_cast<std::size_t>(2 * l));
  for (int b : carried_blocks) EXPECT_EQ(current_blocks.count(b), 0u);
  for (std::size_t i = 0; i < plan.ops.size(); ++i) {
    const Op& op = plan.ops[i];
    if (!op.carried || op.kind != OpKind::update) continue;
    // Before the layer's first forward, which depends on it (directly, or through its weights'
    // move back to the device for a host update).
    const auto first_forward = std::find_if(plan.ops.begin(), plan.ops.end(), [&](const Op& f) {
      return f.kind == OpKind::forward && f.layer == op.layer;
    });
    ASSERT_NE(first_forward, plan.ops.end());
    EXPECT_LT(static_cast<long>(i), first_forward - plan.ops.begin());
    const std::vector<OpId>& deps = first_forward->deps;
    const bool waits = std::any_of(deps.begin(), deps.end(), [&](OpId d) {
      const Op& dep = plan.ops[static_cast<std::size_t>(d)];
      return dep.carried && dep.block == op.block && (dep.kind == OpKind::update || dep.kind == OpKind::transfer);
    });
    EXPECT_TRUE(waits) << "carried update op " << i;
  }
  // Their launches hold carried ops only; the gradients of deferred host blocks still go down
  // in this step's hooks (not carried).
  for (const Op& op : plan.ops) {
    if (op.kind == OpKind::transfer && op.payload == Payload::gradient && op.block >= 0 &&
        carried_blocks.count(op.block) != 0) {
      EXPECT_FALSE(op.carried);
    }
  }
  const StepPlan none = schedule_plan(layers(l), blocks(l), {.order = ScheduleOrder::vertical});
  EXPECT_TRUE(std::none_of(none.ops.begin(), none.ops.end(), [](const Op& op) { return op.carried; }));
}

TEST(Schedule, BadOptionsNameTheirField) {
  auto field_of = [](const ScheduleOptions& options, std::vector<BlockWork> b = blocks(2)) {
    try {
      schedule_plan(layers(2), b, options);
    } catch (const InputError& e) {
      return e.field();
    }
    return std::string("none");
  };
  EXPECT_EQ(field_of({.defer_fraction = 1.0}), "defer_fraction");
  EXPECT_EQ(field_of({.defer_fraction = -0.1}), "defer_fraction");
  EXPECT_EQ(field_of({.prefetch_depth = 0}), "prefetch_depth");
  EXPECT_EQ(field_of({.tiers = {.checkpoints = Tier::nvme}}), "tiers.checkpoints");
  std::vector<BlockWork> owned = blocks(2);
  owned[0].owner = 1;
  for (BlockWork& b : owned) b.owner = b.owner < 0 ? 0 : b.owner;
  EXPECT_EQ(field_of({.data_parallel_ranks = 2, .parallelism = Parallelism::zero1, .defer_fraction = 0.25}, owned),
            "defer_fraction");
  EXPECT_EQ(parse_schedule_order("vertical", "s", "f"), ScheduleOrder::vertical);
  EXPECT_THROW(parse_schedule_order("diagonal", "s", "f"), InputError);
}

}  // namespace
}  // namespace asteria::plan

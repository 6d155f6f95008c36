// Sharded data parallelism as plans (schedule.hpp's Parallelism): zero2's gradients go to their
// owners by reduce-scatters (scatter ops) instead of all-reduces, fsdp gathers each layer's
// weights before each run of its visits instead of after the updates, and blocks are owned so
// that every layer's shares are about even.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "core/common/error.hpp"
#include "core/plan/schedule.hpp"
#include "core/plan/share_groups.hpp"

namespace asteria::plan {
namespace {

using platform::Tier;

platform::Cost gemm(double flops) { return {platform::WorkKind::gemm, flops, flops / 1000.0, 8}; }

// L layers of one weight each (gradient 200 B: its two blocks' 100 B each).
std::vector<LayerWork> layers(int count) {
  std::vector<LayerWork> out;
  for (int l = 0; l < count; ++l) out.push_back({"l" + std::to_string(l), gemm(1e9), gemm(2e9), 200.0, 200.0, 1000.0});
  return out;
}

// Two blocks per layer, owned alternately by ranks 0 and 1 (so every layer's shares are even).
std::vector<BlockWork> owned_blocks(int count) {
  std::vector<BlockWork> out;
  for (int l = 0; l < count; ++l)
    for (int b = 0; b < 2; ++b)
      out.push_back({l, "l" + std::to_string(l) + "/" + std::to_string(b), 0, Resource::device, gemm(1e6), gemm(1e6),
                     {}, 100.0, 100.0, b});
  return out;
}

// Whether op `later` depends on op `earlier`, directly or through other ops.
bool reaches(const StepPlan& plan, OpId later, OpId earlier) {
  std::vector<OpId> todo = {later};
  std::vector<char> seen(plan.ops.size(), 0);
  while (!todo.empty()) {
    const OpId i = todo.back();
    todo.pop_back();
    if (i == earlier) return true;
    if (seen[static_cast<std::size_t>(i)]) continue;
    seen[static_cast<std::size_t>(i)] = 1;
    for (OpId d : plan.ops[static_cast<std::size_t>(i)].deps) todo.push_back(d);
  }
  return false;
}

OpId last_backward(const StepPlan& plan, int layer) {
  OpId last = -1;
  for (std::size_t i = 0; i < plan.ops.size(); ++i)
    if (plan.ops[i].kind == OpKind::backward && plan.ops[i].layer == layer) last = static_cast<OpId>(i);
  return last;
}

// zero2: one reduce-scatter per gradient bucket (here a layer each), of ranks x the largest share
// of its blocks' gradients, after the bucket's backward; this rank's updates of the bucket's
// blocks wait for it; no all-reduce; the new weights are gathered after the updates as zero1's.
TEST(ShardedSchedule, Zero2ScattersEachBucketsGradientsToTheirOwners) {
  const int l = 4;
  for (int rank : {0, 1}) {
    const StepPlan plan = schedule_plan(
        layers(l), owned_blocks(l),
        {.data_parallel_ranks = 2, .parallelism = Parallelism::zero2, .bucket_bytes = 0.0, .rank = rank});
    EXPECT_EQ(plan.count(OpKind::scatter), static_cast<std::size_t>(l));
    EXPECT_EQ(plan.count(OpKind::reduce), 0u);
    EXPECT_GT(plan.count(OpKind::gather), 0u);
    std::vector<int> scattered(static_cast<std::size_t>(2 * l), 0);
    for (std::size_t i = 0; i < plan.ops.size(); ++i) {
      const Op& op = plan.ops[i];
      if (op.kind == OpKind::scatter) {
        const BucketInfo& bucket = plan.buckets[static_cast<std::size_t>(op.bucket)];
        EXPECT_EQ(bucket.first_layer, bucket.last_layer);
        EXPECT_EQ(op.cost.bytes(), 200.0) << "2 ranks x a 100 B share";
        EXPECT_TRUE(reaches(plan, static_cast<OpId>(i), last_backward(plan, bucket.first_layer)));
        for (int b : bucket.blocks) ++scattered[static_cast<std::size_t>(b)];
      }
      if (op.kind == OpKind::update) {
        EXPECT_EQ(op.block % 2, rank) << "only the owner updates";
        // Its gradient came by the scatter of its layer.
        bool gated = false;
        for (std::size_t j = 0; j < i; ++j)
          if (plan.ops[j].kind == OpKind::scatter && plan.ops[j].layer == op.layer)
            gated = gated || reaches(plan, static_cast<OpId>(i), static_cast<OpId>(j));
        EXPECT_TRUE(gated) << "update of block " << op.block;
      }
    }
    for (int count : scattered) EXPECT_EQ(count, 1);
  }
}

// A block larger than an even share of its bucket is not padded into a reduce-scatter: it goes by
// a reduce (all-reduce) of its own gradient; so do blocks that one rank alone owns.
TEST(ShardedSchedule, Zero2ReducesBlocksTooLargeForAnEvenShare) {
  std::vector<BlockWork> blocks = owned_blocks(1);
  blocks.push_back({0, "l0/2", 0, Resource::device, gemm(1e6), gemm(1e6), {}, 100.0, 100.0, 2});
  blocks[0].gradient_bytes = 1000.0;  // > (1000 + 200) / 3
  const StepPlan plan = schedule_plan(
      layers(1), blocks, {.data_parallel_ranks = 3, .parallelism = Parallelism::zero2, .bucket_bytes = 0.0, .rank = 1});
  ASSERT_EQ(plan.count(OpKind::reduce), 1u);
  ASSERT_EQ(plan.count(OpKind::scatter), 1u);
  for (const Op& op : plan.ops) {
    if (op.kind == OpKind::reduce) {
      EXPECT_EQ(plan.buckets[static_cast<std::size_t>(op.bucket)].blocks, std::vector<int>{0});
      EXPECT_EQ(op.cost.bytes(), 1000.0);
    }
    if (op.kind == OpKind::scatter) {
      EXPECT_EQ(plan.buckets[static_cast<std::size_t>(op.bucket)].blocks, (std::vector<int>{1, 2}));
      EXPECT_EQ(op.cost.bytes(), 300.0) << "3 ranks x a 100 B share";
    }
  }
  // One owner: a reduce, no scatter.
  std::vector<BlockWork> mine = owned_blocks(1);
  mine[1].owner = 0;
  const StepPlan one = schedule_plan(
      layers(1), mine, {.data_parallel_ranks = 2, .parallelism = Parallelism::zero2, .bucket_bytes = 0.0});
  EXPECT_EQ(one.count(OpKind::scatter), 0u);
  EXPECT_EQ(one.count(OpKind::reduce), 1u);
}

// fsdp: a layer's weights are gathered before each run of its visits (as weights resting off the
// device are fetched: per micro-batch 2L - 1 runs in the horizontal schedule, less one between
// micro-batches; 2L - 1 in the vertical one), prefetch_depth runs ahead; each visit waits for the
// gathers of its run; no gather waits for an update, none follows the updates; gradients are
// scattered as zero2's.
TEST(ShardedSchedule, FsdpGathersEachLayerBeforeEachRunOfItsVisits) {
  const int l = 4;
  const int m = 3;
  for (ScheduleOrder order : {ScheduleOrder::horizontal, ScheduleOrder::vertical}) {
    for (int depth : {1, 2}) {
      const std::string how = std::string(to_string(order)) + " depth " + std::to_string(depth);
      const StepPlan plan = schedule_plan(layers(l), owned_blocks(l),
                                          {.order = order, .micro_batches = m, .data_parallel_ranks = 2,
                                           .parallelism = Parallelism::fsdp, .bucket_bytes = 0.0,
                                           .prefetch_depth = depth});
      const std::size_t runs = order == ScheduleOrder::horizontal ? static_cast<std::size_t>(m * (2 * l - 1) - (m - 1))
                                                                  : static_cast<std::size_t>(2 * l - 1);
      EXPECT_EQ(plan.count(OpKind::gather), runs) << how;
      EXPECT_EQ(plan.count(OpKind::scatter), static_cast<std::size_t>(l)) << how;
      EXPECT_EQ(plan.count(OpKind::transfer), 0u) << how;
      std::vector<OpId> gathers;
      std::vector<OpId> visits;
      for (std::size_t i = 0; i < plan.ops.size(); ++i) {
        const Op& op = plan.ops[i];
        if (op.kind == OpKind::gather) {
          gathers.push_back(static_cast<OpId>(i));
          const BucketInfo& bucket = plan.buckets[static_cast<std::size_t>(op.bucket)];
          EXPECT_EQ(bucket.first_layer, bucket.last_layer) << how;
          EXPECT_EQ(bucket.blocks, (std::vector<int>{2 * op.layer, 2 * op.layer + 1})) << how;
          EXPECT_EQ(op.cost.bytes(), 200.0) << how;
          for (OpId d : op.deps) {
            EXPECT_NE(plan.ops[static_cast<std::size_t>(d)].kind, OpKind::update) << how;
            // The buffer it fills was freed by the visit `depth` runs before.
            EXPECT_TRUE(plan.ops[static_cast<std::size_t>(d)].kind == OpKind::forward ||
                        plan.ops[static_cast<std::size_t>(d)].kind == OpKind::backward)
                << how;
          }
          EXPECT_EQ(op.deps.empty(), gathers.size() <= static_cast<std::size_t>(depth)) << how;
        }
        if (op.kind == OpKind::update) {
          for (std::size_t j = i + 1; j < plan.ops.size(); ++j)
            EXPECT_NE(plan.ops[j].kind, OpKind::gather) << how << ": a gather after an update";
        }
        if (op.kind != OpKind::forward && op.kind != OpKind::backward) continue;
        // The latest gather of this layer before the visit is among what it waits for.
        OpId gathered = -1;
        for (OpId g : gathers)
          if (plan.ops[static_cast<std::size_t>(g)].layer == op.layer) gathered = g;
        ASSERT_GE(gathered, 0) << how << ": op " << i;
        EXPECT_TRUE(reaches(plan, static_cast<OpId>(i), gathered)) << how << ": op " << i;
        visits.push_back(static_cast<OpId>(i));
      }
    }
  }
}

// fsdp not resharded after use (reshard_after_use false): each unit gathered once a step, before
// its first visit, whatever the micro-batches; every visit waits for its layer's gather. Only
// fsdp may keep gathered weights.
TEST(ShardedSchedule, FsdpKeptGathersEachUnitOnceAStep) {
  const int l = 4;
  const int m = 3;
  ScheduleOptions o{.micro_batches = m, .data_parallel_ranks = 2, .parallelism = Parallelism::fsdp,
                    .bucket_bytes = 0.0};
  o.reshard_after_use = false;
  const StepPlan plan = schedule_plan(layers(l), owned_blocks(l), o);
  EXPECT_EQ(plan.count(OpKind::gather), static_cast<std::size_t>(l));
  std::vector<int> gathered_layers;
  for (std::size_t i = 0; i < plan.ops.size(); ++i) {
    const Op& op = plan.ops[i];
    if (op.kind == OpKind::gather) gathered_layers.push_back(op.layer);
    if (op.kind != OpKind::forward && op.kind != OpKind::backward) continue;
    OpId gathered = -1;
    for (std::size_t g = 0; g < i; ++g)
      if (plan.ops[g].kind == OpKind::gather && plan.ops[g].layer == op.layer) gathered = static_cast<OpId>(g);
    ASSERT_GE(gathered, 0) << "op " << i;
    EXPECT_TRUE(reaches(plan, static_cast<OpId>(i), gathered)) << "op " << i;
  }
  EXPECT_EQ(gathered_layers, (std::vector<int>{0, 1, 2, 3}));
  ScheduleOptions zero2 = o;
  zero2.parallelism = Parallelism::zero2;
  EXPECT_THROW(schedule_plan(layers(l), owned_blocks(l), zero2), InputError);
}

// fsdp units: layers gathered together once they hold bucket_bytes (two layers of 200 B here):
// one gather per stretch of runs of a unit's layers: f0 f1 | f2 f3+b3 b2 | b1 b0.
TEST(ShardedSchedule, FsdpGathersAUnitOfLayersOncePerStretchOfItsVisits) {
  const StepPlan plan = schedule_plan(layers(4), owned_blocks(4),
                                      {.data_parallel_ranks = 2, .parallelism = Parallelism::fsdp, .bucket_bytes = 400.0});
  std::vector<std::pair<int, int>> gathered;
  for (const Op& op : plan.ops)
    if (op.kind == OpKind::gather) {
      const BucketInfo& unit = plan.buckets[static_cast<std::size_t>(op.bucket)];
      gathered.emplace_back(unit.first_layer, unit.last_layer);
      EXPECT_EQ(unit.blocks.size(), 4u);
      EXPECT_EQ(op.cost.bytes(), 400.0) << "2 ranks x a 200 B share";
    }
  EXPECT_EQ(gathered, (std::vector<std::pair<int, int>>{{0, 1}, {2, 3}, {0, 1}}));
}

// Weights travel as the forward reads them: with a bf16 compute copy (the layer's weight_bytes
// half its blocks' fp32 bytes) a gather moves half the bytes.
TEST(ShardedSchedule, GathersMoveTheComputeCopyOfTheWeights) {
  std::vector<LayerWork> bf16 = layers(2);
  for (LayerWork& l : bf16) l.weight_bytes = 100.0;
  for (Parallelism how : {Parallelism::zero1, Parallelism::fsdp}) {
    const StepPlan fp32 = schedule_plan(layers(2), owned_blocks(2),
                                        {.data_parallel_ranks = 2, .parallelism = how, .bucket_bytes = 0.0});
    const StepPlan half = schedule_plan(bf16, owned_blocks(2),
                                        {.data_parallel_ranks = 2, .parallelism = how, .bucket_bytes = 0.0});
    ASSERT_EQ(fp32.ops.size(), half.ops.size());
    for (std::size_t i = 0; i < fp32.ops.size(); ++i)
      if (fp32.ops[i].kind == OpKind::gather) {
        EXPECT_EQ(half.ops[i].cost.bytes(), 0.5 * fp32.ops[i].cost.bytes());
      }
  }
}

// Sharding is declared once (the parallelism) and the blocks' owners must agree with it.
TEST(ShardedSchedule, OwnersMustAgreeWithTheParallelism) {
  auto field_of = [](const ScheduleOptions& options, const std::vector<BlockWork>& blocks) {
    try {
      schedule_plan(layers(2), blocks, options);
    } catch (const InputError& e) {
      return e.field();
    }
    return std::string("none");
  };
  std::vector<BlockWork> unowned = owned_blocks(2);
  for (BlockWork& b : unowned) b.owner = -1;
  EXPECT_EQ(field_of({.data_parallel_ranks = 2, .parallelism = Parallelism::zero1}, unowned), "owner");
  EXPECT_EQ(field_of({.data_parallel_ranks = 2}, owned_blocks(2)), "owner");
  EXPECT_EQ(field_of({.data_parallel_ranks = 1, .parallelism = Parallelism::fsdp}, unowned), "parallelism");
  EXPECT_EQ(field_of({.data_parallel_ranks = 2, .parallelism = Parallelism::fsdp, .tiers = {.weights = Tier::host}},
                     owned_blocks(2)),
            "tiers.weights");
  EXPECT_EQ(field_of({.data_parallel_ranks = 2, .parallelism = Parallelism::fsdp}, owned_blocks(2)), "none");
}

// Owners: every layer's shares differ by at most its largest block, every rank's total by at
// most the largest block of all; the same inputs give the same owners.
TEST(ShardedSchedule, BlockOwnersKeepEveryLayersSharesEven) {
  std::vector<double> bytes;
  std::vector<int> layer_of;
  for (int l = 0; l < 6; ++l)
    for (int b = 0; b < 7; ++b) {
      bytes.push_back(100.0 + 37.0 * ((l * 7 + b * 3) % 11));
      layer_of.push_back(l);
    }
  for (int ranks : {2, 3, 4, 7}) {
    const std::vector<int> owners = assign_block_owners(bytes, layer_of, ranks);
    EXPECT_EQ(owners, assign_block_owners(bytes, layer_of, ranks));
    std::vector<double> total(static_cast<std::size_t>(ranks), 0.0);
    const double largest = *std::max_element(bytes.begin(), bytes.end());
    for (int l = 0; l < 6; ++l) {
      std::vector<double> share(static_cast<std::size_t>(ranks), 0.0);
      double layer_largest = 0.0;
      for (std::size_t b = 0; b < bytes.size(); ++b) {
        if (layer_of[b] != l) continue;
        ASSERT_GE(owners[b], 0);
        ASSERT_LT(owners[b], ranks);
        share[static_cast<std::size_t>(owners[b])] += bytes[b];
        total[static_cast<std::size_t>(owners[b])] += bytes[b];
        layer_largest = std::max(layer_largest, bytes[b]);
      }
      const auto [lo, hi] = std::minmax_element(share.begin(), share.end());
      EXPECT_LE(*hi - *lo, layer_largest) << ranks << " ranks, layer " << l;
    }
    const auto [lo, hi] = std::minmax_element(total.begin(), total.end());
    EXPECT_LE(*hi - *lo, largest) << ranks << " ranks";
  }
}

}  // namespace
}  // namespace asteria::plan

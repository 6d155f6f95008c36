// The shadow pool: its size (shadow_pool_bounds) and the service's back-pressure when a snapshot
// does not fit in it.
//
// Service tests use 4 x 4 SOAP shape blocks (activation delay 1, a refresh after every gradient
// with f = 1): one job holds 2 x (4 x 4 x 4 x 4 B) + 2 x 4 x 8 B = 576 B.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/optim/shape_block.hpp"
#include "core/optim/shape_model.hpp"
#include "core/platform/fake/fake_platform.hpp"
#include "core/runtime/service/preconditioner_service.hpp"
#include "core/runtime/service/shadow_bound.hpp"
#include "core/runtime/store/store_errors.hpp"

namespace asteria::runtime {
namespace {

using optim::OptimizerKind;
using platform::Tier;

// Six blocks of 10 B each (one job alive at most), in two hooks of three.
std::vector<ShadowDemand> six_blocks(int delay, bool shared = false) {
  return std::vector<ShadowDemand>(6, ShadowDemand{10, 1, delay, shared});
}
const std::vector<std::vector<int>> kTwoHooks = {{0, 1, 2}, {3, 4, 5}};

TEST(ShadowPoolBounds, AtStalenessZeroOneHookAndAJobPerWorker) {
  ShadowPoolSizing sizing;
  sizing.host_workers = 1;
  for (int delay : {0, 1}) {
    const ShadowPoolBounds b = shadow_pool_bounds(six_blocks(delay), kTwoHooks, sizing);
    EXPECT_EQ(b.per_block, 60u);
    EXPECT_EQ(b.in_flight, 30u + 10u) << "delay " << delay;  // a hook's three, one for the worker
  }
  // More workers than the blocks leave to run: never more than every job.
  sizing.host_workers = 8;
  EXPECT_EQ(shadow_pool_bounds(six_blocks(1), kTwoHooks, sizing).in_flight, 60u);
}

TEST(ShadowPoolBounds, JobsThatMustWaitAcrossAStepKeepTheirPerBlockBound) {
  ShadowPoolSizing sizing;
  sizing.host_workers = 1;
  sizing.staleness = 1;
  EXPECT_EQ(shadow_pool_bounds(six_blocks(1), kTwoHooks, sizing).in_flight, 60u);
  sizing.staleness = 0;
  // A delay-1 result that travels between ranks arrives at the step's end; a delay-0 one is
  // exchanged in its own step.
  EXPECT_EQ(shadow_pool_bounds(six_blocks(1, true), kTwoHooks, sizing).in_flight, 60u);
  EXPECT_EQ(shadow_pool_bounds(six_blocks(0, true), kTwoHooks, sizing).in_flight, 40u);
  // Installs that may not happen away from a block's ops: nothing can be installed early.
  sizing.early_installs = false;
  EXPECT_EQ(shadow_pool_bounds(six_blocks(1), kTwoHooks, sizing).in_flight, 60u);
  // A mix: the kept block's bound, plus the rest's hook and worker.
  sizing.early_installs = true;
  std::vector<ShadowDemand> mixed = six_blocks(1);
  mixed[0].shared = true;
  mixed[0].job_bytes = 100;
  EXPECT_EQ(shadow_pool_bounds(mixed, kTwoHooks, sizing).in_flight, 100u + 30u + 10u);
}

TEST(ShadowPoolBounds, ThePoolTakesTheRoomTheStateLeavesUpToEveryJob) {
  ShadowPoolSizing sizing;
  sizing.host_workers = 1;
  const ShadowPoolBounds b = shadow_pool_bounds(six_blocks(1), kTwoHooks, sizing);
  EXPECT_EQ(shadow_pool_bytes(b, 0), 40u);
  EXPECT_EQ(shadow_pool_bytes(b, 15), 55u);
  EXPECT_EQ(shadow_pool_bytes(b, 1000), 60u);
}

constexpr std::size_t kJobBytes = 576;

optim::Hyperparameters soap_every_step() {
  optim::Hyperparameters hp = optim::default_hyperparameters(OptimizerKind::soap);
  hp.precondition_frequency = 1;
  return hp;
}

struct Harness {
  explicit Harness(std::size_t pool, std::size_t host = std::size_t{1} << 20, double refresh_s = 2.0)
      : platform([&] {
          platform::fake::FakeOptions f;
          f.host_capacity = host;
          f.host_workers = 1;
          f.host_duration = [refresh_s](const platform::Work&) { return refresh_s; };
          return f;
        }()),
        service(platform, ServiceOptions{}) {
    for (int i = 0; i < 2; ++i) {
      blocks.push_back(std::make_unique<optim::ShapeBlock<float>>(OptimizerKind::soap, soap_every_step(), 4, 4));
      ids.push_back(service.register_block(*blocks.back(), "w block " + std::to_string(i)));
      service.allow_installs_anywhere(ids.back(), true);
    }
    service.set_aside_shadow(pool);
  }
  // One block's optimizer ops of step t, in the plan's order for delay 1.
  void block_ops(BlockId b, Step t, bool update = true) {
    service.publication_point(b, t);
    ASSERT_TRUE(service.accumulate(b, {}, t));
    service.submit_refresh(b, t);
    if (update) service.apply(b, {}, {}, t);
  }

  platform::fake::FakePlatform platform;
  PreconditionerService<float> service;
  std::vector<std::unique_ptr<optim::ShapeBlock<float>>> blocks;
  std::vector<BlockId> ids;
};

TEST(ShadowPoolService, ASnapshotWaitsForTheOldestJobAndInstallsItEarlyOnceItsBlockIsUpdated) {
  ASSERT_EQ(optim::refresh_job_bytes(OptimizerKind::soap, soap_every_step(), 4, 4, sizeof(float)), kJobBytes);
  Harness h(kJobBytes);  // room for one job
  for (Step t = 1; t <= 4; ++t) {
    SCOPED_TRACE("step " + std::to_string(t));
    h.service.on_step_begin(t);
    h.block_ops(h.ids[0], t);
    // Block 1's snapshot finds the pool full of block 0's job (2 s on the one worker), whose
    // block made its update of step t: the job is waited for and installed now, not at the
    // point of step t + 1.
    h.block_ops(h.ids[1], t);
    const StepMetrics m = h.service.on_step_end(t);
    EXPECT_EQ(m.early_installs, t == 1 ? 1 : 2);  // from step 2 on, block 1's job of t − 1 too
    EXPECT_GT(m.pool_wait_s, 0.0);
    EXPECT_LE(m.pool_wait_s, m.visible_wait_s);
    EXPECT_EQ(m.pool_jobs, 1);
    EXPECT_EQ(m.pool_held_bytes, kJobBytes);
    EXPECT_EQ(m.pool_overflow_bytes, 0u);
    // The version says where the policy installs it: the point of step t + 1.
    EXPECT_EQ(h.service.version(h.ids[0]).published_step, t + 1);
    EXPECT_EQ(h.service.version(h.ids[0]).stats_step, t);
  }
  EXPECT_LE(h.platform.memory().usage(Tier::host).peak_resident, kJobBytes);
}

TEST(ShadowPoolService, WithNothingToWaitForASnapshotTakesHostRoomBeyondThePool) {
  // Both blocks snapshot before either updates (one hook): block 0's job serves an update to
  // come, so waiting for it cannot make room; the snapshot is taken from the host beyond the pool.
  Harness h(kJobBytes);
  h.service.on_step_begin(1);
  h.block_ops(h.ids[0], 1, /*update=*/false);
  h.block_ops(h.ids[1], 1, /*update=*/false);
  h.service.apply(h.ids[0], {}, {}, 1);
  h.service.apply(h.ids[1], {}, {}, 1);
  const StepMetrics m = h.service.on_step_end(1);
  EXPECT_EQ(m.pool_overflow_bytes, kJobBytes);
  EXPECT_EQ(m.pool_wait_s, 0.0);
  EXPECT_EQ(m.early_installs, 0);
}

TEST(ShadowPoolService, WhenTheHostCannotGiveMoreEitherItIsAPlacementErrorNamingTheHost) {
  Harness h(kJobBytes, /*host=*/kJobBytes + kJobBytes / 2);
  h.service.on_step_begin(1);
  h.block_ops(h.ids[0], 1, /*update=*/false);
  try {
    h.block_ops(h.ids[1], 1, /*update=*/false);
    FAIL() << "a snapshot beyond the pool and the host was accepted";
  } catch (const PlacementError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("no host memory for the refresh snapshot buffers (shadow state) of block 'w block 1'"),
              std::string::npos)
        << what;
  }
}

TEST(ShadowPoolService, WithoutAPoolOnlyTheHostBudgetBoundsTheJobs) {
  Harness h(/*pool=*/0);
  h.service.on_step_begin(1);
  h.block_ops(h.ids[0], 1);
  h.block_ops(h.ids[1], 1);
  const StepMetrics m = h.service.on_step_end(1);
  EXPECT_EQ(m.pool_jobs, 2);
  EXPECT_EQ(m.early_installs, 0);
  EXPECT_EQ(m.pool_wait_s, 0.0);
  EXPECT_EQ(m.pool_overflow_bytes, 0u);
}

TEST(ShadowPoolService, BlocksWhoseStateMayNotBeTouchedAwayFromTheirOpsAreNotInstalledEarly) {
  Harness h(kJobBytes);
  for (BlockId id : h.ids) h.service.allow_installs_anywhere(id, false);
  h.service.on_step_begin(1);
  h.block_ops(h.ids[0], 1);
  h.block_ops(h.ids[1], 1);
  const StepMetrics m = h.service.on_step_end(1);
  EXPECT_EQ(m.early_installs, 0);
  EXPECT_EQ(m.pool_overflow_bytes, kJobBytes);
}

}  // namespace
}  // namespace asteria::runtime

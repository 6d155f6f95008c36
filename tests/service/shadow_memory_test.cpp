// Refresh jobs' snapshot and result buffers (shadow state) occupy the host: each job's bytes are
// held in the host budget from its snapshot until it is resolved, then as the block's spare;
// the worst case is the refreshes the schedule makes due in S + 1 consecutive steps.
//
// A 4 x 4 Shampoo block's job holds the statistics and the root of both factors:
// 2 x (2 x 4 x 4 x 4 B) = 256 B. With precondition_frequency f = 2 (start = f) it refreshes after
// gradients 2, 4, 6, ...
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

constexpr std::size_t kJobBytes = 256;

optim::Hyperparameters shampoo(int frequency, int start = -1) {
  optim::Hyperparameters hp = optim::default_hyperparameters(OptimizerKind::shampoo);
  hp.precondition_frequency = frequency;
  hp.start_preconditioning_step = start;
  return hp;
}

TEST(ShadowBound, IsTheRefreshesDueInAnyWindowOfSPlusOneCounts) {
  EXPECT_EQ(optim::refresh_job_bytes(OptimizerKind::shampoo, shampoo(2), 4, 4, sizeof(float)), kJobBytes);
  // Shampoo, f = 2: due at 2, 4, 6, ...: a window of S + 1 counts holds floor(S / 2) + 1.
  const std::vector<std::int64_t> every_second = {1, 1, 2, 2, 3};
  for (int s = 0; s < 5; ++s) EXPECT_EQ(max_live_refresh_jobs(OptimizerKind::shampoo, shampoo(2), s), every_second[s]) << s;
  // Shampoo, start 3, f = 4: due at 3, 4, 8, 12: {3, 4} fit in 2 counts, {3, 4, 8} in 6.
  const std::vector<std::int64_t> irregular = {1, 2, 2, 2, 2, 3};
  for (int s = 0; s < 6; ++s) EXPECT_EQ(max_live_refresh_jobs(OptimizerKind::shampoo, shampoo(4, 3), s), irregular[s]) << s;
  // SOAP, f = 3: due at 1, 4, 7, ...
  optim::Hyperparameters soap = optim::default_hyperparameters(OptimizerKind::soap);
  soap.precondition_frequency = 3;
  EXPECT_EQ(max_live_refresh_jobs(OptimizerKind::soap, soap, 2), 1);
  EXPECT_EQ(max_live_refresh_jobs(OptimizerKind::soap, soap, 3), 2);
  EXPECT_EQ(max_live_refresh_jobs(OptimizerKind::adamw, optim::default_hyperparameters(OptimizerKind::adamw), 5), 0);
}

// Host bytes held at the end of each step 1..steps by one 4 x 4 Shampoo block (f = 2) under S.
std::vector<std::size_t> host_bytes_per_step(int staleness, int steps, std::size_t host_capacity = std::size_t{1} << 20) {
  platform::fake::FakeOptions f;
  f.host_capacity = host_capacity;
  platform::fake::FakePlatform platform(f);
  ServiceOptions options;
  options.staleness = staleness;
  PreconditionerService<float> service(platform, options);
  optim::ShapeBlock<float> block(OptimizerKind::shampoo, shampoo(2), 4, 4);
  const BlockId id = service.register_block(block, "w block 0");
  std::vector<std::size_t> held;
  for (Step t = 1; t <= steps; ++t) {
    service.on_step_begin(t);
    if (service.after_backward(id, {}, t)) service.apply(id, {}, {}, t);
    service.on_step_end(t);
    held.push_back(platform.memory().usage(Tier::host).resident);
  }
  EXPECT_EQ(platform.memory().usage(Tier::host).peak_resident,
            static_cast<std::size_t>(max_live_refresh_jobs(OptimizerKind::shampoo, shampoo(2), staleness)) * kJobBytes);
  return held;
}

// S = 0: the job of step 2 is snapshotted and published in step 2; its buffers stay as the spare
// (256 B), which the snapshot of step 4 refills. S = 2: the job of step 2 is published at step 4,
// after step 4's snapshot, so both live then (512 B); from then on one job and the spare.
TEST(ShadowMemory, AJobsBytesAreHeldOnTheHostFromItsSnapshotAndThenAsTheSpare) {
  EXPECT_EQ(host_bytes_per_step(0, 6), (std::vector<std::size_t>{0, 256, 256, 256, 256, 256}));
  EXPECT_EQ(host_bytes_per_step(2, 6), (std::vector<std::size_t>{0, 256, 256, 512, 512, 512}));
}

// 511 B of host: the second job (step 4, S = 2) needs 256 B where 511 - 256 = 255 B are free.
TEST(ShadowMemory, ASnapshotThatDoesNotFitIsAPlacementErrorNamingTheHost) {
  try {
    host_bytes_per_step(2, 6, 511);
    FAIL() << "a snapshot beyond the host budget was accepted";
  } catch (const PlacementError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("no host memory for the refresh snapshot buffers (shadow state) of block 'w block 0' "
                        "(snapshot of step 4)"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("host needs 256 B, 255 B free of 511 B (short by 1 B)"), std::string::npos) << what;
    ASSERT_EQ(e.shortfalls().size(), 1u);
    EXPECT_EQ(e.shortfalls()[0].tier, Tier::host);
  }
}

}  // namespace
}  // namespace asteria::runtime

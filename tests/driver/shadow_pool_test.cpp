// The refresh jobs' shadow pool in whole runs: a host with room for only part of a refresh
// round's jobs still runs (snapshots wait for room and finished jobs are installed early), holds
// no more than its pool, and gives the synchronous optimizer's numbers bit for bit at S = 0.
//
// small_stack() has 16 blocks (6, 6 and 4 per layer); every optimizer here refreshes all of them
// in the same steps, so a refresh round's jobs would hold the per-block sum at once.
#include <algorithm>
#include <functional>
#include <numeric>
#include <string>

#include "tests/driver/driver_test_support.hpp"

namespace asteria::runtime::test {
namespace {

using platform::Tier;

std::size_t at(Tier t) { return static_cast<std::size_t>(t); }

// Every block's refresh job bytes, largest first.
template <linalg::Real T>
std::vector<std::size_t> job_bytes_largest_first(OptimizerKind kind, const Hyperparameters& hp) {
  std::vector<std::size_t> bytes;
  for (const LayerSpec& layer : small_stack().layers)
    for (const optim::BlockPlan& cut : optim::plan_blocks(kind, hp, std::vector<linalg::index>{layer.rows, layer.cols}))
      bytes.push_back(optim::refresh_job_bytes(cut.kind, cut.hp, cut.region.rows, cut.region.cols, sizeof(T)));
  std::sort(bytes.begin(), bytes.end(), std::greater<>());
  return bytes;
}

template <linalg::Real T>
std::size_t state_bytes(OptimizerKind kind, const Hyperparameters& hp) {
  std::size_t sum = 0;
  for (const LayerSpec& layer : small_stack().layers) {
    const optim::TensorOptimizer<T> tensor(kind, hp, {layer.rows, layer.cols}, layer.name);
    for (const auto& block : tensor.blocks()) sum += block.optimizer->state().tensor_bytes();
  }
  return sum;
}

struct PoolRun {
  std::vector<Weights<float>> weights;  // after every step
  std::vector<StepRecord> history;
};

// Host placement (state at rest where it is updated: the pool may install anywhere) on a host of
// `host_bytes`, one worker whose refreshes take `refresh_s` each.
PoolRun run_on_host(OptimizerKind kind, const Hyperparameters& hp, PublishPolicy policy, std::size_t host_bytes,
                    double refresh_s, int steps) {
  platform::fake::FakeOptions f = fake_timing(refresh_s, 1);
  f.host_capacity = host_bytes;
  platform::fake::FakePlatform platform(std::move(f));
  SyntheticModel<float> model(small_stack());
  DriverOptions options = full_numerics(0, policy);
  options.store.policy = PlacementPolicy::host;
  StepDriver<float> driver(platform, model, kind, hp, options);
  PoolRun run;
  for (int t = 0; t < steps; ++t) {
    driver.run_step();
    run.weights.push_back(weights_of(model));
  }
  driver.finish();
  run.history = driver.history();
  return run;
}

struct Case {
  OptimizerKind kind;
  int frequency;
  PublishPolicy policy;
};

TEST(DriverShadowPool, AHostForPartOfARefreshRoundRunsWithBackPressureAndTheSynchronousNumbers) {
  for (const Case c : {Case{OptimizerKind::soap, 2, PublishPolicy::deterministic},
                       Case{OptimizerKind::kl_shampoo, 2, PublishPolicy::deterministic},
                       Case{OptimizerKind::shampoo, 1, PublishPolicy::deterministic},
                       Case{OptimizerKind::soap, 1, PublishPolicy::opportunistic}}) {
    SCOPED_TRACE(std::string(optim::to_string(c.kind)) + " " + std::string(to_string(c.policy)) + " f=" +
                 std::to_string(c.frequency));
    const Hyperparameters hp = small_blocks(c.kind, c.frequency);
    const std::vector<std::size_t> jobs = job_bytes_largest_first<float>(c.kind, hp);
    ASSERT_EQ(jobs.size(), 16u);
    const std::size_t every_job = std::accumulate(jobs.begin(), jobs.end(), std::size_t{0});
    // Room for the nine largest jobs: more than a layer's six and a worker's one, fewer than 16.
    const std::size_t room = std::accumulate(jobs.begin(), jobs.begin() + 9, std::size_t{0});
    ASSERT_LT(room, every_job);
    const int steps = 6;
    const PoolRun run = run_on_host(c.kind, hp, c.policy, state_bytes<float>(c.kind, hp) + room, 3.0, steps);
    const auto reference = synchronous_reference<float>(small_stack(), c.kind, hp, steps);
    ASSERT_EQ(run.weights.size(), reference.size());
    for (std::size_t s = 0; s < reference.size(); ++s)
      for (std::size_t l = 0; l < reference[s].size(); ++l)
        EXPECT_TRUE(bitwise_equal(run.weights[s][l], reference[s][l])) << "step " << s + 1 << " layer " << l;
    std::int64_t early = 0;
    double waited = 0.0;
    for (const StepRecord& r : run.history) {
      SCOPED_TRACE("step " + std::to_string(r.step));
      EXPECT_LE(r.shadow_pool_bytes, room);
      EXPECT_EQ(r.shadow_overflow_bytes, 0u);
      EXPECT_LE(r.shadow_pool_wait_s, r.refresh_wait_s + 1e-12);  // back-pressure is visible refresh time
      EXPECT_LE(r.peak_bytes[at(Tier::host)], r.capacity_bytes[at(Tier::host)]);
      EXPECT_LT(r.shadow_jobs, 16);  // never a whole round's jobs at once
      early += r.early_installs;
      waited += r.shadow_pool_wait_s;
    }
    if (optim::activation_delay(c.kind) == 1) {
      // A delay-1 job waits for the next step's point: the pool runs out within a round, and
      // room comes from jobs installed early.
      EXPECT_GT(early, 0);
      EXPECT_GT(waited, 0.0);
    } else {
      // A delay-0 job is installed at its point before its block's update, in its own hook: a
      // hook's jobs and the worker's never fill the pool.
      EXPECT_EQ(early, 0);
    }
  }
}

TEST(DriverShadowPool, ARoomyHostKeepsEveryJobOfARoundWithoutBackPressure) {
  const Hyperparameters hp = small_blocks(OptimizerKind::soap, 2);
  const std::vector<std::size_t> jobs = job_bytes_largest_first<float>(OptimizerKind::soap, hp);
  const std::size_t every_job = std::accumulate(jobs.begin(), jobs.end(), std::size_t{0});
  const PoolRun run = run_on_host(OptimizerKind::soap, hp, PublishPolicy::deterministic,
                                  state_bytes<float>(OptimizerKind::soap, hp) + 4 * every_job, 3.0, 5);
  for (const StepRecord& r : run.history) {
    SCOPED_TRACE("step " + std::to_string(r.step));
    EXPECT_EQ(r.shadow_pool_bytes, every_job);  // the pool stops at every job that can await its point
    EXPECT_EQ(r.early_installs, 0);
    EXPECT_EQ(r.shadow_pool_wait_s, 0.0);
  }
  EXPECT_EQ(run.history[0].shadow_jobs, 16);  // step 1 snapshots every block
}

// A host that cannot hold the in-flight bound beside the state is refused before the first step,
// naming the host and the pool.
TEST(DriverShadowPool, AHostBelowTheInFlightBoundIsRefusedBeforeTheRun) {
  const Hyperparameters hp = small_blocks(OptimizerKind::soap, 2);
  const std::vector<std::size_t> jobs = job_bytes_largest_first<float>(OptimizerKind::soap, hp);
  try {
    run_on_host(OptimizerKind::soap, hp, PublishPolicy::deterministic, state_bytes<float>(OptimizerKind::soap, hp) + jobs[0],
                3.0, 1);
    FAIL() << "a host with room for one job beside the state was accepted";
  } catch (const PlacementError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("refresh snapshot buffers (shadow state)"), std::string::npos) << what;
    ASSERT_FALSE(e.shortfalls().empty());
    EXPECT_EQ(e.shortfalls()[0].tier, Tier::host);
  }
}

}  // namespace
}  // namespace asteria::runtime::test

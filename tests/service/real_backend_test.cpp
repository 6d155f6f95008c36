// The service on the real backend: refreshes run on worker threads while the training thread
// accumulates, snapshots and publishes. Results must not depend on the backend: S = 0 equals the
// synchronous optimizer, and the deterministic policy at S = 2 equals the fake backend's run.
// (Run under ThreadSanitizer with the tsan preset.)
#include <gtest/gtest.h>

#include "core/real/real_platform.hpp"
#include "tests/service/service_harness.hpp"

namespace asteria::runtime::test {
namespace {

real::RealPlatformOptions three_workers() {
  real::RealPlatformOptions o;
  o.host_threads = 3;
  return o;
}

TEST(RealBackendService, StalenessZeroMatchesTensorOptimizer) {
  using T = double;
  for (const Scenario& scenario : every_optimizer()) {
    SCOPED_TRACE(scenario.name);
    real::RealPlatform platform(three_workers());
    const Trajectory<T> actual = run_service<T>(platform, scenario, service_options(scenario.hp, 0), {});
    expect_same_trajectory(run_synchronous<T>(scenario), actual);
    EXPECT_EQ(actual.totals.max_staleness, 0);
  }
}

TEST(RealBackendService, DeterministicPolicyGivesTheFakeBackendsResultsAtStalenessTwo) {
  using T = float;
  std::vector<Scenario> scenarios = refreshing_optimizers();
  // Blocks large enough that refreshes are still running while the next steps go on.
  Scenario large = make_scenario("soap 48x40, f=1", OptimizerKind::soap, 1, 8);
  large.shapes = {{48, 40}};
  large.hp.max_precond_dim = 24;
  scenarios.push_back(large);
  for (const Scenario& scenario : scenarios) {
    SCOPED_TRACE(scenario.name);
    const ServiceOptions options = service_options(scenario.hp, 2);
    real::RealPlatform platform(three_workers());
    const Trajectory<T> on_threads = run_service<T>(platform, scenario, options, {});
    const Trajectory<T> on_fake = run_on_fake<T>(scenario, options, {});
    expect_same_trajectory(on_fake, on_threads);
    EXPECT_LE(on_threads.totals.max_staleness, 2);
  }
}

TEST(RealBackendService, OpportunisticPolicyStaysWithinTheBound) {
  using T = float;
  for (const Scenario& scenario : refreshing_optimizers()) {
    SCOPED_TRACE(scenario.name);
    real::RealPlatform platform(three_workers());
    const Trajectory<T> run = run_service<T>(platform, scenario, service_options(scenario.hp, 3, PublishPolicy::opportunistic),
                                      {});
    for (const StepMetrics& m : run.metrics) EXPECT_LE(m.max_staleness, 3);
    EXPECT_EQ(run.totals.failures, 0);
    EXPECT_GT(run.totals.published, 0);
    for (const auto& step : run.params)
      for (const auto& tensor : step)
        for (float x : tensor) ASSERT_TRUE(std::isfinite(x));
  }
}

}  // namespace
}  // namespace asteria::runtime::test

// With staleness 0 the service is the synchronous optimizer: every optimizer, float and double,
// blocked and several tensors, whatever the refresh durations — the parameters after every step
// and the final block states are bit-identical to TensorOptimizer's.
#include <gtest/gtest.h>

#include "tests/service/service_harness.hpp"

namespace asteria::runtime::test {
namespace {

template <class T>
class SynchronousEquivalence : public ::testing::Test {};
using Dtypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SynchronousEquivalence, Dtypes);

// Duration models from instant to far longer than a step (a step takes 1.5 s in the harness).
std::vector<std::pair<std::string, platform::fake::FakeOptions>> duration_models(std::uint64_t seed) {
  std::vector<std::pair<std::string, platform::fake::FakeOptions>> models;
  models.emplace_back("instant", platform::fake::FakeOptions{});
  models.emplace_back("uniform 0-0.2 s", random_refresh_durations(seed, [](std::mt19937_64& r) {
                        return std::uniform_real_distribution<double>(0.0, 0.2)(r);
                      }));
  models.emplace_back("exponential mean 3 s, one worker",
                      random_refresh_durations(seed + 1, [](std::mt19937_64& r) {
                        return std::exponential_distribution<double>(1.0 / 3.0)(r);
                      }, 1));
  models.emplace_back("uniform 0-20 s", random_refresh_durations(seed + 2, [](std::mt19937_64& r) {
                        return std::uniform_real_distribution<double>(0.0, 20.0)(r);
                      }));
  return models;
}

TYPED_TEST(SynchronousEquivalence, StalenessZeroMatchesTensorOptimizerForEveryOptimizerAndDurationModel) {
  using T = TypeParam;
  for (const Scenario& scenario : every_optimizer()) {
    SCOPED_TRACE(scenario.name);
    const Trajectory<T> expected = run_synchronous<T>(scenario);
    for (auto policy : {PublishPolicy::deterministic, PublishPolicy::opportunistic})
      for (auto& [model, fake] : duration_models(17)) {
        SCOPED_TRACE(model + ", " + std::string(to_string(policy)));
        ServiceOptions options = service_options(scenario.hp, 0, policy);
        const Trajectory<T> actual = run_on_fake<T>(scenario, options, fake);
        expect_same_trajectory(expected, actual);
        EXPECT_EQ(actual.totals.max_staleness, 0);
        EXPECT_EQ(actual.totals.failures, 0);
        EXPECT_EQ(actual.totals.published, actual.totals.submitted);
      }
  }
}

TYPED_TEST(SynchronousEquivalence, StalenessZeroMatchesWhenBlocksSkipNonFiniteGradients) {
  using T = TypeParam;
  for (Scenario scenario : refreshing_optimizers()) {
    SCOPED_TRACE(scenario.name);
    scenario.nan_gradients = {{2, 0}, {3, 0}, {5, 1}, {8, 0}};
    const Trajectory<T> expected = run_synchronous<T>(scenario);
    const Trajectory<T> actual = run_on_fake<T>(scenario, service_options(scenario.hp, 0),
                                         random_refresh_durations(3, [](std::mt19937_64& r) {
                                           return std::uniform_real_distribution<double>(0.0, 4.0)(r);
                                         }));
    expect_same_trajectory(expected, actual);
    EXPECT_GT(actual.totals.skipped_non_finite, 0);
  }
}

// The opportunistic policy never publishes earlier than the synchronous optimizer; when every
// refresh is done by the next publication point it publishes exactly then, whatever S allows.
TYPED_TEST(SynchronousEquivalence, OpportunisticWithInstantRefreshesMatchesTheSynchronousOptimizerForAnyBound) {
  using T = TypeParam;
  for (const Scenario& scenario : refreshing_optimizers()) {
    SCOPED_TRACE(scenario.name);
    const Trajectory<T> expected = run_synchronous<T>(scenario);
    for (int staleness : {1, 4}) {
      const Trajectory<T> actual =
          run_on_fake<T>(scenario, service_options(scenario.hp, staleness, PublishPolicy::opportunistic), {});
      expect_same_trajectory(expected, actual);
      EXPECT_EQ(actual.totals.max_staleness, 0);
      EXPECT_EQ(actual.totals.visible_wait_s, 0.0);
    }
  }
}

}  // namespace
}  // namespace asteria::runtime::test

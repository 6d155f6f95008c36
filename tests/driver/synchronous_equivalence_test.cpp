// With full numerics and staleness 0 the driver is the synchronous optimizer: the weights after
// every step, and the block states at the end, are bit-identical to TensorOptimizer::step per
// layer — on the fake and the real backend, with the state resting on the device or moved
// between tiers under a tight device budget.
#include <functional>

#include "core/real/real_platform.hpp"
#include "tests/driver/driver_test_support.hpp"

namespace asteria::runtime::test {
namespace {

constexpr int kSteps = 7;

struct Case {
  std::string name;
  OptimizerKind kind;
  int frequency;
  std::function<void(Hyperparameters&)> tune = nullptr;
};

std::vector<Case> optimizers() {
  return {{"shampoo f=2", OptimizerKind::shampoo, 2},
          // Distributed Shampoo's blocking: the 5x5 layer (25 values <= 32) is one vector, run
          // by one-sided Shampoo through a reshaped view of the layer.
          {"shampoo f=2, merged small dims, preconditioned vectors", OptimizerKind::shampoo, 2,
           [](Hyperparameters& hp) {
             hp.max_precond_dim = 32;
             hp.merge_small_dims = true;
             hp.precondition_vectors = true;
             hp.grafting = false;
           }},
          {"soap f=2", OptimizerKind::soap, 2},
          {"kl-shampoo f=3", OptimizerKind::kl_shampoo, 3},
          {"adamw", OptimizerKind::adamw, 1}};
}

template <linalg::Real T>
void expect_driver_matches_reference(platform::Platform& platform, const Case& c, DriverOptions options) {
  Hyperparameters hp = small_blocks(c.kind, c.frequency);
  if (c.tune) c.tune(hp);
  std::vector<std::vector<T>> expected_states;
  const auto expected = synchronous_reference<T>(small_stack(), c.kind, hp, kSteps, &expected_states);

  SyntheticModel<T> model(small_stack());
  StepDriver<T> driver(platform, model, c.kind, hp, options);
  for (int t = 1; t <= kSteps; ++t) {
    const StepRecord r = driver.run_step();
    EXPECT_EQ(r.max_staleness, 0);
    const Weights<T> actual = weights_of(model);
    for (std::size_t l = 0; l < actual.size(); ++l)
      ASSERT_TRUE(bitwise_equal(expected[static_cast<std::size_t>(t - 1)][l], actual[l]))
          << "layer " << l << " differs after step " << t;
  }
  driver.finish();
  ASSERT_EQ(driver.block_count(), expected_states.size());
  // Blocks are numbered layer by layer as the reference's; their states must match too.
  for (std::size_t b = 0; b < driver.block_count(); ++b) {
    const auto values = driver.block_state(b).values();
    EXPECT_TRUE(bitwise_equal(expected_states[b], std::vector<T>(values.begin(), values.end())))
        << "state of " << driver.block_label(b);
  }
  if (c.kind != OptimizerKind::adamw) {
    EXPECT_GT(driver.service().totals().published, 0);
  }
}

template <class T>
class DriverEquivalence : public ::testing::Test {};
using Dtypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(DriverEquivalence, Dtypes);

TYPED_TEST(DriverEquivalence, FullNumericsAtStalenessZeroMatchTensorOptimizerOnTheFakeBackend) {
  for (const Case& c : optimizers()) {
    SCOPED_TRACE(c.name);
    // Refreshes far slower than a step: the step waits, and the numbers must not care.
    platform::fake::FakePlatform platform(fake_timing(25.0, 2));
    expect_driver_matches_reference<TypeParam>(platform, c, full_numerics(0));
  }
}

TYPED_TEST(DriverEquivalence, FullNumericsAtStalenessZeroMatchTensorOptimizerOnTheRealBackend) {
  for (const Case& c : optimizers()) {
    SCOPED_TRACE(c.name);
    real::RealPlatformOptions o;
    o.host_threads = 2;
    o.device_model = {1e15, 0.0, 0.0};  // near-instant modelled kernels: the test stays fast
    real::RealPlatform platform(o);
    expect_driver_matches_reference<TypeParam>(platform, c, full_numerics(0));
  }
}

TEST(DriverEquivalence, StateMovedBetweenTiersUnderATinyDeviceBudgetGivesTheSameNumbers) {
  using T = float;
  for (const Case& c : optimizers()) {
    SCOPED_TRACE(c.name);
    // Room on the device for the largest layer's state only (the driver acquires a layer's
    // blocks together): nearly every update moves state.
    Hyperparameters hp = small_blocks(c.kind, c.frequency);
    if (c.tune) c.tune(hp);
    const std::size_t largest = largest_layer_state_bytes<T>(small_stack(), c.kind, hp);
    real::RealPlatformOptions o;
    o.host_threads = 2;
    o.device_model = {1e15, 0.0, 0.0};
    o.memory.budgets.device = largest;
    real::RealPlatform platform(o);
    DriverOptions options = full_numerics(0);
    options.store.policy = PlacementPolicy::tiered;
    options.store.lookahead = 1;
    expect_driver_matches_reference<T>(platform, c, options);
  }
}

}  // namespace
}  // namespace asteria::runtime::test

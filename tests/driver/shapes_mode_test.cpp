// Shape-only numerics (data-free simulation): no values anywhere, yet the runtime behaves as with
// refresh numerics (the device's values untouched after the warm-up): same refresh schedule,
// same waits and step times, same bytes resident and moved per tier, because the shape blocks
// take their schedule, costs and state sizes from the optimizers' own shape functions.
#include "core/real/real_platform.hpp"
#include "tests/driver/driver_test_support.hpp"

namespace asteria::runtime::test {
namespace {

constexpr int kSteps = 9;

DriverOptions with_numerics(platform::Numerics numerics, int staleness, PlacementPolicy placement) {
  DriverOptions o = full_numerics(staleness);
  o.numerics = numerics;
  o.store.policy = placement;
  return o;
}

std::vector<StepRecord> run(OptimizerKind kind, platform::Numerics numerics, int staleness, PlacementPolicy placement,
                            std::size_t device_budget, std::size_t* state_bytes = nullptr) {
  platform::fake::FakeOptions timing = fake_timing(5.0, 1);
  timing.device_capacity = device_budget;
  platform::fake::FakePlatform platform(std::move(timing));
  SyntheticModel<float> model(small_stack(), numerics);
  StepDriver<float> driver(platform, model, kind, small_blocks(kind, 2), with_numerics(numerics, staleness, placement));
  if (state_bytes != nullptr) *state_bytes = driver.state_bytes();
  for (int t = 0; t < kSteps; ++t) driver.run_step();
  driver.finish();
  return driver.history();
}

TEST(DriverShapesMode, BehavesAsEmulatedModeWithoutAnyValues) {
  for (OptimizerKind kind : {OptimizerKind::shampoo, OptimizerKind::soap, OptimizerKind::kl_shampoo,
                             OptimizerKind::adamw, OptimizerKind::muon}) {
    for (int staleness : {0, 2}) {
      SCOPED_TRACE(std::string(optim::to_string(kind)) + " S=" + std::to_string(staleness));
      std::size_t real_bytes = 0, shape_bytes = 0;
      const auto emulated =
          run(kind, platform::Numerics::refresh, staleness, PlacementPolicy::device, std::size_t{1} << 30, &real_bytes);
      const auto shapes =
          run(kind, platform::Numerics::shapes, staleness, PlacementPolicy::device, std::size_t{1} << 30, &shape_bytes);
      EXPECT_EQ(shape_bytes, real_bytes);
      ASSERT_EQ(emulated.size(), shapes.size());
      for (std::size_t t = 0; t < shapes.size(); ++t) {
        SCOPED_TRACE("step " + std::to_string(t + 1));
        EXPECT_EQ(shapes[t].refreshes_submitted, emulated[t].refreshes_submitted);
        EXPECT_EQ(shapes[t].refreshes_published, emulated[t].refreshes_published);
        EXPECT_EQ(shapes[t].max_staleness, emulated[t].max_staleness);
        EXPECT_DOUBLE_EQ(shapes[t].step_time_s, emulated[t].step_time_s);
        EXPECT_DOUBLE_EQ(shapes[t].refresh_wait_s, emulated[t].refresh_wait_s);
        EXPECT_EQ(shapes[t].resident_bytes, emulated[t].resident_bytes);
      }
    }
  }
}

TEST(DriverShapesMode, TieredPlacementMovesTheSameDeclaredBytes) {
  const OptimizerKind kind = OptimizerKind::soap;
  const std::size_t budget = largest_layer_state_bytes<float>(small_stack(), kind, small_blocks(kind, 2)) + 64;
  const auto emulated = run(kind, platform::Numerics::refresh, 1, PlacementPolicy::tiered, budget);
  const auto shapes = run(kind, platform::Numerics::shapes, 1, PlacementPolicy::tiered, budget);
  ASSERT_EQ(emulated.size(), shapes.size());
  std::size_t moved = 0;
  for (std::size_t t = 0; t < shapes.size(); ++t) {
    SCOPED_TRACE("step " + std::to_string(t + 1));
    EXPECT_EQ(shapes[t].resident_bytes, emulated[t].resident_bytes);
    EXPECT_EQ(shapes[t].bytes_moved.values, emulated[t].bytes_moved.values);
    EXPECT_LE(shapes[t].peak_bytes[0], budget);
    moved += shapes[t].bytes_moved.total();
  }
  EXPECT_GT(moved, 0u) << "the budget should force moves between tiers";
}

TEST(DriverNumerics, ArePairedWithTheTimeOfThePlatform) {
  SyntheticModel<float> model(small_stack());
  const Hyperparameters hp = small_blocks(OptimizerKind::soap, 2);
  {  // shapes on a real clock: host work would take no time
    real::RealPlatformOptions o;
    o.host_threads = 1;
    real::RealPlatform platform(o);
    ASSERT_EQ(platform.time_source(), platform::TimeSource::modelled);
    DriverOptions shapes = full_numerics(0);
    shapes.numerics = platform::Numerics::shapes;
    EXPECT_THROW(StepDriver<float>(platform, model, OptimizerKind::soap, hp, shapes), InputError);
  }
  {  // refresh numerics skip device work that measured time would then not contain
    real::RealPlatformOptions o;
    o.host_threads = 1;
    o.time = platform::TimeSource::measured;
    real::RealPlatform platform(o);
    DriverOptions refresh = full_numerics(0);
    refresh.numerics = platform::Numerics::refresh;
    try {
      StepDriver<float> driver(platform, model, OptimizerKind::soap, hp, refresh);
      ADD_FAILURE() << "refresh numerics with measured time were accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.field(), "--numerics");
    }
  }
  {  // the simulated fake backend runs all three
    for (platform::Numerics n : {platform::Numerics::values, platform::Numerics::refresh, platform::Numerics::shapes}) {
      platform::fake::FakePlatform platform(fake_timing());
      SyntheticModel<float> m(small_stack(), n);
      DriverOptions o = full_numerics(0);
      o.numerics = n;
      EXPECT_NO_THROW(StepDriver<float>(platform, m, OptimizerKind::soap, hp, o).run_step());
    }
  }
}

TEST(SyntheticModel, ShapesHoldNoValuesButCountParameters) {
  const SyntheticModel<float> values(small_stack(), platform::Numerics::values);
  const SyntheticModel<float> shapes(small_stack(), platform::Numerics::shapes);
  EXPECT_EQ(shapes.parameter_count(), values.parameter_count());
  EXPECT_EQ(shapes.parameter_count(), std::size_t{10 * 7 + 6 * 9 + 5 * 5});
  for (std::size_t l = 0; l < shapes.layer_count(); ++l) EXPECT_TRUE(shapes.weights(l).empty());
}

}  // namespace
}  // namespace asteria::runtime::test

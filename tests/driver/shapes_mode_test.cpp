// Shapes mode (data-free simulation): no values anywhere, yet the runtime's behaviour is the
// emulated mode's — same refresh schedule, same waits and step times, same bytes resident and
// moved per tier — when the shape model reports the real optimizers' state bytes.
#include "tests/driver/driver_test_support.hpp"

namespace asteria::runtime::test {
namespace {

constexpr int kSteps = 9;

// State bytes and refresh costs of a real block of that shape (the figures a workload model
// computes analytically; here taken from the real optimizer so the comparison is exact).
ShapeFigures real_figures(OptimizerKind kind, const Hyperparameters& hp, linalg::index rows, linalg::index cols) {
  auto block = optim::make_block_optimizer<float>(kind, hp, rows, cols);
  ShapeFigures f;
  f.state_bytes = block->state().tensor_bytes();
  return f;  // costs are irrelevant here: the fake platform times refreshes by a constant
}

DriverOptions with_mode(NumericsMode mode, int staleness, PlacementPolicy placement) {
  DriverOptions o = full_numerics(staleness);
  o.mode = mode;
  o.store.policy = placement;
  o.shapes = real_figures;
  return o;
}

std::vector<StepRecord> run(OptimizerKind kind, NumericsMode mode, int staleness, PlacementPolicy placement,
                            std::size_t device_budget, ModelData data) {
  platform::fake::FakeOptions timing = fake_timing(5.0, 1);
  timing.device_capacity = device_budget;
  platform::fake::FakePlatform platform(std::move(timing));
  SyntheticModel<float> model(small_stack(), data);
  StepDriver<float> driver(platform, model, kind, small_blocks(kind, 2), with_mode(mode, staleness, placement));
  for (int t = 0; t < kSteps; ++t) driver.run_step();
  driver.finish();
  return driver.history();
}

TEST(DriverShapesMode, BehavesAsEmulatedModeWithoutAnyValues) {
  for (OptimizerKind kind : {OptimizerKind::shampoo, OptimizerKind::soap, OptimizerKind::kl_shampoo,
                             OptimizerKind::adamw, OptimizerKind::muon}) {
    for (int staleness : {0, 2}) {
      SCOPED_TRACE(std::string(optim::to_string(kind)) + " S=" + std::to_string(staleness));
      const auto emulated =
          run(kind, NumericsMode::emulated, staleness, PlacementPolicy::device, std::size_t{1} << 30, ModelData::values);
      const auto shapes =
          run(kind, NumericsMode::shapes, staleness, PlacementPolicy::device, std::size_t{1} << 30, ModelData::shapes);
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
  const auto emulated = run(kind, NumericsMode::emulated, 1, PlacementPolicy::tiered, budget, ModelData::values);
  const auto shapes = run(kind, NumericsMode::shapes, 1, PlacementPolicy::tiered, budget, ModelData::shapes);
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

TEST(DriverShapesMode, NeedsAShapeModel) {
  platform::fake::FakePlatform platform(fake_timing());
  SyntheticModel<float> model(small_stack(), ModelData::shapes);
  DriverOptions o = full_numerics(0);
  o.mode = NumericsMode::shapes;
  EXPECT_THROW(StepDriver<float>(platform, model, OptimizerKind::soap, small_blocks(OptimizerKind::soap, 2), o),
               InputError);
}

TEST(SyntheticModel, ShapesHoldNoValuesButCountParameters) {
  const SyntheticModel<float> values(small_stack(), ModelData::values);
  const SyntheticModel<float> shapes(small_stack(), ModelData::shapes);
  EXPECT_EQ(shapes.parameter_count(), values.parameter_count());
  EXPECT_EQ(shapes.parameter_count(), std::size_t{10 * 7 + 6 * 9 + 5 * 5});
  for (std::size_t l = 0; l < shapes.layer_count(); ++l) EXPECT_TRUE(shapes.weights(l).empty());
}

}  // namespace
}  // namespace asteria::runtime::test

// An op that does no work (AdamW's accumulate: no flops, no bytes) costs nothing: it adds no
// piece to its launch, so no kernel launch is charged for it, and a launch left with neither work
// nor numerics to run is not submitted at all.
#include <string>

#include "core/optim/shape_model.hpp"
#include "tests/common/recording_sink.hpp"
#include "tests/driver/driver_test_support.hpp"

namespace asteria::runtime::test {
namespace {

// A kernel costs a fixed launch on top of its flops.
constexpr double kLaunchSeconds = 1e-3;
platform::Seconds launch_plus_flops(const platform::Cost& piece) { return kLaunchSeconds + piece.flops * 1e-9; }

TEST(DriverEmptyOps, AdamWsAccumulateChargesNoLaunch) {
  using T = float;
  const Hyperparameters hp = small_blocks(OptimizerKind::adamw, 1);
  // What the optimizer launches must cost: every block's apply, nothing for its accumulate.
  double applies = 0.0;
  for (const LayerSpec& layer : small_stack().layers)
    for (const optim::BlockPlan& cut : optim::plan_blocks(OptimizerKind::adamw, hp, std::vector<linalg::index>{layer.rows, layer.cols})) {
      const optim::PhaseCosts c = optim::phase_costs(cut.kind, cut.region.rows, cut.region.cols, sizeof(T));
      ASSERT_FALSE(c.accumulate.does_work());
      ASSERT_TRUE(c.apply.does_work());
      applies += launch_plus_flops(c.apply);
    }
  for (platform::Numerics numerics : {platform::Numerics::values, platform::Numerics::shapes}) {
    SCOPED_TRACE(std::string(platform::to_string(numerics)));
    platform::fake::FakeOptions f = fake_timing();
    f.device_duration = [](const platform::Work& w) { return platform::total_seconds(w.cost, launch_plus_flops); };
    platform::fake::FakePlatform platform(std::move(f));
    SyntheticModel<T> model(small_stack());
    DriverOptions options = full_numerics(0);
    options.numerics = numerics;
    options.device_seconds = launch_plus_flops;
    StepDriver<T> driver(platform, model, OptimizerKind::adamw, hp, options);
    for (int t = 0; t < 3; ++t) {
      const StepRecord r = driver.run_step();
      EXPECT_NEAR(r.optimizer_device_s, applies, 1e-12) << "step " << r.step;
    }
    driver.finish();
  }
}

TEST(DriverEmptyOps, ALaunchWithNothingToRunIsNotSubmitted) {
  // AdamW updated on the host, data-free: each layer's device hook launch is left with nothing
  // charged to it (the updates are host launches) and no numerics to run.
  using T = float;
  const Hyperparameters hp = small_blocks(OptimizerKind::adamw, 1);
  asteria::test::RecordingSink sink(0);
  platform::fake::FakeOptions f = fake_timing();
  f.activities = &sink;
  platform::fake::FakePlatform platform(std::move(f));
  SyntheticModel<T> model(small_stack());
  DriverOptions options = full_numerics(0);
  options.numerics = platform::Numerics::shapes;
  options.store.policy = PlacementPolicy::host;
  StepDriver<T> driver(platform, model, OptimizerKind::adamw, hp, options);
  driver.run_step();
  driver.finish();
  int device_launches = 0;
  int host_launches = 0;
  for (const platform::Activity& a : sink.activities()) {
    if (a.tag.role != platform::ActivityRole::launch) continue;
    if (a.track == platform::device_stream_track(0)) ++device_launches;
    else ++host_launches;
  }
  EXPECT_EQ(device_launches, 0);
  EXPECT_GT(host_launches, 0);  // the updates themselves still run
}

}  // namespace
}  // namespace asteria::runtime::test

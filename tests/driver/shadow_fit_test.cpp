// A run keeps host room for its refresh jobs' buffers at their worst before it starts: one 4 x 4
// layer, Shampoo with f = 2 (refreshes after gradients 2, 4, ...) and S = 2 keeps at most two
// jobs alive (steps 2 and 4, the first published at step 4 after the second's snapshot), each of
// 2 x (2 x 4 x 4 x 4 B) = 256 B: 512 B of host memory.
#include <string>

#include "tests/driver/driver_test_support.hpp"

namespace asteria::runtime::test {
namespace {

using platform::Tier;

constexpr std::size_t kWorstShadow = 2 * 256;

SyntheticModelSpec one_layer() {
  SyntheticModelSpec spec = small_stack();
  spec.layers = {make_layer("layer0", 4, 4, 1e9, 4)};
  return spec;
}

platform::fake::FakeOptions with_host(std::size_t bytes) {
  platform::fake::FakeOptions f = fake_timing(0.5, 2);
  f.host_capacity = bytes;
  return f;
}

TEST(DriverShadowMemory, ARunWhoseShadowStateCannotFitIsRefusedBeforeItStarts) {
  using T = float;
  const Hyperparameters hp = small_blocks(OptimizerKind::shampoo, 2);
  ASSERT_EQ(shadow_bytes_at_worst<T>(one_layer(), OptimizerKind::shampoo, hp, 2), kWorstShadow);
  platform::fake::FakePlatform platform(with_host(kWorstShadow - 1));
  SyntheticModel<T> model(one_layer());
  try {
    StepDriver<T> driver(platform, model, OptimizerKind::shampoo, hp, full_numerics(2));
    FAIL() << "a run whose shadow state cannot fit on the host was accepted";
  } catch (const PlacementError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("keep 512 B of host memory for refresh snapshot buffers (shadow state)"), std::string::npos)
        << what;
    EXPECT_NE(what.find("host needs 512 B, 511 B free of 511 B (short by 1 B)"), std::string::npos) << what;
  }
}

TEST(DriverShadowMemory, PeakHostBytesCountTheShadowState) {
  using T = float;
  const Hyperparameters hp = small_blocks(OptimizerKind::shampoo, 2);
  platform::fake::FakePlatform platform(with_host(kWorstShadow));
  SyntheticModel<T> model(one_layer());
  StepDriver<T> driver(platform, model, OptimizerKind::shampoo, hp, full_numerics(2));
  const std::vector<std::size_t> expected_resident = {0, 256, 256, 512, 512, 512};
  for (std::size_t t = 0; t < expected_resident.size(); ++t) {
    const StepRecord r = driver.run_step();
    EXPECT_EQ(r.resident_bytes[static_cast<std::size_t>(Tier::host)], expected_resident[t]) << "step " << t + 1;
    // The buffers are not optimizer state: the state figure leaves them out (the state itself
    // rests on the device tier here), the shadow figure holds them.
    EXPECT_EQ(r.state_bytes[static_cast<std::size_t>(Tier::host)], 0u) << "step " << t + 1;
    EXPECT_EQ(r.shadow_bytes, expected_resident[t]) << "step " << t + 1;
  }
  EXPECT_EQ(driver.history().back().peak_bytes[static_cast<std::size_t>(Tier::host)], kWorstShadow);
  driver.finish();
}

}  // namespace
}  // namespace asteria::runtime::test

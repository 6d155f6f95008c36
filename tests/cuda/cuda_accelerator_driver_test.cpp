// The step driver with its optimizer state in GPU memory and the per-step math on the GPU
// (RealPlatform with the CUDA accelerator) gives the numbers of the same driver on the host, up
// to the rounding of the GPU's products: in double precision, within 1e-9 relative after every
// step, for every optimizer, with the state on the device, moved between device and host under a
// tight device budget, and on the host. Without a CUDA device the tests skip and say so.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/real/cuda/device.hpp"
#include "core/real/real_platform.hpp"
#include "tests/driver/driver_test_support.hpp"

namespace asteria::runtime::test {
namespace {

using platform::Tier;

struct Case {
  std::string name;
  OptimizerKind kind;
  int frequency;
};

std::vector<Case> optimizers() {
  return {{"shampoo f=2", OptimizerKind::shampoo, 2},
          {"soap f=2", OptimizerKind::soap, 2},
          {"kl-shampoo f=3", OptimizerKind::kl_shampoo, 3},
          {"adamw", OptimizerKind::adamw, 1}};
}

constexpr int kSteps = 6;

std::vector<Weights<double>> run(real::RealPlatformOptions o, const Case& c, PlacementPolicy policy,
                                  std::size_t device_budget = std::size_t{1} << 30) {
  o.host_threads = 2;
  o.time = platform::TimeSource::measured;
  o.memory.budgets.device = device_budget;
  real::RealPlatform platform(o);
  SyntheticModel<double> model(small_stack());
  DriverOptions options = full_numerics(0);
  options.store.policy = policy;
  options.store.lookahead = 1;
  StepDriver<double> driver(platform, model, c.kind, small_blocks(c.kind, c.frequency), options);
  std::vector<Weights<double>> after;
  for (int t = 1; t <= kSteps; ++t) {
    driver.run_step();
    after.push_back(weights_of(model));
  }
  driver.finish();
  return after;
}

class CudaAcceleratorDriver : public ::testing::Test {
 protected:
  void SetUp() override {
    const real::cuda::DeviceInfo info = real::cuda::query_devices();
    if (info.count == 0) GTEST_SKIP() << "no CUDA device on this machine: " << info.reason;
  }
};

TEST_F(CudaAcceleratorDriver, StateOnTheGpuTracksTheHostRunForEveryPlacement) {
  for (const Case& c : optimizers()) {
    for (PlacementPolicy policy : {PlacementPolicy::device, PlacementPolicy::tiered, PlacementPolicy::host}) {
      SCOPED_TRACE(c.name + ", placement " + std::string(to_string(policy)));
      const std::size_t tight = largest_layer_state_bytes<double>(small_stack(), c.kind, small_blocks(c.kind, c.frequency));
      const std::size_t budget = policy == PlacementPolicy::tiered ? tight : std::size_t{1} << 30;
      real::RealPlatformOptions host;
      real::RealPlatformOptions gpu;
      gpu.gpu = real::GpuUse::if_present;
      const auto expected = run(host, c, policy, budget);
      const auto actual = run(gpu, c, policy, budget);
      for (int t = 0; t < kSteps; ++t)
        for (std::size_t l = 0; l < expected[0].size(); ++l) {
          const auto& e = expected[static_cast<std::size_t>(t)][l];
          const auto& a = actual[static_cast<std::size_t>(t)][l];
          ASSERT_EQ(e.size(), a.size());
          double scale = 0.0, deviation = 0.0;
          for (std::size_t i = 0; i < e.size(); ++i) {
            ASSERT_TRUE(std::isfinite(a[i]));
            scale = std::max(scale, std::abs(e[i]));
            deviation = std::max(deviation, std::abs(a[i] - e[i]));
          }
          EXPECT_LE(deviation, 1e-9 * std::max(scale, 1e-30)) << "layer " << l << " after step " << t + 1;
        }
    }
  }
}

}  // namespace
}  // namespace asteria::runtime::test

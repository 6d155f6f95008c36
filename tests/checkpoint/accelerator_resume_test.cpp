// Checkpoints of a run whose optimizer state rests in an accelerator's memory and whose model
// keeps its tensors there (an emulated accelerator: host RAM at addresses that fault when the
// host touches them): saving reads the state and the weights through the accelerator, restoring
// writes them back, and the resumed run continues bit for bit, with the state on the device and
// moved between device and host, at staleness 0 and 5.
#include <gtest/gtest.h>

#include <memory>

#include "core/real/real_platform.hpp"
#include "tests/checkpoint/checkpoint_test_support.hpp"
#include "tests/common/emulated_accelerator.hpp"
#include "tests/driver/device_resident_model.hpp"
#include "tests/driver/driver_test_support.hpp"

namespace asteria::runtime::test {
namespace {

using checkpoint::test::ScratchDir;
using T = float;

struct Case {
  OptimizerKind kind;
  int staleness;
  bool tiered;
};

real::RealPlatformOptions machine(std::size_t device_budget) {
  real::RealPlatformOptions o;
  o.host_threads = 2;
  o.device_model = {1e15, 0.0, 0.0};
  o.memory.budgets.device = device_budget;
  o.accelerator = std::make_shared<asteria::test::EmulatedAccelerator>();
  return o;
}

DriverOptions options_for(const Case& c) {
  DriverOptions o = full_numerics(c.staleness);
  o.warmup_steps = 1;
  if (c.tiered) {
    o.store.policy = PlacementPolicy::tiered;
    o.store.lookahead = 1;
  }
  return o;
}

struct Outcome {
  Weights<T> weights;
  std::vector<std::vector<std::byte>> states;
};

Outcome outcome_of(StepDriver<T>& driver, const DeviceResidentModel<T>& model) {
  driver.finish();  // the states come back to host memory of their own
  Outcome o{model.host_weights(), {}};
  for (std::size_t b = 0; b < driver.block_count(); ++b) o.states.push_back(driver.block_state(b).serialize());
  return o;
}

class AcceleratorResume : public ::testing::TestWithParam<Case> {};

TEST_P(AcceleratorResume, AResumedRunContinuesBitForBit) {
  const Case c = GetParam();
  const Hyperparameters hp = small_blocks(c.kind, 2);
  const std::size_t budget =
      c.tiered ? largest_layer_state_bytes<T>(small_stack(), c.kind, hp) : std::size_t{1} << 30;
  constexpr int k = 3, n = 7;
  ScratchDir dir;
  Outcome straight;
  {
    real::RealPlatform platform(machine(budget));
    DeviceResidentModel<T> model(small_stack());
    StepDriver<T> driver(platform, model, c.kind, hp, options_for(c));
    for (int t = 0; t < n; ++t) driver.run_step();
    straight = outcome_of(driver, model);
  }
  {
    real::RealPlatform platform(machine(budget));
    DeviceResidentModel<T> model(small_stack());
    StepDriver<T> driver(platform, model, c.kind, hp, options_for(c));
    for (int t = 0; t < k; ++t) driver.run_step();
    checkpoint::CheckpointWriter writer(dir.path() / "ckpt", k, {});
    driver.save(writer);
    writer.commit();
  }
  Outcome resumed;
  {
    real::RealPlatform platform(machine(budget));
    DeviceResidentModel<T> model(small_stack());
    StepDriver<T> driver(platform, model, c.kind, hp, options_for(c));
    driver.restore(checkpoint::CheckpointReader::open_latest(dir.path() / "ckpt"));
    for (int t = k; t < n; ++t) driver.run_step();
    if (c.tiered) {
      EXPECT_GT(platform.real_memory().totals(platform::Tier::device, platform::Tier::host).moves, 0u);
    }
    resumed = outcome_of(driver, model);
  }
  ASSERT_EQ(straight.weights.size(), resumed.weights.size());
  for (std::size_t l = 0; l < straight.weights.size(); ++l)
    EXPECT_TRUE(bitwise_equal(straight.weights[l], resumed.weights[l])) << "layer " << l;
  ASSERT_EQ(straight.states.size(), resumed.states.size());
  for (std::size_t b = 0; b < straight.states.size(); ++b) EXPECT_TRUE(straight.states[b] == resumed.states[b]) << "block " << b;
}

INSTANTIATE_TEST_SUITE_P(Cases, AcceleratorResume,
                         ::testing::Values(Case{OptimizerKind::adamw, 0, false}, Case{OptimizerKind::shampoo, 0, false},
                                           Case{OptimizerKind::soap, 5, false}, Case{OptimizerKind::kl_shampoo, 5, true},
                                           Case{OptimizerKind::soap, 0, true}, Case{OptimizerKind::shampoo, 5, true}),
                         [](const auto& param_info) {
                           const Case& c = param_info.param;
                           const std::string name = std::string(optim::to_string(c.kind)) == "kl-shampoo"
                                                        ? "kl_shampoo"
                                                        : std::string(optim::to_string(c.kind));
                           return name + "_S" + std::to_string(c.staleness) + (c.tiered ? "_tiered" : "_device");
                         });

}  // namespace
}  // namespace asteria::runtime::test

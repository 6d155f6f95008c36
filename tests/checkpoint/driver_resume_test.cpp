// A run resumed from a checkpoint continues bit for bit: n steps straight, or k steps, a
// checkpoint, a new platform, model and driver restored from it, and n - k more, give the same
// weights and optimizer states, for every optimizer, at staleness 0 and 5 (refreshes in flight
// at the checkpoint), with the state on the device and with tiered placement spilling to a real
// NVMe tier.
#include <gtest/gtest.h>

#include <memory>

#include "tests/checkpoint/checkpoint_test_support.hpp"
#include "tests/checkpoint/nvme_machine.hpp"
#include "tests/driver/driver_test_support.hpp"

namespace asteria::runtime::test {
namespace {

using checkpoint::test::Machine;
using checkpoint::test::ScratchDir;
using T = float;

struct Outcome {
  Weights<T> weights;
  std::vector<std::vector<std::byte>> states;  // every block's full image
};

enum class Placement { device, tiered_nvme };

// One platform (and its NVMe tier) per driver life, as a new process would have.
std::unique_ptr<Machine> machine_for(Placement placement, const std::filesystem::path& nvme_dir,
                                     std::size_t device_budget, std::size_t host_budget) {
  if (placement == Placement::device) return std::make_unique<Machine>();
  real::TierBudgets budgets;
  budgets.device = device_budget;
  budgets.host = host_budget;
  return std::make_unique<Machine>(nvme_dir, budgets);
}

DriverOptions options_for(Placement placement, int staleness) {
  DriverOptions o = full_numerics(staleness);
  o.warmup_steps = 1;
  if (placement == Placement::tiered_nvme) {
    o.store.policy = PlacementPolicy::tiered;
    o.store.lookahead = 2;
  }
  return o;
}

Outcome outcome_of(StepDriver<T>& driver, SyntheticModel<T>& model) {
  driver.finish();
  Outcome o;
  o.weights = weights_of(model);
  for (std::size_t b = 0; b < driver.block_count(); ++b) o.states.push_back(driver.block_state(b).serialize());
  return o;
}

struct Case {
  OptimizerKind kind;
  int staleness;
  Placement placement;
};

std::string name_of(const Case& c) {
  return std::string(optim::to_string(c.kind)) + " S=" + std::to_string(c.staleness) +
         (c.placement == Placement::device ? " device" : " tiered+NVMe");
}

void expect_resume_is_exact(const Case& c, int k, int n) {
  SCOPED_TRACE(name_of(c));
  const Hyperparameters hp = small_blocks(c.kind, 2);
  const std::size_t layer = largest_layer_state_bytes<T>(small_stack(), c.kind, hp);
  // Room for the largest layer on the device and on the host besides the refresh jobs: the rest
  // goes to NVMe.
  const std::size_t device_budget = layer;
  const std::size_t host_budget = layer + shadow_bytes_at_worst<T>(small_stack(), c.kind, hp, c.staleness);
  ScratchDir dir;

  Outcome straight;
  {
    const auto machine = machine_for(c.placement, dir.path() / "nvme-straight", device_budget, host_budget);
    SyntheticModel<T> model(small_stack());
    StepDriver<T> driver(machine->platform(), model, c.kind, hp, options_for(c.placement, c.staleness));
    for (int t = 0; t < n; ++t) driver.run_step();
    straight = outcome_of(driver, model);
  }
  bool in_flight = false;
  bool spilled = false;
  {
    const auto machine = machine_for(c.placement, dir.path() / "nvme-first", device_budget, host_budget);
    SyntheticModel<T> model(small_stack());
    StepDriver<T> driver(machine->platform(), model, c.kind, hp, options_for(c.placement, c.staleness));
    for (int t = 0; t < k; ++t) driver.run_step();
    for (std::size_t b = 0; b < driver.service().block_count(); ++b) in_flight |= driver.service().in_flight(b) > 0;
    for (std::size_t b = 0; b < driver.store().block_count(); ++b)
      spilled |= driver.store().location(b) == platform::Tier::nvme;
    checkpoint::CheckpointWriter writer(dir.path() / "ckpt", k, {});
    driver.save(writer);
    writer.commit();
  }
  // Refreshes outlive the step boundary under a staleness bound, or when they activate a step late.
  if (c.kind != OptimizerKind::adamw && (c.staleness > 0 || c.kind != OptimizerKind::shampoo)) {
    EXPECT_TRUE(in_flight) << "no refresh was in flight at the checkpoint";
  }
  if (c.placement == Placement::tiered_nvme) {
    EXPECT_TRUE(spilled) << "no state rested on NVMe at the checkpoint";
  }
  Outcome resumed;
  {
    const auto machine = machine_for(c.placement, dir.path() / "nvme-second", device_budget, host_budget);
    SyntheticModel<T> model(small_stack());
    StepDriver<T> driver(machine->platform(), model, c.kind, hp, options_for(c.placement, c.staleness));
    driver.restore(checkpoint::CheckpointReader::open_latest(dir.path() / "ckpt"));
    EXPECT_EQ(driver.steps_done(), k);
    for (int t = k; t < n; ++t) EXPECT_EQ(driver.run_step().step, t + 1);
    resumed = outcome_of(driver, model);
  }
  ASSERT_EQ(straight.weights.size(), resumed.weights.size());
  for (std::size_t l = 0; l < straight.weights.size(); ++l)
    EXPECT_TRUE(bitwise_equal(straight.weights[l], resumed.weights[l])) << "layer " << l;
  ASSERT_EQ(straight.states.size(), resumed.states.size());
  for (std::size_t b = 0; b < straight.states.size(); ++b) EXPECT_TRUE(straight.states[b] == resumed.states[b]) << "block " << b;
}

class DriverResume : public ::testing::TestWithParam<OptimizerKind> {};

TEST_P(DriverResume, ResumingIsBitExactAtStalenessZeroAndFiveOnDeviceAndTieredNvme) {
  for (int staleness : {0, 5})
    for (Placement placement : {Placement::device, Placement::tiered_nvme})
      expect_resume_is_exact({GetParam(), staleness, placement}, 5, 12);
}

INSTANTIATE_TEST_SUITE_P(Optimizers, DriverResume,
                         ::testing::Values(OptimizerKind::soap, OptimizerKind::shampoo, OptimizerKind::kl_shampoo,
                                           OptimizerKind::adamw),
                         [](const ::testing::TestParamInfo<OptimizerKind>& param) {
                           std::string name(optim::to_string(param.param));
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(DriverResume, ACheckpointOfAnotherOptimizerOrStalenessIsRefusedNamingTheChunk) {
  const Hyperparameters hp = small_blocks(OptimizerKind::soap, 2);
  ScratchDir dir;
  {
    platform::fake::FakePlatform platform(fake_timing());
    SyntheticModel<T> model(small_stack());
    StepDriver<T> driver(platform, model, OptimizerKind::soap, hp, full_numerics(1));
    for (int t = 0; t < 3; ++t) driver.run_step();
    checkpoint::CheckpointWriter writer(dir.path() / "ckpt", 3, {});
    driver.save(writer);
    writer.commit();
  }
  const checkpoint::CheckpointReader reader = checkpoint::CheckpointReader::open_latest(dir.path() / "ckpt");
  {
    platform::fake::FakePlatform platform(fake_timing());
    SyntheticModel<T> model(small_stack());
    StepDriver<T> driver(platform, model, OptimizerKind::soap, hp, full_numerics(2));
    try {
      driver.restore(reader);
      FAIL() << "a checkpoint of another staleness bound was restored";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("staleness"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("/refresh"), std::string::npos) << e.what();
    }
  }
  {
    platform::fake::FakePlatform platform(fake_timing());
    SyntheticModel<T> model(small_stack());
    StepDriver<T> driver(platform, model, OptimizerKind::shampoo, small_blocks(OptimizerKind::shampoo, 2),
                         full_numerics(1));
    EXPECT_THROW(driver.restore(reader), InputError);
  }
}

TEST(DriverResume, DeferredUpdatesAndDataFreeRunsCannotBeCheckpointed) {
  const Hyperparameters hp = small_blocks(OptimizerKind::adamw, 2);
  ScratchDir dir;
  platform::fake::FakePlatform platform(fake_timing());
  SyntheticModel<T> model(small_stack());
  DriverOptions o = full_numerics(0);
  o.schedule.order = plan::ScheduleOrder::vertical;
  o.schedule.defer_fraction = 0.5;
  StepDriver<T> driver(platform, model, OptimizerKind::adamw, hp, o);
  driver.run_step();
  checkpoint::CheckpointWriter writer(dir.path() / "ckpt", 1, {});
  try {
    driver.save(writer);
    FAIL() << "a plan with deferred updates was checkpointed";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--defer-fraction");
  }
  driver.finish();
}

}  // namespace
}  // namespace asteria::runtime::test

// Tier budgets hold through whole runs: with a device budget that fits one layer's state under
// tiered placement, every step's resident bytes (and the high-water mark) stay within every
// tier's capacity while state moves down and back up, also when the host spills to NVMe.
#include "core/real/real_platform.hpp"
#include "tests/driver/driver_test_support.hpp"

namespace asteria::runtime::test {
namespace {

using platform::Tier;

constexpr Tier kTiers[] = {Tier::device, Tier::host, Tier::nvme};
std::size_t at(Tier t) { return static_cast<std::size_t>(t); }

void expect_within_budgets(const std::vector<StepRecord>& history) {
  for (const StepRecord& r : history)
    for (Tier t : kTiers) {
      EXPECT_LE(r.resident_bytes[at(t)], r.capacity_bytes[at(t)]) << platform::to_string(t) << " at step " << r.step;
      EXPECT_LE(r.peak_bytes[at(t)], r.capacity_bytes[at(t)]) << platform::to_string(t) << " at step " << r.step;
    }
}

std::size_t moved(const std::vector<StepRecord>& history, Tier from, Tier to) {
  std::size_t sum = 0;
  for (const StepRecord& r : history) sum += r.bytes_moved.at(from, to);
  return sum;
}

DriverOptions tiered(platform::Numerics numerics) {
  DriverOptions o = full_numerics(1);
  o.numerics = numerics;
  o.warmup_steps = 2;
  o.store.policy = PlacementPolicy::tiered;
  o.store.lookahead = 2;
  return o;
}

TEST(DriverTierBudgets, TinyDeviceBudgetOnTheFakeBackendSpillsToNvmeAndNeverOvercommits) {
  using T = float;
  for (OptimizerKind kind : {OptimizerKind::shampoo, OptimizerKind::soap}) {
    SCOPED_TRACE(std::string(optim::to_string(kind)));
    const Hyperparameters hp = small_blocks(kind, 2);
    const std::size_t layer = largest_layer_state_bytes<T>(small_stack(), kind, hp);
    platform::fake::FakeOptions f = fake_timing(0.5, 2);
    f.device_capacity = layer;
    // Not everything fits on the host either (NVMe takes the rest) once the refresh jobs' room
    // is kept free there.
    f.host_capacity = layer + shadow_bytes_at_worst<T>(small_stack(), kind, hp, 1);
    f.copy_bytes_per_second = 1e6;
    platform::fake::FakePlatform platform(std::move(f));
    SyntheticModel<T> model(small_stack());
    StepDriver<T> driver(platform, model, kind, hp, tiered(platform::Numerics::values));
    for (int t = 0; t < 8; ++t) driver.run_step();
    expect_within_budgets(driver.history());
    EXPECT_GT(moved(driver.history(), Tier::device, Tier::host) + moved(driver.history(), Tier::device, Tier::nvme), 0u);
    EXPECT_GT(moved(driver.history(), Tier::host, Tier::device), 0u);
    EXPECT_GT(moved(driver.history(), Tier::nvme, Tier::host) + moved(driver.history(), Tier::nvme, Tier::device), 0u);
    // Moves at 1 MB/s are slow enough that some acquire must wait, and it is counted.
    double acquire = 0.0;
    for (const StepRecord& r : driver.history()) acquire += r.state_move_wait_s;
    EXPECT_GT(acquire, 0.0);
    driver.finish();
  }
}

TEST(DriverTierBudgets, TinyDeviceBudgetOnTheRealBackendNeverOvercommits) {
  using T = float;
  const OptimizerKind kind = OptimizerKind::kl_shampoo;
  const Hyperparameters hp = small_blocks(kind, 2);
  real::RealPlatformOptions o;
  o.host_threads = 2;
  o.device_model = {1e15, 0.0, 0.0};
  o.memory.budgets.device = largest_layer_state_bytes<T>(small_stack(), kind, hp);
  real::RealPlatform platform(o);
  SyntheticModel<T> model(small_stack());
  StepDriver<T> driver(platform, model, kind, hp, tiered(platform::Numerics::refresh));
  for (int t = 0; t < 8; ++t) driver.run_step();
  expect_within_budgets(driver.history());
  EXPECT_GT(moved(driver.history(), Tier::device, Tier::host), 0u);
  EXPECT_GT(moved(driver.history(), Tier::host, Tier::device), 0u);
  driver.finish();
}

TEST(DriverTierBudgets, ADeviceBudgetBelowOneLayerIsAClearPlacementError) {
  using T = float;
  const Hyperparameters hp = small_blocks(OptimizerKind::shampoo, 2);
  platform::fake::FakeOptions f = fake_timing();
  f.device_capacity = largest_layer_state_bytes<T>(small_stack(), OptimizerKind::shampoo, hp) / 4;
  platform::fake::FakePlatform platform(std::move(f));
  SyntheticModel<T> model(small_stack());
  DriverOptions options = full_numerics(0);  // device placement: everything must fit
  try {
    StepDriver<T> driver(platform, model, OptimizerKind::shampoo, hp, options);
    FAIL() << "placement beyond the device budget was accepted";
  } catch (const PlacementError& e) {
    EXPECT_NE(std::string(e.what()).find("device"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace asteria::runtime::test

// The step driver on the real backend with an accelerator: state in device memory the host
// cannot read, the optimizers' math on the accelerator's device, gradients and weights staged
// between the model's memory and the state's, completion at the device's fences. The accelerator
// here is emulated (tests/common/emulated_accelerator.hpp: host RAM at addresses that fault when
// the host touches them), so every path runs on any machine and a host read of device memory
// crashes. With staleness 0 the numbers must be the synchronous optimizer's, bit for bit.
#include <memory>

#include "core/common/error.hpp"
#include "core/real/local_comm.hpp"
#include "core/real/real_platform.hpp"
#include "tests/common/emulated_accelerator.hpp"
#include "tests/driver/device_resident_model.hpp"
#include "tests/driver/driver_test_support.hpp"

namespace asteria::runtime::test {
namespace {

using asteria::test::EmulatedAccelerator;
using platform::Tier;

constexpr int kSteps = 6;

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

real::RealPlatformOptions accelerated(std::shared_ptr<EmulatedAccelerator> accelerator,
                                      platform::TimeSource time = platform::TimeSource::modelled) {
  real::RealPlatformOptions o;
  o.host_threads = 2;
  o.time = time;
  o.device_model = {1e15, 0.0, 0.0};  // near-instant modelled kernels
  o.accelerator = std::move(accelerator);
  return o;
}

template <linalg::Real T, class Model>
void expect_reference_numbers(platform::Platform& platform, Model& model, const Case& c, DriverOptions options) {
  const Hyperparameters hp = small_blocks(c.kind, c.frequency);
  std::vector<std::vector<T>> expected_states;
  const auto expected = synchronous_reference<T>(small_stack(), c.kind, hp, kSteps, &expected_states);
  StepDriver<T> driver(platform, model, c.kind, hp, options);
  for (int t = 1; t <= kSteps; ++t) {
    const StepRecord r = driver.run_step();
    EXPECT_EQ(r.max_staleness, 0);
    Weights<T> actual;
    if constexpr (std::is_same_v<Model, DeviceResidentModel<T>>) actual = model.host_weights();
    else actual = weights_of(model);
    for (std::size_t l = 0; l < actual.size(); ++l)
      ASSERT_TRUE(bitwise_equal(expected[static_cast<std::size_t>(t - 1)][l], actual[l]))
          << "layer " << l << " differs after step " << t;
  }
  driver.finish();  // the states come back to host memory of their own
  ASSERT_EQ(driver.block_count(), expected_states.size());
  for (std::size_t b = 0; b < driver.block_count(); ++b) {
    const auto values = driver.block_state(b).values();
    EXPECT_TRUE(bitwise_equal(expected_states[b], std::vector<T>(values.begin(), values.end())))
        << "state of " << driver.block_label(b);
  }
}

template <class T>
class AcceleratorDriver : public ::testing::Test {};
using Dtypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(AcceleratorDriver, Dtypes);

TYPED_TEST(AcceleratorDriver, StateOnTheDeviceWithAHostModelMatchesTheSynchronousOptimizer) {
  for (const Case& c : optimizers()) {
    SCOPED_TRACE(c.name);
    auto accelerator = std::make_shared<EmulatedAccelerator>();
    real::RealPlatform platform(accelerated(accelerator));
    ASSERT_EQ(&platform.math(Tier::device), &accelerator->math());
    ASSERT_NE(&platform.math(Tier::host), &accelerator->math());
    SyntheticModel<TypeParam> model(small_stack());
    expect_reference_numbers<TypeParam>(platform, model, c, full_numerics(0));
    // The updates ran on the accelerator, on state its memory holds.
    EXPECT_GT(accelerator->emulated_math().operations(), 0);
    EXPECT_GT(accelerator->emulated_memory().copies(), 0);
  }
}

TYPED_TEST(AcceleratorDriver, StateMovedBetweenDeviceAndHostUnderATinyDeviceBudgetMatches) {
  for (const Case& c : optimizers()) {
    SCOPED_TRACE(c.name);
    const Hyperparameters hp = small_blocks(c.kind, c.frequency);
    auto accelerator = std::make_shared<EmulatedAccelerator>();
    real::RealPlatformOptions o = accelerated(accelerator);
    o.memory.budgets.device = largest_layer_state_bytes<TypeParam>(small_stack(), c.kind, hp);
    real::RealPlatform platform(o);
    DriverOptions options = full_numerics(0);
    options.store.policy = PlacementPolicy::tiered;
    options.store.lookahead = 1;
    SyntheticModel<TypeParam> model(small_stack());
    expect_reference_numbers<TypeParam>(platform, model, c, options);
    EXPECT_GT(platform.real_memory().totals(Tier::device, Tier::host).moves, 0u);
  }
}

TYPED_TEST(AcceleratorDriver, ADeviceResidentModelWithStateOnTheDeviceNeedsNoStaging) {
  for (const Case& c : optimizers()) {
    SCOPED_TRACE(c.name);
    auto accelerator = std::make_shared<EmulatedAccelerator>();
    real::RealPlatform platform(accelerated(accelerator));
    DeviceResidentModel<TypeParam> model(small_stack());
    expect_reference_numbers<TypeParam>(platform, model, c, full_numerics(0));
    EXPECT_GT(accelerator->emulated_math().operations(), 0);
  }
}

TYPED_TEST(AcceleratorDriver, ADeviceResidentModelWithStateOnTheHostMovesGradientsDownAndWeightsUp) {
  for (const Case& c : optimizers()) {
    SCOPED_TRACE(c.name);
    auto accelerator = std::make_shared<EmulatedAccelerator>();
    real::RealPlatform platform(accelerated(accelerator));
    DeviceResidentModel<TypeParam> model(small_stack());
    DriverOptions options = full_numerics(0);
    options.store.policy = PlacementPolicy::host;
    expect_reference_numbers<TypeParam>(platform, model, c, options);
  }
}

TEST(AcceleratorDriver, AGradientIsCheckedForNonFiniteValuesOncePerLayerAndStepOnTheDevice) {
  for (const Case& c : optimizers()) {
    SCOPED_TRACE(c.name);
    auto accelerator = std::make_shared<EmulatedAccelerator>();
    real::RealPlatform platform(accelerated(accelerator));
    DeviceResidentModel<float> model(small_stack());
    expect_reference_numbers<float>(platform, model, c, full_numerics(0));
    // Three layers of 6, 6 and 4 blocks: one check (one synchronization) per layer, not per block.
    EXPECT_EQ(accelerator->emulated_math().finiteness_checks(), 3 * kSteps);
  }
}

TEST(AcceleratorDriver, WorkCompletesAtTheDevicesFencesWithMeasuredTime) {
  using T = float;
  for (const Case& c : optimizers()) {
    SCOPED_TRACE(c.name);
    auto accelerator = std::make_shared<EmulatedAccelerator>(/*lagging_fences=*/true);
    real::RealPlatform platform(accelerated(accelerator, platform::TimeSource::measured));
    ASSERT_TRUE(platform.real_device_stream().fenced());
    SyntheticModel<T> model(small_stack());
    expect_reference_numbers<T>(platform, model, c, full_numerics(0));
    EXPECT_GT(accelerator->emulated_math().fences(), 0);
  }
}

// A refresh's snapshot leaves the device by asynchronous copies into page-locked buffers (the
// emulation delivers them only at a later fence's wait, and only into pinned memory): the job's
// works wait for them, so the numbers stay the synchronous optimizer's, and a job reused as a
// spare keeps its page locks instead of taking new ones every refresh.
TEST(AcceleratorDriver, SnapshotsLandAsynchronouslyInPinnedBuffersThatSparesKeep) {
  using T = float;
  for (const Case& c : optimizers()) {
    if (c.kind == OptimizerKind::adamw) continue;  // no refresh
    SCOPED_TRACE(c.name);
    auto accelerator = std::make_shared<EmulatedAccelerator>(/*lagging_fences=*/true);
    real::RealPlatform platform(accelerated(accelerator, platform::TimeSource::measured));
    SyntheticModel<T> model(small_stack());
    expect_reference_numbers<T>(platform, model, c, full_numerics(0));
    const std::int64_t landed = accelerator->emulated_math().async_copies_landed();
    EXPECT_GT(landed, 0);
    EXPECT_LT(accelerator->emulated_math().pins(), landed);
  }
}

TEST(AcceleratorDriver, WithoutAnAcceleratorTheDeviceTierIsTheHostsAndNothingIsFenced) {
  real::RealPlatformOptions o;
  o.host_threads = 1;
  o.time = platform::TimeSource::measured;
  real::RealPlatform platform(o);
  EXPECT_EQ(platform.accelerator(), nullptr);
  EXPECT_EQ(&platform.math(Tier::device), &platform.math(Tier::host));
  EXPECT_TRUE(platform.math(Tier::device).host_addressable());
  EXPECT_FALSE(platform.real_device_stream().fenced());
  EXPECT_FALSE(platform.real_memory().device_is_gpu());
}

// A communicator whose collectives take device memory (as NCCL's), over an in-process world.
class DeviceBufferComm final : public platform::Comm {
 public:
  explicit DeviceBufferComm(platform::Comm& inner) : inner_(inner) {}
  platform::CommGroup& world() override { return inner_.world(); }
  int node_of(int world_rank) const override { return inner_.node_of(world_rank); }
  Tier buffer_tier() const override { return Tier::device; }

 private:
  platform::Comm& inner_;
};

TEST(AcceleratorDriver, DataParallelRanksNeedACommunicatorForTheMemoryTheGradientsAreIn) {
  real::LocalCommWorld world(2, 2);
  DriverOptions options = full_numerics(0);
  options.schedule.data_parallel_ranks = 2;
  const Hyperparameters hp = small_blocks(OptimizerKind::adamw, 1);
  auto expect_refused = [&](platform::Comm& comm, TrainingModel<float>& model, const std::string& expected) {
    real::RealPlatformOptions o = accelerated(std::make_shared<EmulatedAccelerator>());
    o.comm = &comm;
    real::RealPlatform platform(o);
    try {
      StepDriver<float> driver(platform, model, OptimizerKind::adamw, hp, options);
      ADD_FAILURE() << "a driver was built";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  };
  // Gradients in host memory, collectives on device buffers.
  DeviceBufferComm device_comm(world.rank(0));
  SyntheticModel<float> host_model(small_stack());
  expect_refused(device_comm, host_model, "take host memory, where the model keeps its gradients; this one takes device");
  // Gradients in device memory, collectives on host buffers.
  DeviceResidentModel<float> device_model(small_stack());
  expect_refused(world.rank(0), device_model, "take device memory, where the model keeps its gradients; this one takes host");
}

}  // namespace
}  // namespace asteria::runtime::test

// What an update on the host costs a step, worked out by hand on the fake backend (device work
// at 1 s per GFLOP, host launches of fixed length, one copy engine at a fixed byte rate): the
// block's gradient goes down before its host update and its new weights go up after it, and the
// host updates of successive layers overlap when their releases are deferred. None of it changes
// the numbers.
#include <algorithm>

#include "core/real/real_platform.hpp"
#include "tests/common/recording_sink.hpp"
#include "tests/driver/driver_test_support.hpp"

namespace asteria::runtime::test {
namespace {

using platform::ActivityRole;
using platform::Tier;

DriverOptions host_placement(PlacementPolicy policy = PlacementPolicy::host) {
  DriverOptions o = full_numerics(0);
  o.store.policy = policy;
  return o;
}

// One 4 x 4 layer (1 GFLOP forward: 1 s; backward 2 s), AdamW (no refresh), its one block
// updated on the host in 0.5 s; the copy engine moves 16 B/s. The step:
//   forward 0 -> 1, backward 1 -> 3,
//   gradient down (4 x 4 x 4 B = 64 B at 16 B/s = 4 s) 3 -> 7,
//   host update 7 -> 7.5,
//   new weights up (64 B: 4 s) 7.5 -> 11.5,
// so 1 + 2 + 4 + 0.5 + 4 = 11.5 s, of which 3 s compute (without the moves: 3.5 s).
// That layer on the fake backend, its driver charging host-placed ops at `site`.
struct OneHostLayer {
  explicit OneHostLayer(plan::NumericsSite site = plan::NumericsSite::own_launch)
      : platform(options(sink)), model(one_layer()), driver(platform, model, OptimizerKind::adamw,
                                                            optim::default_hyperparameters(OptimizerKind::adamw),
                                                            with_site(site)) {}
  static platform::fake::FakeOptions options(asteria::test::RecordingSink& sink) {
    platform::fake::FakeOptions f = fake_timing();
    f.host_duration = [](const platform::Work&) { return 0.5; };
    f.copy_bytes_per_second = 16.0;
    f.activities = &sink;
    return f;
  }
  static SyntheticModelSpec one_layer() {
    SyntheticModelSpec spec;
    spec.layers = {make_layer("layer0", 4, 4, 1e9, 4)};
    return spec;
  }
  static DriverOptions with_site(plan::NumericsSite site) {
    DriverOptions o = host_placement();
    o.numerics_site = site;
    return o;
  }
  asteria::test::RecordingSink sink;
  platform::fake::FakePlatform platform;
  SyntheticModel<float> model;
  StepDriver<float> driver;
};

TEST(HostUpdateTransfers, AStepPaysTheGradientDownAndTheWeightsUp) {
  OneHostLayer run;
  auto& [sink, platform, model, driver] = run;
  ASSERT_EQ(driver.block_count(), 1u);
  const StepRecord r = driver.run_step();
  EXPECT_DOUBLE_EQ(r.step_time_s, 11.5);
  EXPECT_DOUBLE_EQ(r.compute_s, 3.0);
  EXPECT_DOUBLE_EQ(r.visible_optimizer_s, 8.5);

  const std::vector<platform::fake::MoveRecord>& moved = platform.fake_memory().transfers();
  ASSERT_EQ(moved.size(), 2u);
  EXPECT_EQ(moved[0].from, Tier::device);
  EXPECT_EQ(moved[0].to, Tier::host);
  EXPECT_EQ(moved[0].bytes, 64u);
  EXPECT_DOUBLE_EQ(moved[0].start, 3.0);
  EXPECT_DOUBLE_EQ(moved[0].end, 7.0);
  EXPECT_EQ(moved[1].from, Tier::host);
  EXPECT_EQ(moved[1].to, Tier::device);
  EXPECT_EQ(moved[1].bytes, 64u);
  EXPECT_DOUBLE_EQ(moved[1].start, 7.5);
  EXPECT_DOUBLE_EQ(moved[1].end, 11.5);

  // Each is recorded with the plan op it serves (role transfer), as copies are.
  const plan::StepPlan& plan = driver.plan();
  std::vector<platform::Activity> transfers;
  for (const platform::Activity& a : sink.activities())
    if (a.tag.role == ActivityRole::transfer) transfers.push_back(a);
  ASSERT_EQ(transfers.size(), 2u);
  for (const platform::Activity& a : transfers) {
    EXPECT_EQ(a.tag.step, 1);
    ASSERT_GE(a.tag.op, 0);
    const plan::Op& op = plan.ops[static_cast<std::size_t>(a.tag.op)];
    EXPECT_EQ(op.kind, plan::OpKind::transfer);
    EXPECT_EQ(a.cost.bytes(), 64.0);
    EXPECT_EQ(a.label, "transfer " + std::string(plan::to_string(op.payload)) + " " +
                           std::string(platform::to_string(op.from)) + "->" +
                           std::string(platform::to_string(op.to)) + " " + driver.block_label(0));
  }
  driver.finish();
}

// The same step when the hook's device launch computes the host-placed update (the real
// backend computing values, NumericsSite::hook_launch): the moves are unchanged, the update is
// charged to the device launch at device speed (AdamW on 16 values at 7 + 2·(4·8 + 4) + 3 = 82
// weighted flops each, 1312 flops: 1.312e-6 s at 1 s per GFLOP) and no host worker runs anything:
//   1 + 2 + 4 + 1.312e-6 + 4 = 11.000001312 s.
TEST(HostUpdateTransfers, AtTheHookLaunchTheDeviceStreamComputesTheHostUpdate) {
  OneHostLayer run(plan::NumericsSite::hook_launch);
  auto& [sink, platform, model, driver] = run;
  const StepRecord r = driver.run_step();
  EXPECT_DOUBLE_EQ(r.step_time_s, 11.0 + 1.312e-6);
  EXPECT_DOUBLE_EQ(r.compute_s, 3.0);
  EXPECT_TRUE(sink.on_track("cpu0 worker").empty()) << "the host launch has nothing left to run";
  const std::vector<platform::fake::MoveRecord>& moved = platform.fake_memory().transfers();
  ASSERT_EQ(moved.size(), 2u);
  EXPECT_DOUBLE_EQ(moved[0].end, 7.0);
  EXPECT_DOUBLE_EQ(moved[1].start, 7.0 + 1.312e-6);
  // The update's launch on the device stream carries the update's cost.
  bool charged = false;
  for (const platform::Activity& a : sink.on_track("gpu0 stream"))
    if (a.tag.role == ActivityRole::launch)
      for (const platform::Cost& piece : a.cost.pieces()) charged = charged || piece.flops == 1312.0;
  EXPECT_TRUE(charged);
  driver.finish();
}

TEST(HostUpdateTransfers, DeviceUpdatesMoveNothing) {
  using T = float;
  platform::fake::FakeOptions f = fake_timing();
  f.copy_bytes_per_second = 16.0;
  platform::fake::FakePlatform platform(std::move(f));
  SyntheticModel<T> model(small_stack());
  StepDriver<T> driver(platform, model, OptimizerKind::shampoo, small_blocks(OptimizerKind::shampoo, 2),
                       full_numerics(0));
  for (int t = 0; t < 3; ++t) driver.run_step();
  EXPECT_EQ(driver.plan().count(plan::OpKind::transfer), 0u);
  EXPECT_TRUE(platform.fake_memory().transfers().empty());
  driver.finish();
}

// Three 4 x 4 layers (forward 0.1 s, backward 0.2 s each), AdamW updated on the host in 1 s
// per block by three host workers, moves instant. Finished at the next layer's hook (delay 1),
// the issuing thread waits for each layer's update before it issues the next:
//   backward 2: 0.3 -> 0.5, update 2: 0.5 -> 1.5; backward 1: 0.5 -> 0.7, waits for update 2,
//   update 1: 1.5 -> 2.5; backward 0: 1.5 -> 1.7, waits for update 1, update 0: 2.5 -> 3.5.
// With the delay the driver picks (three workers, one block a layer: past the layer count, so
// every layer is finished after the last hook) the updates overlap:
//   update 2: 0.5 -> 1.5, update 1: 0.7 -> 1.7, update 0: 0.9 -> 1.9: the step takes 1.9 s.
struct OverlapRun {
  platform::Seconds step_time = 0.0;
  int most_busy_workers = 0;
  Weights<float> weights;
};

OverlapRun run_three_host_layers(int host_release_delay, PlacementPolicy policy = PlacementPolicy::host,
                                 int steps = 1) {
  asteria::test::RecordingSink sink;
  platform::fake::FakeOptions f = fake_timing(0.0, 3);
  f.host_duration = [](const platform::Work&) { return 1.0; };
  f.activities = &sink;
  platform::fake::FakePlatform platform(std::move(f));
  SyntheticModelSpec spec = small_stack();
  spec.layers = {make_layer("layer0", 4, 4, 1e8, 4), make_layer("layer1", 4, 4, 1e8, 4),
                 make_layer("layer2", 4, 4, 1e8, 4)};
  SyntheticModel<float> model(spec);
  DriverOptions o = host_placement(policy);
  o.schedule.host_release_delay = host_release_delay;
  StepDriver<float> driver(platform, model, OptimizerKind::adamw, optim::default_hyperparameters(OptimizerKind::adamw),
                           o);
  OverlapRun run;
  for (int t = 0; t < steps; ++t) run.step_time = driver.run_step().step_time_s;
  driver.finish();
  // Most host launches running at one time.
  std::vector<std::pair<double, int>> edges;
  for (const platform::Activity& a : sink.on_track("cpu0 worker")) {
    edges.emplace_back(a.start, 1);
    edges.emplace_back(a.end, -1);
  }
  std::sort(edges.begin(), edges.end());  // at equal times an end (-1) comes first
  int busy = 0;
  for (const auto& [time, change] : edges) run.most_busy_workers = std::max(run.most_busy_workers, busy += change);
  run.weights = weights_of(model);
  return run;
}

TEST(HostUpdateOverlap, HostUpdatesOfSuccessiveLayersRunTogether) {
  const OverlapRun serial = run_three_host_layers(1);
  EXPECT_NEAR(serial.step_time, 3.5, 1e-12);
  EXPECT_EQ(serial.most_busy_workers, 1);
  const OverlapRun overlapped = run_three_host_layers(0);  // the driver's choice
  EXPECT_NEAR(overlapped.step_time, 1.9, 1e-12);
  EXPECT_EQ(overlapped.most_busy_workers, 3);
}

TEST(HostUpdateOverlap, DeferredReleasesLeaveTheNumbersAlone) {
  const OverlapRun serial = run_three_host_layers(1, PlacementPolicy::host, 4);
  const OverlapRun overlapped = run_three_host_layers(0, PlacementPolicy::host, 4);
  const OverlapRun streamed = run_three_host_layers(0, PlacementPolicy::nvme, 4);
  const OverlapRun on_device = run_three_host_layers(0, PlacementPolicy::device, 4);
  for (std::size_t l = 0; l < 3; ++l) {
    EXPECT_TRUE(bitwise_equal(serial.weights[l], overlapped.weights[l])) << "layer " << l;
    EXPECT_TRUE(bitwise_equal(serial.weights[l], streamed.weights[l])) << "layer " << l;
    EXPECT_TRUE(bitwise_equal(serial.weights[l], on_device.weights[l])) << "layer " << l;
  }
}

// Host, NVMe and tiered placements (host updates, deferred releases, gradient and weight
// transfers, state moved between tiers) give the synchronous optimizer's weights bit for bit.
TEST(HostUpdateOverlap, EveryPlacementMatchesTheSynchronousOptimizer) {
  using T = float;
  for (OptimizerKind kind : {OptimizerKind::shampoo, OptimizerKind::soap}) {
    const Hyperparameters hp = small_blocks(kind, 2);
    const auto reference = synchronous_reference<T>(small_stack(), kind, hp, 5);
    for (PlacementPolicy policy : {PlacementPolicy::host, PlacementPolicy::nvme, PlacementPolicy::tiered}) {
      SCOPED_TRACE(std::string(optim::to_string(kind)) + ", " + std::string(to_string(policy)));
      platform::fake::FakeOptions f = fake_timing(0.25, 3);
      f.copy_bytes_per_second = 1e5;
      f.device_capacity = largest_layer_state_bytes<T>(small_stack(), kind, hp);  // tiered: moves
      platform::fake::FakePlatform platform(std::move(f));
      SyntheticModel<T> model(small_stack());
      StepDriver<T> driver(platform, model, kind, hp, host_placement(policy));
      for (int t = 0; t < 5; ++t) {
        driver.run_step();
        const Weights<T> now = weights_of(model);
        for (std::size_t l = 0; l < now.size(); ++l)
          EXPECT_TRUE(bitwise_equal(now[l], reference[static_cast<std::size_t>(t)][l])) << "step " << t + 1 << ", layer " << l;
      }
      driver.finish();
    }
  }
}

// The same on the real backend, where the service's phases run in launch bodies on the device
// stream's thread while the store reads the host room on the issuing thread; the h2d link is
// modelled, so the weights' transfers queue on its copy engine.
TEST(HostUpdateOverlap, TheRealBackendMatchesTheSynchronousOptimizerOnTheHost) {
  using T = float;
  const OptimizerKind kind = OptimizerKind::soap;
  const Hyperparameters hp = small_blocks(kind, 2);
  const auto reference = synchronous_reference<T>(small_stack(), kind, hp, 4);
  real::RealPlatformOptions o;
  o.host_threads = 2;
  o.device_model = {1e15, 0.0, 0.0};
  o.memory.link(Tier::host, Tier::device) = real::LinkModel{1e9, 1e-5};
  real::RealPlatform platform(o);
  SyntheticModel<T> model(small_stack());
  StepDriver<T> driver(platform, model, kind, hp, host_placement());
  for (int t = 0; t < 4; ++t) driver.run_step();
  driver.finish();
  const Weights<T> now = weights_of(model);
  for (std::size_t l = 0; l < now.size(); ++l) EXPECT_TRUE(bitwise_equal(now[l], reference.back()[l])) << "layer " << l;
  EXPECT_GT(platform.real_memory().totals(Tier::host, Tier::device).moves, 0u);
}

}  // namespace
}  // namespace asteria::runtime::test

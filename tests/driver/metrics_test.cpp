// The driver's per-step figures on the fake backend, where time is exact: a step is its
// forward/backward compute plus the optimizer's device work plus the waits, each wait visible;
// synchronous refreshes (S = 0) show as spikes on refresh steps, and a staleness bound that
// covers the refresh time removes them.
#include "core/optim/shape_model.hpp"
#include "core/real/real_platform.hpp"
#include "tests/driver/driver_test_support.hpp"

namespace asteria::runtime::test {
namespace {

// small_stack(): forward 1 + 2 + 3 GFLOP, backward twice that, at one second per GFLOP.
constexpr double kCompute = 18.0;
constexpr int kBlocks = 6 + 6 + 4;  // 10x7, 6x9, 5x5 cut at 4

// Modelled device time of the optimizer work of one step, from the same cost model.
double optimizer_device_seconds(OptimizerKind kind) {
  double sum = 0.0;
  for (const LayerSpec& layer : small_stack().layers) {
    const optim::TensorOptimizer<float> tensor(kind, small_blocks(kind, 1), {layer.rows, layer.cols}, layer.name);
    for (const auto& block : tensor.blocks()) {
      const optim::PhaseCosts c = optim::phase_costs(kind, block.region.rows, block.region.cols, sizeof(float));
      sum += one_second_per_gflop(c.accumulate) + one_second_per_gflop(c.apply);
    }
  }
  return sum;
}

std::vector<StepRecord> run_fake(OptimizerKind kind, int frequency, DriverOptions options, platform::fake::FakeOptions f,
                                 int steps) {
  platform::fake::FakePlatform platform(std::move(f));
  SyntheticModel<float> model(small_stack());
  StepDriver<float> driver(platform, model, kind, small_blocks(kind, frequency), options);
  for (int t = 0; t < steps; ++t) driver.run_step();
  driver.finish();
  return driver.history();
}

TEST(DriverMetrics, WithoutRefreshesAStepIsComputePlusOptimizerDeviceWork) {
  const double device = optimizer_device_seconds(OptimizerKind::adamw);
  ASSERT_GT(device, 0.0);
  for (const StepRecord& r : run_fake(OptimizerKind::adamw, 1, full_numerics(0), fake_timing(), 4)) {
    EXPECT_NEAR(r.compute_s, kCompute, 1e-9);
    EXPECT_NEAR(r.optimizer_device_s, device, 1e-12);
    EXPECT_NEAR(r.step_time_s, kCompute + device, 1e-9);
    EXPECT_NEAR(r.visible_optimizer_s, device, 1e-9);
    EXPECT_EQ(r.refresh_wait_s, 0.0);
    EXPECT_EQ(r.state_move_wait_s, 0.0);
    EXPECT_EQ(r.refresh_backlog, 0);
  }
}

// A model that times its own forward and backward (asteria train's) is the source of the step's
// compute figure; the visible optimizer time is what the step spends beyond it.
TEST(DriverMetrics, AModelThatMeasuresItsComputeGivesTheComputeFigure) {
  struct Measured final : TrainingModel<float> {
    SyntheticModel<float> inner{small_stack()};
    std::size_t layer_count() const override { return inner.layer_count(); }
    const LayerSpec& layer(std::size_t l) const override { return inner.layer(l); }
    linalg::MatrixView<float> weight_matrix(std::size_t l) override { return inner.weight_matrix(l); }
    linalg::ConstMatrixView<float> gradient_matrix(std::size_t l) const override { return inner.gradient_matrix(l); }
    linalg::MatrixView<float> mutable_gradient_matrix(std::size_t l) override { return inner.mutable_gradient_matrix(l); }
    void compute_gradient(std::size_t l, Step t) override { inner.compute_gradient(l, t); }
    std::optional<platform::Seconds> take_compute_seconds() override { return 5.0; }
  };
  platform::fake::FakePlatform platform(fake_timing());
  Measured model;
  StepDriver<float> driver(platform, model, OptimizerKind::adamw, small_blocks(OptimizerKind::adamw, 1), full_numerics(0));
  const StepRecord r = driver.run_step();
  driver.finish();
  const double device = optimizer_device_seconds(OptimizerKind::adamw);
  EXPECT_NEAR(r.step_time_s, kCompute + device, 1e-9);  // the clock still runs the modelled compute
  EXPECT_EQ(r.compute_s, 5.0);
  EXPECT_NEAR(r.visible_optimizer_s, kCompute + device - 5.0, 1e-9);
}

TEST(DriverMetrics, SynchronousRefreshesSpikeOnRefreshStepsAndEveryWaitIsVisible) {
  // Shampoo, f = 3 (refreshes at steps 3, 6, 9), one worker, 40 s per refresh work and two works
  // per job (its left and right root): a refresh step waits for all 16 jobs in turn, 1280 s on
  // top of an ordinary step.
  const double refresh = 80.0;  // a job's two works
  platform::fake::FakeOptions timing = fake_timing(40.0, 1);
  const auto history = run_fake(OptimizerKind::shampoo, 3, full_numerics(0), timing, 9);
  const double ordinary = kCompute + optimizer_device_seconds(OptimizerKind::shampoo);
  for (const StepRecord& r : history) {
    SCOPED_TRACE("step " + std::to_string(r.step));
    EXPECT_GE(r.visible_optimizer_s + 1e-9, r.refresh_wait_s + r.state_move_wait_s);
    if (r.step % 3 == 0) {
      EXPECT_EQ(r.refreshes_submitted, kBlocks);
      EXPECT_NEAR(r.refresh_wait_s, kBlocks * refresh, 1e-6);
      EXPECT_NEAR(r.step_time_s, ordinary + kBlocks * refresh, 1e-6);
    } else {
      EXPECT_EQ(r.refreshes_submitted, 0);
      EXPECT_EQ(r.refresh_wait_s, 0.0);
      EXPECT_NEAR(r.step_time_s, ordinary, 1e-9);
    }
    EXPECT_EQ(r.max_staleness, 0);
  }
}

TEST(DriverMetrics, AStalenessBoundThatCoversTheRefreshTimeRemovesTheSpikes) {
  // 16 jobs of 2 s on 4 workers finish 8 s after submission, within the next step (≥ 18 s):
  // with S = 1 nothing waits, every step takes the same time, and jobs are held (queue depth)
  // until the step they are due in.
  const auto history = run_fake(OptimizerKind::shampoo, 3, full_numerics(1), fake_timing(2.0, 4), 9);
  const double ordinary = kCompute + optimizer_device_seconds(OptimizerKind::shampoo);
  for (const StepRecord& r : history) {
    SCOPED_TRACE("step " + std::to_string(r.step));
    EXPECT_EQ(r.refresh_wait_s, 0.0);
    EXPECT_NEAR(r.step_time_s, ordinary, 1e-9);
    EXPECT_LE(r.max_staleness, 1);
    EXPECT_EQ(r.refresh_backlog, r.step % 3 == 0 ? kBlocks : 0);
  }
  // A bound shorter than the refresh time moves the spike to the step the jobs are due in.
  const auto late = run_fake(OptimizerKind::shampoo, 3, full_numerics(1), fake_timing(40.0, 1), 9);
  for (const StepRecord& r : late) {
    SCOPED_TRACE("step " + std::to_string(r.step));
    if (r.step % 3 == 1 && r.step > 1)
      EXPECT_GT(r.refresh_wait_s, 0.0);
    else
      EXPECT_EQ(r.refresh_wait_s, 0.0);
    EXPECT_GE(r.visible_optimizer_s + 1e-9, r.refresh_wait_s);
  }
}

TEST(DriverMetrics, VisibleOptimizerTimeCoversTheServiceWaitsOnTheRealBackend) {
  for (int staleness : {0, 1}) {
    SCOPED_TRACE("S = " + std::to_string(staleness));
    real::RealPlatformOptions o;
    o.host_threads = 1;
    o.device_model = {2e13, 0.0, 0.0};  // forward + backward of small_stack(): 0.9 ms
    real::RealPlatform platform(o);
    SyntheticModel<float> model(small_stack());
    DriverOptions options = full_numerics(staleness);
    options.device_seconds = [&](const platform::Cost& c) { return o.device_model.duration(c); };
    StepDriver<float> driver(platform, model, OptimizerKind::soap, small_blocks(OptimizerKind::soap, 2), options);
    for (int t = 0; t < 6; ++t) {
      const StepRecord r = driver.run_step();
      EXPECT_GE(r.step_time_s, r.compute_s);  // emulated kernels never end early
      EXPECT_GE(r.visible_optimizer_s + 1e-6, r.refresh_wait_s + r.state_move_wait_s);
      EXPECT_NEAR(r.visible_optimizer_s, r.step_time_s - r.compute_s, 1e-12);
      EXPECT_LE(r.max_staleness, staleness);
    }
    driver.finish();
    EXPECT_GT(driver.service().totals().published, 0);
  }
}

}  // namespace
}  // namespace asteria::runtime::test

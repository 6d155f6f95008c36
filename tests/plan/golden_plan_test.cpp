// Golden plans: the horizontal schedule's plan of small, hand-written steps and of the `tiny`
// model as the step driver derives it, compared as text with files in tests/plan/golden/. A
// change to the schedule shows up as a readable diff of these files; rerun the test with
// ASTERIA_UPDATE_GOLDEN=1 to rewrite them after checking the change is meant.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/plan/schedule.hpp"
#include "core/platform/fake/fake_platform.hpp"
#include "core/runtime/driver/step_driver.hpp"
#include "core/workload/runtime_stack.hpp"

namespace asteria::plan {
namespace {

std::filesystem::path golden_dir() {
  return std::filesystem::path(ASTERIA_TEST_DATA_DIR).parent_path() / "plan" / "golden";
}

void expect_golden(const std::string& text, const std::string& name) {
  const std::filesystem::path file = golden_dir() / name;
  if (const char* update = std::getenv("ASTERIA_UPDATE_GOLDEN"); update != nullptr && std::string(update) == "1") {
    std::ofstream(file) << text;
    GTEST_SKIP() << "rewrote " << file;
  }
  std::ifstream in(file);
  ASSERT_TRUE(in) << "missing golden file " << file << " (run with ASTERIA_UPDATE_GOLDEN=1 to write it)";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(text, expected.str()) << "plan differs from " << file;
}

platform::Cost gemm(double gflops) { return {platform::WorkKind::gemm, gflops * 1e9, gflops * 1e6, 64}; }

// Two layers: "a" with a SOAP-like block (a refresh serves the next step) updated on the device
// and an AdamW-like block updated on the host (its gradient, 2048 B, goes down before its update
// and its weights, 2048 B, up after it); "b" with one Shampoo-like block (a refresh serves its
// own step).
std::vector<LayerWork> two_layers() {
  return {{"a", gemm(1), gemm(2), 4096.0}, {"b", gemm(3), gemm(6), 1024.0}};
}
std::vector<BlockWork> three_blocks() {
  return {{0, "a block 0", 1, Resource::device, gemm(0.5), gemm(0.25), {platform::WorkKind::elementwise, 0, 800, 16}},
          {0, "a block 1", 0, Resource::host, {}, {platform::WorkKind::elementwise, 64, 448, 8}, {}, 2048.0, 2048.0},
          {1, "b block 0", 0, Resource::device, gemm(0.125), gemm(0.5), {platform::WorkKind::elementwise, 0, 128, 16}}};
}

TEST(GoldenPlan, HorizontalTwoLayers) {
  const StepPlan plan = schedule_plan(two_layers(), three_blocks());
  expect_golden(to_text(plan), "horizontal_two_layers.txt");
}

// A third layer "c" on top with one host-updated block (1024 B of gradient and of weights), and
// a host release delay of two layers: the block of "c" is finished (weights up, released) in
// the hook of "a", two hooks after its own, and the host block of "a" after the last hook.
TEST(GoldenPlan, HorizontalHostReleaseDelayTwo) {
  std::vector<LayerWork> layers = two_layers();
  layers.push_back({"c", gemm(1), gemm(2), 1024.0});
  std::vector<BlockWork> blocks = three_blocks();
  blocks.push_back({2, "c block 0", 0, Resource::host, {}, {platform::WorkKind::elementwise, 32, 224, 8}, {}, 1024.0,
                    1024.0});
  const StepPlan plan = schedule_plan(layers, blocks, {.host_release_delay = 2});
  expect_golden(to_text(plan), "horizontal_host_release_delay_two.txt");
}

TEST(GoldenPlan, HorizontalMicroBatchesAndDataParallelReduce) {
  const StepPlan plan =
      schedule_plan(two_layers(), three_blocks(), {.micro_batches = 2, .data_parallel_ranks = 4, .bucket_bytes = 0.0});
  EXPECT_EQ(plan.count(OpKind::forward), 4u);
  EXPECT_EQ(plan.count(OpKind::backward), 4u);
  EXPECT_EQ(plan.count(OpKind::reduce), 2u);  // one bucket per layer, after its last micro-batch
  expect_golden(to_text(plan), "horizontal_micro_batches_reduce.txt");
}

// The plan the step driver derives for the `tiny` transformer with SOAP (state on the host, a
// preconditioner block of at most 64): its blocks, costs and launches come from the workload and
// the optimizer's own shape functions.
TEST(GoldenPlan, TinyModelWithSoapOnTheHost) {
  const workload::WorkloadModel wl = workload::build_workload(workload::find_model_config("tiny"));
  runtime::SyntheticModel<float> model(workload::runtime_stack(wl), platform::Numerics::shapes);
  platform::fake::FakePlatform platform;
  optim::Hyperparameters hp = optim::default_hyperparameters(optim::OptimizerKind::soap);
  hp.max_precond_dim = 64;
  runtime::DriverOptions options;
  options.numerics = platform::Numerics::shapes;
  options.store.policy = runtime::PlacementPolicy::host;
  const runtime::StepDriver<float> driver(platform, model, optim::OptimizerKind::soap, hp, options);
  expect_golden(to_text(driver.plan()), "tiny_soap_host.txt");
}

}  // namespace
}  // namespace asteria::plan

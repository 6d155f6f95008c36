// A refresh job's parts (its factors) run in any order, or at the same time on two threads,
// give exactly what run() gives, and a failing part fails the job; the shape model's parts are
// the real job's.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <thread>

#include "core/optim/factory.hpp"
#include "core/optim/hyperparameters.hpp"
#include "core/optim/shape_model.hpp"
#include "tests/ops/host_device.hpp"

namespace asteria::optim {
namespace {

struct Kind {
  OptimizerKind kind;
  const char* name;
};

class RefreshParts : public ::testing::TestWithParam<Kind> {};

// A block after a few gradients, and two snapshots of it (the same statistics).
struct Snapshots {
  std::unique_ptr<BlockOptimizer<double>> block;
  std::unique_ptr<RefreshJob<double>> whole, parted;
};

Snapshots snapshots(OptimizerKind kind, index rows, index cols, double poison = 0.0) {
  Hyperparameters hp = default_hyperparameters(kind);
  hp.precondition_frequency = 1;
  hp.start_preconditioning_step = 1;
  Snapshots s;
  s.block = make_block_optimizer<double>(kind, hp, rows, cols);
  std::mt19937_64 rng(11);
  std::normal_distribution<double> normal;
  linalg::Matrix<double> g(rows, cols);
  for (Step t = 1; t <= 3; ++t) {
    for (double& x : g.values()) x = normal(rng);
    if (t == 3 && poison != 0.0) g(0, cols - 1) = poison;  // reaches the right factor's statistics
    s.block->accumulate(test::host_device(), g, t);
  }
  s.whole = s.block->snapshot(test::host_device(), 3);
  s.parted = s.block->snapshot(test::host_device(), 3);
  return s;
}

std::vector<std::byte> result_of(const RefreshJob<double>& job) {
  std::vector<std::byte> image(job.result_bytes());
  job.save_result(image);
  return image;
}

TEST_P(RefreshParts, PartsOnTwoThreadsInReverseOrderGiveWhatRunGives) {
  Snapshots s = snapshots(GetParam().kind, 5, 7);
  ASSERT_NE(s.whole, nullptr);
  ASSERT_EQ(s.parted->parts(), 2);
  ASSERT_TRUE(s.whole->run().ok());
  Status right, left;
  std::thread second([&] { right = s.parted->run_part(1); });
  left = s.parted->run_part(0);
  second.join();
  ASSERT_TRUE(left.ok()) << left.reason();
  ASSERT_TRUE(right.ok()) << right.reason();
  EXPECT_EQ(result_of(*s.whole), result_of(*s.parted));
  // Each part's cost is its factor's; together they are the job's.
  double parts = 0.0, whole = 0.0;
  for (int p = 0; p < 2; ++p)
    for (const platform::Cost& c : s.parted->part_cost(p)) parts += c.flops;
  for (const platform::Cost& c : s.whole->cost()) whole += c.flops;
  EXPECT_NEAR(parts, whole, 1e-12 * whole);
  EXPECT_THROW((void)s.parted->run_part(2), std::out_of_range);
}

TEST_P(RefreshParts, AFailedPartFailsTheJobAndTheOtherPartStillRuns) {
  Snapshots s = snapshots(GetParam().kind, 5, 7, std::numeric_limits<double>::infinity());
  const Status left = s.parted->run_part(0);
  const Status right = s.parted->run_part(1);
  EXPECT_FALSE(left.ok() && right.ok());
  EXPECT_FALSE(s.whole->run().ok());
}

TEST_P(RefreshParts, TheShapeModelsPartsAreTheRealJobsParts) {
  const OptimizerKind kind = GetParam().kind;
  Snapshots s = snapshots(kind, 5, 7);
  Hyperparameters hp = default_hyperparameters(kind);
  const auto parts = refresh_part_costs(kind, hp, 5, 7, sizeof(double), /*first=*/true);
  ASSERT_EQ(parts.size(), 2u);
  for (int p = 0; p < 2; ++p) {
    const auto real = s.parted->part_cost(p);
    ASSERT_EQ(real.size(), parts[static_cast<std::size_t>(p)].size());
    for (std::size_t i = 0; i < real.size(); ++i)
      EXPECT_DOUBLE_EQ(real[i].flops, parts[static_cast<std::size_t>(p)][i].flops);
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, RefreshParts,
                         ::testing::Values(Kind{OptimizerKind::shampoo, "shampoo"}, Kind{OptimizerKind::soap, "soap"},
                                           Kind{OptimizerKind::kl_shampoo, "kl_shampoo"}),
                         [](const auto& param_info) { return std::string(param_info.param.name); });

}  // namespace
}  // namespace asteria::optim

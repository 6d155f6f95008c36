// Shampoo against an independent float64 reference (tests/optim/shampoo_reference.hpp), its
// DS step counting, the refresh contract, and the failure policies of the driver.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/common/error.hpp"
#include "core/optim/shampoo.hpp"
#include "core/optim/tensor_optimizer.hpp"
#include "tests/optim/shampoo_reference.hpp"
#include "tests/ops/host_device.hpp"

namespace asteria::optim {
namespace {

using reference::Dense;

template <Real T>
int slot_of(const BlockState<T>& state, const std::string& name) {
  const auto& layout = state.layout();
  for (std::size_t i = 0; i < layout.size(); ++i)
    if (layout[i].name == name) return static_cast<int>(i);
  ADD_FAILURE() << "no tensor named " << name;
  return 0;
}

template <Real T>
int counter_of(const BlockState<T>& state, const std::string& name) {
  const auto& names = state.counter_names();
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<int>(i);
  ADD_FAILURE() << "no counter named " << name;
  return 0;
}

// Hyperparameters of the reference, resolved by the test itself (DS: start −1 ⇒ frequency).
reference::ShampooSettings settings_of(const Hyperparameters& hp) {
  reference::ShampooSettings s;
  s.lr = hp.lr, s.beta1 = hp.beta1, s.beta2 = hp.beta2, s.eps = hp.eps, s.weight_decay = hp.weight_decay;
  s.frequency = hp.precondition_frequency;
  s.start = hp.start_preconditioning_step == -1 ? hp.precondition_frequency : hp.start_preconditioning_step;
  s.exponent = hp.exponent_override > 0 ? hp.exponent_override : 4.0;
  s.grafting = hp.grafting, s.graft_beta2 = hp.graft_beta2, s.graft_eps = hp.graft_eps;
  return s;
}

// The same for a vector under precondition_vectors: DS's one-sided Shampoo, root −1/2.
reference::ShampooSettings vector_settings_of(const Hyperparameters& hp) {
  reference::ShampooSettings s = settings_of(hp);
  s.one_sided = true;
  s.exponent = hp.exponent_override > 0 ? hp.exponent_override : 2.0;
  return s;
}

Hyperparameters well_conditioned_defaults() {
  Hyperparameters hp = default_hyperparameters(OptimizerKind::shampoo);
  hp.lr = 0.1;
  hp.eps = 1e-3;  // keeps float roots of rank-deficient early statistics well defined
  return hp;
}

struct Comparison {
  double worst_relative_error = 0.0;  // max over steps of max|w − w_ref| / max|w_ref − w0|
  int refreshes_reference = 0;
  std::int64_t refreshes = 0;
};

// Runs `steps` steps of Shampoo in precision T and of the float64 reference on the same inputs.
template <Real T>
Comparison compare_with_reference(const Hyperparameters& hp, const std::vector<index>& shape, int steps,
                                  unsigned seed, const reference::ShampooSettings& settings) {
  index count = 1;
  for (index d : shape) count *= d;
  const auto rows = shape.size() == 1 ? 1 : static_cast<int>(shape[0]);  // a vector is 1 x n
  const auto cols = static_cast<int>(count / rows);
  const auto n = static_cast<std::size_t>(count);
  const std::vector<double> w0 = reference::rounded_to<T>(reference::gaussian(n, seed));
  std::vector<double> w_ref = w0;
  std::vector<T> w(w0.begin(), w0.end());
  TensorOptimizer<T> opt(OptimizerKind::shampoo, hp, shape);
  reference::ShampooTensorReference ref(rows, cols, static_cast<int>(hp.max_precond_dim), settings);
  EXPECT_EQ(opt.blocks().size(), ref.block_count());
  Comparison result;
  for (int t = 1; t <= steps; ++t) {
    const std::vector<double> g = reference::rounded_to<T>(reference::gaussian(n, seed * 1000 + t));
    const std::vector<T> g_t(g.begin(), g.end());
    opt.step(w, g_t);
    result.refreshes_reference += ref.step(w_ref, g);
    double diff = 0.0;
    double moved = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      diff = std::max(diff, std::abs(static_cast<double>(w[i]) - w_ref[i]));
      moved = std::max(moved, std::abs(w_ref[i] - w0[i]));
    }
    result.worst_relative_error = std::max(result.worst_relative_error, diff / moved);
  }
  result.refreshes = opt.counters().refreshes; 
  return result;
}

template <Real T>
Comparison compare_with_reference(const Hyperparameters& hp, const std::vector<index>& shape, int steps,
                                  unsigned seed) {
  return compare_with_reference<T>(hp, shape, steps, seed, settings_of(hp));
}

template <Real T>
double tolerance() {
  return std::is_same_v<T, float> ? 5e-5 : 1e-11;
}

template <Real T>
class ShampooTyped : public ::testing::Test {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(ShampooTyped, Precisions);

TYPED_TEST(ShampooTyped, FirstThreeStepsMatchFloat64Reference) {
  const Hyperparameters hp = well_conditioned_defaults();  // f = 1, start −1 ⇒ 1, β2 = 1, grafting
  const Comparison c = compare_with_reference<TypeParam>(hp, {5, 4}, 3, 11);
  EXPECT_LT(c.worst_relative_error, tolerance<TypeParam>());
  EXPECT_EQ(c.refreshes, 3);
  EXPECT_EQ(c.refreshes_reference, 3);
}

TYPED_TEST(ShampooTyped, FrequencyAndLateStartFollowDsSchedule) {
  Hyperparameters hp = well_conditioned_defaults();
  hp.precondition_frequency = 3;
  hp.start_preconditioning_step = 5;  // refreshes at 5 (start), 6 and 9 (multiples past start)
  hp.weight_decay = 0.05;
  const Comparison c = compare_with_reference<TypeParam>(hp, {4, 6}, 10, 12);
  EXPECT_LT(c.worst_relative_error, tolerance<TypeParam>());
  EXPECT_EQ(c.refreshes, 3);
  EXPECT_EQ(c.refreshes_reference, 3);
}

TYPED_TEST(ShampooTyped, DefaultStartIsThePreconditionFrequency) {
  Hyperparameters hp = well_conditioned_defaults();
  hp.precondition_frequency = 3;
  hp.start_preconditioning_step = -1;  // refreshes at 3 and 6
  const Comparison c = compare_with_reference<TypeParam>(hp, {3, 5}, 7, 13);
  EXPECT_LT(c.worst_relative_error, tolerance<TypeParam>());
  EXPECT_EQ(c.refreshes, 2);
}

// Before the first root the update is exactly Adam (graft β2, graft ε) on the same momentum.
TYPED_TEST(ShampooTyped, GraftDirectionAloneBeforeTheFirstRoot) {
  using T = TypeParam;
  Hyperparameters hp = well_conditioned_defaults();
  hp.precondition_frequency = 4;
  hp.graft_beta2 = 0.99;
  hp.graft_eps = 1e-6;
  const std::size_t n = 12;
  std::vector<double> w_ref = reference::rounded_to<T>(reference::gaussian(n, 5));
  std::vector<T> w(w_ref.begin(), w_ref.end());
  std::vector<double> m(n, 0.0), v(n, 0.0);
  TensorOptimizer<T> opt(OptimizerKind::shampoo, hp, {3, 4});
  for (int t = 1; t <= 3; ++t) {
    const std::vector<double> g = reference::rounded_to<T>(reference::gaussian(n, 50 + t));
    const std::vector<T> g_t(g.begin(), g.end());
    opt.step(w, g_t);
    for (std::size_t i = 0; i < n; ++i) {
      m[i] = hp.beta1 * m[i] + (1 - hp.beta1) * g[i];
      v[i] = hp.graft_beta2 * v[i] + (1 - hp.graft_beta2) * g[i] * g[i];
      const double mhat = m[i] / (1 - std::pow(hp.beta1, t));
      const double vhat = v[i] / (1 - std::pow(hp.graft_beta2, t));
      w_ref[i] -= hp.lr * mhat / (std::sqrt(vhat) + hp.graft_eps);
    }
    for (std::size_t i = 0; i < n; ++i) EXPECT_NEAR(w[i], w_ref[i], 1e-5) << "step " << t << " element " << i;
  }
  EXPECT_EQ(opt.counters().refreshes, 0);
}

TYPED_TEST(ShampooTyped, ExponentOverrideChangesTheRoot) {
  Hyperparameters hp = well_conditioned_defaults();
  hp.exponent_override = 2.0;  // −1/2 per side
  hp.precondition_frequency = 2;
  const Comparison c = compare_with_reference<TypeParam>(hp, {4, 3}, 5, 14);
  EXPECT_LT(c.worst_relative_error, tolerance<TypeParam>());
  TensorOptimizer<TypeParam> opt(OptimizerKind::shampoo, hp, {4, 3});
  EXPECT_EQ(dynamic_cast<const ShampooBlock<TypeParam>&>(*opt.blocks()[0].optimizer).root_exponent(), 2.0);
}

// Without grafting the scale of the roots shows, so a missing 1 − β2^k would be caught.
TYPED_TEST(ShampooTyped, Beta2BelowOneIsBiasCorrectedBeforeTheRoots) {
  Hyperparameters hp = well_conditioned_defaults();
  hp.beta2 = 0.9;
  hp.grafting = false;
  hp.lr = 0.02;
  hp.precondition_frequency = 2;
  const Comparison c = compare_with_reference<TypeParam>(hp, {5, 3}, 6, 15);
  EXPECT_LT(c.worst_relative_error, tolerance<TypeParam>());
  EXPECT_EQ(c.refreshes, 3);
}

TYPED_TEST(ShampooTyped, CoupledNewtonRootsMatchTheReference) {
  Hyperparameters hp = well_conditioned_defaults();
  hp.root_method = RootMethod::coupled_newton;
  hp.beta2 = 0.99;
  hp.precondition_frequency = 2;
  const Comparison c = compare_with_reference<TypeParam>(hp, {4, 5}, 6, 16);
  // The iteration stops at ‖M − I‖∞ ≤ 1e-6, so the roots are that accurate, not exact.
  EXPECT_LT(c.worst_relative_error, 1e-5);
  EXPECT_EQ(c.refreshes, 3);
}

TYPED_TEST(ShampooTyped, BlockedTensorMatchesBlockwiseReference) {
  Hyperparameters hp = well_conditioned_defaults();
  hp.max_precond_dim = 4;  // a 6 x 2 x 5 tensor is a 6 x 10 matrix: blocks 4|2 by 4|4|2
  hp.precondition_frequency = 2;
  hp.beta2 = 0.95;
  const Comparison c = compare_with_reference<TypeParam>(hp, {6, 2, 5}, 5, 17);
  EXPECT_LT(c.worst_relative_error, tolerance<TypeParam>());
  EXPECT_EQ(c.refreshes, 6 * 2);  // every block at steps 2 and 4
}


TEST(Shampoo, DistributedShampooDefaultsInDouble) {
  Hyperparameters hp = default_hyperparameters(OptimizerKind::shampoo);  // ε = 1e-12, f = 1, β2 = 1
  const Comparison c = compare_with_reference<double>(hp, {6, 4}, 4, 18);
  EXPECT_LT(c.worst_relative_error, 1e-8);
  EXPECT_EQ(c.refreshes, 4);
}

// The published roots are (L/(1 − β2^k) + εI)^(−1/4) of the statistics the refresh saw.
TYPED_TEST(ShampooTyped, PublishedRootsAreInverseFourthRootsOfTheStatistics) {
  using T = TypeParam;
  Hyperparameters hp = well_conditioned_defaults();
  hp.beta2 = 0.9;
  TensorOptimizer<T> opt(OptimizerKind::shampoo, hp, {4, 3});
  std::vector<T> w(12, T(0.5));
  for (int t = 1; t <= 2; ++t) {
    const std::vector<double> g = reference::gaussian(12, 70 + t);
    opt.step(w, std::vector<T>(g.begin(), g.end()));
  }
  const BlockState<T>& state = opt.blocks()[0].optimizer->state();
  const auto stats = state.tensor(slot_of(state, "L"));
  const auto root = state.tensor(slot_of(state, "L_root"));
  Dense l(4, 4);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) l(i, j) = static_cast<double>(stats(i, j)) / (1.0 - 0.9 * 0.9);
  const Dense expected = reference::inverse_root(l, 4.0, hp.eps);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      EXPECT_NEAR(root(i, j), expected(i, j), 1e-4 * std::max(1.0, std::abs(expected(i, j)))) << i << "," << j;
  EXPECT_EQ(state.counter(counter_of(state, "root_stats_steps")), 2);
}

// snapshot() copies the statistics: later accumulation does not change the job's result.
TYPED_TEST(ShampooTyped, RefreshJobOwnsItsSnapshot) {
  using T = TypeParam;
  Hyperparameters hp = well_conditioned_defaults();
  ShampooBlock<T> block(hp, 3, 5);
  linalg::Matrix<T> g(3, 5);
  for (index i = 0; i < 3; ++i)
    for (index j = 0; j < 5; ++j) g(i, j) = static_cast<T>(0.1 * (i + 1) - 0.05 * j);
  block.accumulate(test::host_device(), g, 1);
  ASSERT_TRUE(block.refresh_due(1));
  auto job = block.snapshot(test::host_device(), 1);
  auto twin = block.snapshot(test::host_device(), 1);
  block.accumulate(test::host_device(), g, 2);  // the block moves on before the job runs
  block.state().tensor(slot_of(block.state(), "R"))(0, 0) = std::numeric_limits<T>::quiet_NaN();
  ASSERT_TRUE(job->run().ok());
  ASSERT_TRUE(twin->run().ok());
  EXPECT_EQ(job->stats_step(), 1);
  const auto& a = dynamic_cast<const ShampooRefreshJob<T>&>(*job);
  const auto& b = dynamic_cast<const ShampooRefreshJob<T>&>(*twin);
  for (index i = 0; i < 5; ++i)
    for (index j = 0; j < 5; ++j) EXPECT_EQ(a.right_root()(i, j), b.right_root()(i, j));
  EXPECT_EQ(job->bytes(), 2 * (9 + 25) * sizeof(T));
  block.publish(test::host_device(), *job);
  EXPECT_EQ(block.state().tensor(slot_of(block.state(), "R_root"))(2, 3), a.right_root()(2, 3));
}

TEST(Shampoo, RefreshCostDescribesBothFactors) {
  Hyperparameters hp = well_conditioned_defaults();
  ShampooBlock<float> eigen_block(hp, 8, 4);
  const auto eigen_cost = eigen_block.snapshot(test::host_device(), 1)->cost();
  ASSERT_EQ(eigen_cost.size(), 4u);  // per factor: eigh, then the reconstruction product
  EXPECT_EQ(eigen_cost[0].kind, platform::WorkKind::eigh);
  EXPECT_EQ(eigen_cost[0].dimension, 8);
  EXPECT_NEAR(eigen_cost[0].flops, 9.0 * 512, 1e-9);
  EXPECT_EQ(eigen_cost[1].kind, platform::WorkKind::gemm);
  EXPECT_EQ(eigen_cost[2].kind, platform::WorkKind::eigh);
  EXPECT_EQ(eigen_cost[2].dimension, 4);
  hp.root_method = RootMethod::coupled_newton;
  ShampooBlock<float> newton_block(hp, 8, 4);
  linalg::Matrix<float> g(8, 4);
  for (index i = 0; i < 8; ++i)
    for (index j = 0; j < 4; ++j) g(i, j) = static_cast<float>(std::sin(1.0 + i * 4 + j));
  newton_block.accumulate(test::host_device(), g, 1);
  auto job = newton_block.snapshot(test::host_device(), 1);
  const auto estimate = job->cost();
  ASSERT_EQ(estimate.size(), 2u);
  EXPECT_EQ(estimate[0].kind, platform::WorkKind::newton);
  EXPECT_EQ(estimate[1].dimension, 4);
  EXPECT_GT(estimate[0].flops, estimate[1].flops);
  ASSERT_TRUE(job->run().ok());
  // After the run the cost counts the iterations made: 6 n³ flops each for p = 4 (X·M′ by GEMM,
  // M′² and M′⁴ by SYRK, M′⁴·M by GEMM).
  for (const platform::Cost& piece : job->cost()) {
    const double n3 = static_cast<double>(piece.dimension * piece.dimension * piece.dimension);
    const double iterations = piece.flops / (6.0 * n3);
    EXPECT_GE(iterations, 1.0);
    EXPECT_LE(iterations, 100.0);
    EXPECT_EQ(iterations, std::round(iterations));
  }
}

// NaN in L: the refresh fails, the previous root stays, the failure is counted; more than
// max_consecutive_refresh_failures in a row is a NumericalError naming the block.
TYPED_TEST(ShampooTyped, FailedRefreshKeepsThePreviousRootUntilTheLimit) {
  using T = TypeParam;
  Hyperparameters hp = well_conditioned_defaults();
  hp.max_precond_dim = 3;  // a 6 x 3 tensor: blocks 0 (rows 0:3) and 1 (rows 3:6)
  TensorOptimizer<T> opt(OptimizerKind::shampoo, hp, {6, 3}, "layer.w");
  std::vector<T> w(18, T(1));
  auto step = [&](int t) {
    const std::vector<double> g = reference::gaussian(18, 90 + t);
    opt.step(w, std::vector<T>(g.begin(), g.end()));
  };
  for (int t = 1; t <= 3; ++t) step(t);
  BlockState<T>& state = opt.blocks()[1].optimizer->state();
  const int l_root = slot_of(state, "L_root");
  const std::vector<T> root_before(state.tensor(l_root).data(), state.tensor(l_root).data() + 9);
  state.tensor(slot_of(state, "L"))(1, 1) = std::numeric_limits<T>::quiet_NaN();
  for (int t = 4; t <= 6; ++t) {  // three failures are tolerated (limit 3)
    const std::vector<T> w_before = w;
    step(t);
    EXPECT_EQ(opt.counters().refresh_failures, t - 3);
    EXPECT_EQ(std::vector<T>(state.tensor(l_root).data(), state.tensor(l_root).data() + 9), root_before);
    EXPECT_EQ(state.counter(counter_of(state, "root_stats_steps")), 3);
    for (std::size_t i = 9; i < 18; ++i) {
      EXPECT_TRUE(std::isfinite(w[i]));
      EXPECT_NE(w[i], w_before[i]) << "the block still updates with its previous root";
    }
  }
  EXPECT_EQ(opt.counters().refreshes, 3 * 2 + 3);  // block 0 kept refreshing
  const std::vector<T> w_before = w;
  try {
    step(7);
    FAIL() << "expected NumericalError";
  } catch (const NumericalError& e) {
    EXPECT_NE(std::string(e.what()).find("layer.w block 1"), std::string::npos) << e.what();
  }
  for (std::size_t i = 9; i < 18; ++i) EXPECT_EQ(w[i], w_before[i]);
}

TYPED_TEST(ShampooTyped, NonFiniteGradientNeverReachesTheWeights) {
  using T = TypeParam;
  Hyperparameters hp = well_conditioned_defaults();
  hp.max_precond_dim = 4;  // 6 x 5: blocks (0:4,0:4) (0:4,4:5) (4:6,0:4) (4:6,4:5)
  TensorOptimizer<T> opt(OptimizerKind::shampoo, hp, {6, 5});
  std::vector<T> w(30, T(1));
  std::vector<double> g = reference::gaussian(30, 3);
  opt.step(w, std::vector<T>(g.begin(), g.end()));
  const std::vector<std::byte> state_before = opt.blocks()[2].optimizer->state().serialize();
  const std::vector<T> w_before = w;
  g[5 * 5 + 1] = std::numeric_limits<double>::infinity();  // element (5, 1): block 2
  opt.step(w, std::vector<T>(g.begin(), g.end()));
  EXPECT_EQ(opt.counters().skipped_non_finite_blocks, 1);
  EXPECT_EQ(opt.blocks()[2].optimizer->state().serialize(), state_before);
  for (index i = 0; i < 6; ++i)
    for (index j = 0; j < 5; ++j) {
      const auto at = static_cast<std::size_t>(i * 5 + j);
      EXPECT_TRUE(std::isfinite(w[at]));
      if (i >= 4 && j < 4)
        EXPECT_EQ(w[at], w_before[at]);
      else
        EXPECT_NE(w[at], w_before[at]);
    }
}

TEST(Shampoo, OverflowingUpdateLeavesTheWeightsUntouched) {
  Hyperparameters hp = well_conditioned_defaults();
  hp.lr = 1e308;
  hp.weight_decay = 10.0;  // lr·(P + wd·W) overflows to Inf
  TensorOptimizer<double> opt(OptimizerKind::shampoo, hp, {3, 3}, "w");
  std::vector<double> w(9, 1.0);
  const std::vector<double> g = reference::gaussian(9, 4, 10.0);
  EXPECT_THROW(opt.step(w, g), NumericalError);
  EXPECT_EQ(w, std::vector<double>(9, 1.0));
}

TEST(Shampoo, HyperparametersAreValidated) {
  Hyperparameters hp = default_hyperparameters(OptimizerKind::shampoo);
  hp.start_preconditioning_step = 0;
  EXPECT_THROW(TensorOptimizer<float>(OptimizerKind::shampoo, hp, {2, 2}), InputError);
  hp.start_preconditioning_step = -1;
  hp.root_method = RootMethod::coupled_newton;
  hp.exponent_override = 2.5;  // Newton needs an integer order
  EXPECT_THROW(TensorOptimizer<float>(OptimizerKind::shampoo, hp, {2, 2}), InputError);
  hp.root_method = RootMethod::eigen;
  TensorOptimizer<float> fine(OptimizerKind::shampoo, hp, {2, 2});
  EXPECT_EQ(fine.blocks()[0].optimizer->name(), "shampoo");
}

// Shampoo gives order-1 tensors to AdamW with the graft betas (DS's AdaGrad β2 = 1 is no Adam).
// precondition_vectors: a vector is cut into 1 x n pieces of at most max_precond_dim, each
// DS's one-sided Shampoo (one n x n factor, root −1/2), with and without grafting and momentum.
TYPED_TEST(ShampooTyped, PreconditionedVectorsMatchTheOneSidedFloat64Reference) {
  for (const bool grafting : {true, false}) {
    SCOPED_TRACE(grafting ? "grafting" : "no grafting");
    Hyperparameters hp = well_conditioned_defaults();
    hp.precondition_vectors = true;
    hp.grafting = grafting;
    hp.max_precond_dim = 4;  // 7 values: blocks of 4 and 3
    hp.precondition_frequency = 4;  // full-rank statistics at the first root: float stays close
    hp.beta2 = 0.95;
    const Comparison c = compare_with_reference<TypeParam>(hp, {7}, 9, 21, vector_settings_of(hp));
    EXPECT_LT(c.worst_relative_error, tolerance<TypeParam>());
    EXPECT_EQ(c.refreshes, 2 * 2);  // both blocks at steps 4 and 8
    EXPECT_EQ(c.refreshes_reference, 2 * 2);
  }
}

TEST(Shampoo, PreconditionedVectorsKeepOneFactorWithRootOneHalf) {
  Hyperparameters hp = default_hyperparameters(OptimizerKind::shampoo);
  hp.precondition_vectors = true;
  const std::vector<BlockPlan> plan = plan_blocks(OptimizerKind::shampoo, hp, std::vector<index>{1500});
  ASSERT_EQ(plan.size(), 2u);  // 1024 + 476
  for (const BlockPlan& p : plan) {
    EXPECT_EQ(p.kind, OptimizerKind::shampoo);
    EXPECT_TRUE(p.hp.vector_block);
    EXPECT_EQ(p.region.rows, 1);
  }
  EXPECT_EQ(plan[1].region.cols, 476);
  ShampooBlock<double> block(plan[1].hp, 1, 476);
  EXPECT_EQ(block.root_exponent(), 2.0);
  // Matrices keep both factors and −1/4.
  EXPECT_FALSE(plan_blocks(OptimizerKind::shampoo, hp, std::vector<index>{4, 5})[0].hp.vector_block);
  // Other optimizers' vectors are not Shampoo's to precondition.
  EXPECT_EQ(plan_blocks(OptimizerKind::soap, hp, std::vector<index>{8})[0].kind, OptimizerKind::adamw);
}

// merge_small_dims: dimensions of 1 dropped, a tensor of at most max_precond_dim values is one
// vector (DS's merge_small_dims, target order 1); larger ones stay matrices.
TEST(Shampoo, SmallTensorsMergeIntoOneVector) {
  Hyperparameters hp = default_hyperparameters(OptimizerKind::shampoo);
  hp.merge_small_dims = true;
  struct Case {
    std::vector<index> shape;
    MatrixShape view;
    bool vector;
  };
  for (const Case& c : std::vector<Case>{{{24, 32}, {1, 768}, true},
                                         {{32, 32}, {1, 1024}, true},
                                         {{33, 32}, {33, 32}, false},
                                         {{1, 5, 1, 7}, {1, 35}, true},
                                         {{2000, 1}, {1, 2000}, true},
                                         {{40, 1, 30}, {40, 30}, false}}) {
    const TensorView view = tensor_view(OptimizerKind::shampoo, hp, c.shape);
    EXPECT_EQ(view.shape.rows, c.view.rows) << c.shape.size();
    EXPECT_EQ(view.shape.cols, c.view.cols) << c.shape.size();
    EXPECT_EQ(view.vector, c.vector) << c.shape.size();
  }
  // A merged vector goes where vectors go: AdamW, or one-sided Shampoo when asked.
  EXPECT_EQ(plan_blocks(OptimizerKind::shampoo, hp, std::vector<index>{24, 32})[0].kind, OptimizerKind::adamw);
  hp.precondition_vectors = true;
  const std::vector<BlockPlan> plan = plan_blocks(OptimizerKind::shampoo, hp, std::vector<index>{24, 32});
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_TRUE(plan[0].hp.vector_block);
  EXPECT_EQ(plan[0].region.cols, 768);
  // Without the option, and for the other optimizers, nothing merges.
  EXPECT_FALSE(tensor_view(OptimizerKind::soap, hp, std::vector<index>{24, 32}).vector);
  hp.merge_small_dims = false;
  EXPECT_EQ(tensor_view(OptimizerKind::shampoo, hp, std::vector<index>{24, 32}).shape.rows, 24);
}

// A merged matrix is optimized as the vector of its values: bit for bit the optimizer of that
// vector (checked against the one-sided float64 reference above).
TYPED_TEST(ShampooTyped, AMergedMatrixIsTheVectorOfItsValues) {
  using T = TypeParam;
  Hyperparameters hp = well_conditioned_defaults();
  hp.precondition_vectors = true;
  hp.max_precond_dim = 32;
  hp.precondition_frequency = 2;
  Hyperparameters merged = hp;
  merged.merge_small_dims = true;
  TensorOptimizer<T> matrix(OptimizerKind::shampoo, merged, {6, 5});
  TensorOptimizer<T> vector(OptimizerKind::shampoo, hp, {30});
  const std::vector<double> w0 = reference::gaussian(30, 5);
  std::vector<T> a(w0.begin(), w0.end());
  std::vector<T> b = a;
  for (int t = 1; t <= 5; ++t) {
    const std::vector<double> g = reference::gaussian(30, 500 + t);
    const std::vector<T> gt(g.begin(), g.end());
    matrix.step(a, gt);
    vector.step(b, gt);
    ASSERT_EQ(a, b) << "step " << t;
  }
  EXPECT_EQ(matrix.counters().refreshes, 2);
}

TEST(Shampoo, VectorsFallBackToAdamW) {
  TensorOptimizer<float> opt(OptimizerKind::shampoo, default_hyperparameters(OptimizerKind::shampoo), {7});
  ASSERT_EQ(opt.blocks().size(), 1u);
  EXPECT_EQ(opt.blocks()[0].optimizer->name(), "adamw");
}

}  // namespace
}  // namespace asteria::optim

// Muon against an independent float64 reference written with plain loops, plus the driver's
// routing (whole matrix as one block, vectors to AdamW) and the non-finite policy.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/optim/tensor_optimizer.hpp"
#include "tests/optim/reference_math.hpp"

namespace asteria::optim {
namespace {

using reference::Dense;

// One Muon step in float64 (KellerJordan/Muon, ALGORITHMS.md): w and m are rows x cols.
void muon_reference_step(Dense& w, Dense& m, const Dense& g, const Hyperparameters& hp) {
  const double beta = hp.beta1;
  Dense u(g.rows, g.cols);
  for (std::size_t i = 0; i < g.a.size(); ++i) {
    m.a[i] = beta * m.a[i] + (1.0 - beta) * g.a[i];
    u.a[i] = hp.nesterov ? (1.0 - beta) * g.a[i] + beta * m.a[i] : m.a[i];
  }
  const bool tall = g.rows > g.cols;
  Dense x = tall ? reference::transpose(u) : u;
  const double norm = reference::frobenius(x) + 1e-7;
  for (double& v : x.a) v /= norm;
  for (int s = 0; s < hp.newton_schulz_steps; ++s) {
    const Dense a = reference::multiply(x, reference::transpose(x));
    const Dense aa = reference::multiply(a, a);
    Dense b(a.rows, a.cols);
    for (std::size_t i = 0; i < b.a.size(); ++i) b.a[i] = -4.7750 * a.a[i] + 2.0315 * aa.a[i];
    const Dense bx = reference::multiply(b, x);
    for (std::size_t i = 0; i < x.a.size(); ++i) x.a[i] = 3.4445 * x.a[i] + bx.a[i];
  }
  if (tall) x = reference::transpose(x);
  const double scale = std::sqrt(std::max(1.0, static_cast<double>(g.rows) / g.cols));
  for (std::size_t i = 0; i < w.a.size(); ++i)
    w.a[i] = (1.0 - hp.lr * hp.weight_decay) * w.a[i] - hp.lr * scale * x.a[i];
}

template <Real T>
double worst_relative_error(const Hyperparameters& hp, const std::vector<index>& shape, int steps, unsigned seed) {
  const auto rows = static_cast<int>(shape[0]);
  int cols = 1;
  for (std::size_t d = 1; d < shape.size(); ++d) cols *= static_cast<int>(shape[d]);
  const auto n = static_cast<std::size_t>(rows * cols);
  TensorOptimizer<T> opt(OptimizerKind::muon, hp, shape);
  EXPECT_EQ(opt.blocks().size(), 1u);
  Dense w_ref(rows, cols);
  Dense m(rows, cols);
  w_ref.a = reference::rounded_to<T>(reference::gaussian(n, seed));
  const std::vector<double> w0 = w_ref.a;
  std::vector<T> w(w0.begin(), w0.end());
  double worst = 0.0;
  for (int t = 1; t <= steps; ++t) {
    Dense g(rows, cols);
    g.a = reference::rounded_to<T>(reference::gaussian(n, seed * 100 + t));
    opt.step(w, std::vector<T>(g.a.begin(), g.a.end()));
    muon_reference_step(w_ref, m, g, hp);
    double diff = 0.0;
    double moved = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      diff = std::max(diff, std::abs(static_cast<double>(w[i]) - w_ref.a[i]));
      moved = std::max(moved, std::abs(w_ref.a[i] - w0[i]));
    }
    worst = std::max(worst, diff / moved);
  }
  return worst;
}

template <Real T>
class MuonTyped : public ::testing::Test {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(MuonTyped, Precisions);

template <Real T>
double tolerance() {
  return std::is_same_v<T, float> ? 1e-4 : 1e-11;  // Newton–Schulz amplifies float rounding
}

TYPED_TEST(MuonTyped, FirstThreeStepsMatchFloat64ReferenceOnWideTallAndSquare) {
  Hyperparameters hp = default_hyperparameters(OptimizerKind::muon);
  hp.weight_decay = 0.1;
  EXPECT_LT(worst_relative_error<TypeParam>(hp, {3, 5}, 3, 1), tolerance<TypeParam>()) << "wide";
  EXPECT_LT(worst_relative_error<TypeParam>(hp, {7, 4}, 3, 2), tolerance<TypeParam>()) << "tall";
  EXPECT_LT(worst_relative_error<TypeParam>(hp, {4, 4}, 3, 3), tolerance<TypeParam>()) << "square";
  EXPECT_LT(worst_relative_error<TypeParam>(hp, {4, 2, 3}, 3, 4), tolerance<TypeParam>()) << "order 3";
}

TYPED_TEST(MuonTyped, PlainMomentumWithoutNesterov) {
  Hyperparameters hp = default_hyperparameters(OptimizerKind::muon);
  hp.nesterov = false;
  hp.beta1 = 0.8;
  EXPECT_LT(worst_relative_error<TypeParam>(hp, {5, 6}, 3, 5), tolerance<TypeParam>());
}

// The quintic iteration pushes every singular value of the update towards 1 (roughly 0.7–1.2),
// while the raw normalized gradient's spread widely.
TEST(Muon, UpdateIsApproximatelyOrthogonal) {
  Hyperparameters hp = default_hyperparameters(OptimizerKind::muon);
  hp.lr = 1.0;
  const int rows = 16;
  const int cols = 8;  // tall: the iteration runs on the transpose, scale √2
  TensorOptimizer<double> opt(OptimizerKind::muon, hp, {rows, cols});
  std::vector<double> w(rows * cols, 0.0);
  std::vector<double> g = reference::gaussian(rows * cols, 9);
  for (int j = 0; j < cols; ++j) g[static_cast<std::size_t>(j)] *= 30.0;  // one dominant direction
  opt.step(w, g);
  Dense x(rows, cols);
  for (std::size_t i = 0; i < w.size(); ++i) x.a[i] = -w[i] / std::sqrt(2.0);
  std::vector<double> sigma2;
  Dense vectors;
  reference::jacobi_eigen(reference::multiply(reference::transpose(x), x), sigma2, vectors);
  for (double s2 : sigma2) {
    EXPECT_GT(std::sqrt(s2), 0.5);
    EXPECT_LT(std::sqrt(s2), 1.5);
  }
  Dense raw(rows, cols);
  raw.a = g;
  std::vector<double> raw2;
  reference::jacobi_eigen(reference::multiply(reference::transpose(raw), raw), raw2, vectors);
  const auto [lo, hi] = std::minmax_element(raw2.begin(), raw2.end());
  EXPECT_GT(std::sqrt(*hi / *lo), 5.0) << "the test gradient should be far from orthogonal";
}

TEST(Muon, WholeMatrixIsOneBlockWithoutRefresh) {
  Hyperparameters hp = default_hyperparameters(OptimizerKind::muon);
  hp.max_precond_dim = 2;
  TensorOptimizer<float> opt(OptimizerKind::muon, hp, {6, 5});
  ASSERT_EQ(opt.blocks().size(), 1u);
  const BlockOptimizer<float>& block = *opt.blocks()[0].optimizer;
  EXPECT_EQ(block.name(), "muon");
  EXPECT_EQ(block.rows(), 6);
  EXPECT_EQ(block.cols(), 5);
  EXPECT_FALSE(block.refresh_due(1));
  EXPECT_EQ(block.state().tensor_bytes(), 30 * sizeof(float));  // momentum only
}

// Order-1 tensors go to AdamW with KellerJordan/Muon's auxiliary settings.
TEST(Muon, VectorsUseAuxiliaryAdamW) {
  Hyperparameters hp = default_hyperparameters(OptimizerKind::muon);
  hp.weight_decay = 0.01;
  TensorOptimizer<double> opt(OptimizerKind::muon, hp, {4});
  ASSERT_EQ(opt.blocks().size(), 1u);
  EXPECT_EQ(opt.blocks()[0].optimizer->name(), "adamw");
  std::vector<double> w = {1.0, -2.0, 0.5, 3.0};
  std::vector<double> expected = w;
  const std::vector<double> g = {0.3, -0.1, 0.7, 0.02};
  opt.step(w, g);
  for (std::size_t i = 0; i < 4; ++i) {
    // Step 1 of Adam: m̂ = g, v̂ = g², so the step is lr·g/(|g| + ε).
    expected[i] -= hp.aux_adamw_lr * g[i] / (std::abs(g[i]) + 1e-10) + hp.aux_adamw_lr * 0.01 * expected[i];
    EXPECT_NEAR(w[i], expected[i], 1e-12);
  }
}

TYPED_TEST(MuonTyped, NonFiniteGradientNeverReachesTheWeights) {
  using T = TypeParam;
  TensorOptimizer<T> opt(OptimizerKind::muon, default_hyperparameters(OptimizerKind::muon), {3, 4});
  std::vector<T> w(12, T(1));
  std::vector<T> g(12, T(0.25));
  g[7] = std::numeric_limits<T>::quiet_NaN();
  opt.step(w, g);
  EXPECT_EQ(w, std::vector<T>(12, T(1)));
  EXPECT_EQ(opt.counters().skipped_non_finite_blocks, 1);
  g[7] = T(0.5);
  opt.step(w, g);
  for (T x : w) {
    EXPECT_TRUE(std::isfinite(x));
    EXPECT_NE(x, T(1));
  }
}

}  // namespace
}  // namespace asteria::optim

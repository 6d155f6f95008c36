// AdamW against an independent float64 reference, and the driver's non-finite policy.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/common/error.hpp"
#include "core/optim/tensor_optimizer.hpp"

namespace asteria::optim {
namespace {

std::vector<double> random_values(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> dist(0.0, 1.0);
  std::vector<double> v(n);
  for (double& x : v) x = dist(gen);
  return v;
}

TEST(AdamW, FirstThreeStepsMatchFloat64Reference) {
  const std::vector<index> shape = {5, 3};
  Hyperparameters hp = default_hyperparameters(OptimizerKind::adamw);
  hp.weight_decay = 0.1;
  std::vector<float> w32(15);
  std::vector<double> w_ref = random_values(15, 1), m(15, 0.0), v(15, 0.0);
  for (std::size_t i = 0; i < 15; ++i) w32[i] = static_cast<float>(w_ref[i]);
  for (std::size_t i = 0; i < 15; ++i) w_ref[i] = w32[i];
  TensorOptimizer<float> opt(OptimizerKind::adamw, hp, shape);
  for (int t = 1; t <= 3; ++t) {
    std::vector<double> g = random_values(15, 100 + t);
    std::vector<float> g32(g.begin(), g.end());
    for (std::size_t i = 0; i < 15; ++i) g[i] = g32[i];
    opt.step(w32, g32);
    for (std::size_t i = 0; i < 15; ++i) {
      m[i] = hp.beta1 * m[i] + (1 - hp.beta1) * g[i];
      v[i] = hp.beta2 * v[i] + (1 - hp.beta2) * g[i] * g[i];
      const double mhat = m[i] / (1 - std::pow(hp.beta1, t));
      const double vhat = v[i] / (1 - std::pow(hp.beta2, t));
      w_ref[i] -= hp.lr * mhat / (std::sqrt(vhat) + hp.eps) + hp.lr * hp.weight_decay * w_ref[i];
    }
    for (std::size_t i = 0; i < 15; ++i) EXPECT_NEAR(w32[i], w_ref[i], 1e-6) << "step " << t << " element " << i;
  }
}

TEST(AdamW, NonFiniteGradientSkipsTheBlockAndIsCounted) {
  Hyperparameters hp = default_hyperparameters(OptimizerKind::adamw);
  TensorOptimizer<double> opt(OptimizerKind::adamw, hp, {2, 2});
  std::vector<double> w = {1, 2, 3, 4};
  const std::vector<double> before = w;
  std::vector<double> g = {0.1, std::numeric_limits<double>::quiet_NaN(), 0.3, 0.4};
  opt.step(w, g);
  EXPECT_EQ(w, before);
  EXPECT_EQ(opt.counters().skipped_non_finite_blocks, 1);
  g[1] = 0.2;
  opt.step(w, g);
  EXPECT_NE(w, before);
}

TEST(AdamW, NonFiniteGradientUnderErrorPolicyThrowsNamingTheBlock) {
  Hyperparameters hp = default_hyperparameters(OptimizerKind::adamw);
  hp.non_finite = NonFinitePolicy::error;
  TensorOptimizer<float> opt(OptimizerKind::adamw, hp, {2, 2}, "layer0.weight");
  std::vector<float> w = {1, 2, 3, 4};
  std::vector<float> g = {0.1f, std::numeric_limits<float>::infinity(), 0.3f, 0.4f};
  try {
    opt.step(w, g);
    FAIL() << "expected NumericalError";
  } catch (const NumericalError& e) {
    EXPECT_NE(std::string(e.what()).find("layer0.weight block 0"), std::string::npos) << e.what();
  }
  EXPECT_EQ(w, (std::vector<float>{1, 2, 3, 4}));
}

TEST(AdamW, SizeMismatchIsAClearError) {
  TensorOptimizer<float> opt(OptimizerKind::adamw, default_hyperparameters(OptimizerKind::adamw), {3, 3}, "w");
  std::vector<float> w(9), g(8);
  EXPECT_THROW(opt.step(w, g), InputError);
}

}  // namespace
}  // namespace asteria::optim

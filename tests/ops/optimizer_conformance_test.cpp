// Every optimizer's whole step (accumulate → refresh → apply, refreshes every 3 steps, a matrix
// split into blocks of unequal shapes, 12 steps) on every backend, its state, weights and
// gradients in the backend's memory, against the float64 reference: the same optimizer run in
// double on the host. Backends that run the CPU kernels give the host's own bits; the others
// stay within the tolerance stated per optimizer and dtype below: the largest deviation of the
// weights from the reference's, relative to how far the reference's weights have moved plus
// 8 units in T's last place of the largest weight. Both start from the same weights and
// gradients, rounded to T.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <ostream>
#include <random>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "core/optim/tensor_optimizer.hpp"
#include "tests/ops/backends.hpp"
#include "tests/ops/host_device.hpp"

namespace asteria::test {
namespace {

using optim::OptimizerKind;

constexpr int kSteps = 12;

struct Case {
  OptimizerKind kind;
  std::vector<linalg::index> shape;
  linalg::index max_precond_dim;
  double float_tolerance;   // T = float
  double double_tolerance;  // T = double
};

// Deviation of the weights from the float64 reference, relative to the reference's displacement.
// Float tolerances are about four times what the host measured (AdamW 1.2e-4, Shampoo 1.1e-5,
// SOAP 5.6e-3, KL-Shampoo 6e-5, Muon 1.1e-5): a GPU's products round differently, not worse.
// SOAP amplifies rounding most: Adam's m/(√v+ε) in the eigenbasis divides by small second
// moments. SOAP and KL-Shampoo run on square blocks: a rectangular block's first statistics (one
// gradient) are rank-deficient, and any orthonormal basis of their null space is an equally right
// eigenbasis, so two correct implementations may follow different ones (the CPU backends are
// still held to the host's bits on the rectangular blocks of the other cases).
const Case kCases[] = {
    {OptimizerKind::adamw, {24, 40}, 1024, 5e-4, 1e-11},
    {OptimizerKind::shampoo, {24, 40}, 16, 5e-5, 1e-10},  // blocks 16 x 16, 16 x 8, 8 x 16, 8 x 8
    {OptimizerKind::soap, {32, 32}, 16, 2e-2, 1e-9},      // four 16 x 16 blocks
    {OptimizerKind::kl_shampoo, {32, 32}, 16, 3e-4, 1e-10},
    {OptimizerKind::muon, {24, 40}, 1024, 5e-5, 1e-10},   // wide: X Xᵀ
    {OptimizerKind::muon, {40, 24}, 1024, 5e-5, 1e-10},   // tall: Uᵀ U
};

// For GoogleTest's messages.
void PrintTo(const Case& c, std::ostream* os) {
  *os << to_string(c.kind) << " " << c.shape[0] << "x" << c.shape[1] << " blocks of at most " << c.max_precond_dim;
}

optim::Hyperparameters hyperparameters(const Case& c) {
  optim::Hyperparameters hp = optim::default_hyperparameters(c.kind);
  hp.precondition_frequency = 3;
  hp.max_precond_dim = c.max_precond_dim;
  hp.lr = c.kind == OptimizerKind::kl_shampoo ? 3e-3 : hp.lr;
  return hp;
}

std::vector<double> random_values(std::size_t n, std::mt19937& gen) {
  std::normal_distribution<double> dist(0.0, 1.0);
  std::vector<double> v(n);
  for (double& x : v) x = dist(gen);
  return v;
}

// The weights after each step of the case's optimizer on `device` (device memory throughout), in T.
template <linalg::Real T>
std::vector<std::vector<double>> run(ops::Device& device, const Case& c, const std::vector<double>& w0,
                                     const std::vector<std::vector<double>>& grads) {
  optim::TensorOptimizer<T> opt(c.kind, hyperparameters(c), c.shape, "conformance");
  // Every block's state moves into the device's memory.
  std::vector<ops::Buffer> states;
  for (auto& block : opt.blocks()) {
    optim::BlockState<T>& s = block.optimizer->state();
    const auto count = static_cast<linalg::index>(s.value_count());
    states.push_back(device.matrix<T>(1, count));
    device.upload(linalg::ConstMatrixView<T>(s.values().data(), 1, count), states.back().view<T>());
    s.evict();
    s.attach(std::span<T>(states.back().view<T>().data(), static_cast<std::size_t>(count)));
  }
  const auto n = static_cast<linalg::index>(w0.size());
  auto as_t = [](const std::vector<double>& v) { return std::vector<T>(v.begin(), v.end()); };
  ops::Buffer weights = device.matrix<T>(1, n);
  ops::Buffer gradient = device.matrix<T>(1, n);
  const std::vector<T> w_host = as_t(w0);
  device.upload(linalg::ConstMatrixView<T>(w_host.data(), 1, n), weights.view<T>());
  std::vector<std::vector<double>> trajectory;
  for (const std::vector<double>& g : grads) {
    const std::vector<T> g_host = as_t(g);
    device.upload(linalg::ConstMatrixView<T>(g_host.data(), 1, n), gradient.view<T>());
    opt.step(device, std::span<T>(weights.view<T>().data(), w0.size()),
             std::span<const T>(gradient.view<T>().data(), w0.size()));
    std::vector<T> now(w0.size());
    device.download(linalg::ConstMatrixView<T>(weights.view<T>()), linalg::MatrixView<T>(now.data(), 1, n));
    trajectory.emplace_back(now.begin(), now.end());
  }
  EXPECT_EQ(opt.counters().refresh_failures, 0);
  return trajectory;
}

class OptimizerSteps : public ::testing::TestWithParam<std::tuple<std::string, Case>> {};

template <linalg::Real T>
void check(const std::string& backend_name, const Case& c) {
  Backend backend = make_backend(backend_name);
  if (!backend.device) GTEST_SKIP() << backend_name << ": " << backend.unavailable;
  std::mt19937 gen(42);
  std::vector<double> w0 = random_values(static_cast<std::size_t>(c.shape[0] * c.shape[1]), gen);
  std::vector<std::vector<double>> grads;
  // Gradients with Kronecker-structured scales (rows and columns 1.4^-k apart, k cycling every
  // 16): well-separated eigenvalues in every block's statistics, as curvature that differs per
  // direction; their eigenvectors are then well-conditioned, so the comparison measures the
  // backend rather than arbitrary choices within near-degenerate eigenspaces.
  const linalg::index rows = c.shape[0], cols = c.shape[1];
  for (int t = 0; t < kSteps; ++t) {
    std::vector<double> g = random_values(w0.size(), gen);
    for (linalg::index i = 0; i < rows; ++i)
      for (linalg::index j = 0; j < cols; ++j)
        g[static_cast<std::size_t>(i * cols + j)] *= std::pow(1.4, -static_cast<double>(i % 16 + j % 16));
    grads.push_back(std::move(g));
  }
  // Both runs start from values T represents exactly: the comparison measures the arithmetic, not
  // the rounding of the inputs.
  auto representable = [](std::vector<double>& v) {
    for (double& x : v) x = static_cast<double>(static_cast<T>(x));
  };
  representable(w0);
  for (std::vector<double>& g : grads) representable(g);


  const auto reference = run<double>(host_device(), c, w0, grads);
  const auto got = run<T>(*backend.device, c, w0, grads);
  double largest = 0.0;
  for (double w : w0) largest = std::max(largest, std::abs(w));
  const double storage = 8.0 * std::numeric_limits<T>::epsilon() * largest;
  double worst = 0.0, moved = 0.0;
  for (int t = 0; t < kSteps; ++t) {
    double deviation = 0.0;
    for (std::size_t e = 0; e < w0.size(); ++e) {
      deviation = std::max(deviation, std::abs(got[t][e] - reference[t][e]));
      moved = std::max(moved, std::abs(reference[t][e] - w0[e]));
    }
    worst = std::max(worst, deviation / (moved + storage));
  }
  ASSERT_GT(moved, 1e-3) << "the reference's weights hardly moved: nothing is compared";
  const double tolerance = std::is_same_v<T, float> ? c.float_tolerance : c.double_tolerance;
  EXPECT_LE(worst, tolerance) << to_string(c.kind);
  std::printf("%s %s %s: relative deviation %.3g (tolerance %.3g)\n", backend_name.c_str(),
              std::string(to_string(c.kind)).c_str(), std::is_same_v<T, float> ? "f32" : "f64", worst, tolerance);
  ::testing::Test::RecordProperty(std::string(to_string(c.kind)) + (std::is_same_v<T, float> ? "_f32" : "_f64") +
                                      "_relative_deviation",
                                  std::to_string(worst));

  if (backend.host_bits) {  // the host's own step, bit for bit
    const auto host = run<T>(host_device(), c, w0, grads);
    for (int t = 0; t < kSteps; ++t)
      ASSERT_EQ(std::memcmp(host[t].data(), got[t].data(), w0.size() * sizeof(double)), 0)
          << "step " << t + 1 << " differs from the host's bits";
  }
}

TEST_P(OptimizerSteps, FollowTheFloat64ReferenceInFloatAndDouble) {
  const auto& [backend, c] = GetParam();
  check<float>(backend, c);
  if (::testing::Test::IsSkipped()) return;
  check<double>(backend, c);
}

INSTANTIATE_TEST_SUITE_P(Backends, OptimizerSteps,
                         ::testing::Combine(::testing::ValuesIn(backend_names()), ::testing::ValuesIn(kCases)),
                         [](const ::testing::TestParamInfo<std::tuple<std::string, Case>>& p) {
                           const Case& c = std::get<1>(p.param);
                           std::string name = std::get<0>(p.param) + "_" + std::string(to_string(c.kind)) + "_" +
                                              std::to_string(c.shape[0]) + "x" + std::to_string(c.shape[1]);
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace asteria::test

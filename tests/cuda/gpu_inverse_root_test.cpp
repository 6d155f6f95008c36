// The GPU inverse root agrees with the CPU eigen method. Needs a CUDA device: without one the
// tests skip and say so; the device query itself is checked everywhere.
#include <gtest/gtest.h>

#include <random>

#include "core/linalg/blas.hpp"
#include "core/linalg/inverse_root.hpp"
#include "core/real/cuda/device.hpp"
#include "core/real/cuda/gpu_inverse_root.hpp"

namespace asteria::real::cuda {
namespace {

using linalg::Matrix;

Matrix<float> random_spd(linalg::index n, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  Matrix<float> g(n, 2 * n);
  for (float& x : g.values()) x = dist(gen);
  Matrix<float> a(n, n);
  linalg::syrk<float>(1.0f / static_cast<float>(2 * n), g.view(), linalg::Op::none, 0.0f, a.view());
  return a;
}

TEST(CudaDevice, QueryNeverFails) {
  const DeviceInfo info = query_devices();
  EXPECT_GE(info.count, 0);
  if (info.count == 0) EXPECT_FALSE(info.reason.empty());
  else EXPECT_FALSE(info.name.empty());
}

class GpuInverseRoot : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    if (query_devices().count == 0) GTEST_SKIP() << "no CUDA device on this machine: " << query_devices().reason;
  }
};

TEST_P(GpuInverseRoot, MatchesCpuEigenMethod) {
  const linalg::index n = GetParam();
  const Matrix<float> a = random_spd(n, 7 + static_cast<unsigned>(n));
  for (double p : {1.0, 2.0, 4.0}) {
    Matrix<float> gpu(n, n), cpu(n, n);
    ASSERT_TRUE(gpu_inverse_root(a.view(), p, 1e-6, gpu.view()).ok());
    ASSERT_TRUE(linalg::inverse_root_eigen<float>(a.view(), p, 1e-6, cpu.view()).ok());
    Matrix<float> diff(n, n);
    for (linalg::index k = 0; k < diff.size(); ++k) diff.values()[static_cast<std::size_t>(k)] = gpu.values()[static_cast<std::size_t>(k)] - cpu.values()[static_cast<std::size_t>(k)];
    // Both are float solves of the same well-conditioned matrix (cond ~ 10): agree to ~1e-4 relative.
    EXPECT_LT(linalg::frobenius_norm<float>(diff.view()), 1e-4 * linalg::frobenius_norm<float>(cpu.view())) << "p=" << p;
  }
}

TEST_P(GpuInverseRoot, NonFiniteInputIsRejected) {
  const linalg::index n = GetParam();
  Matrix<float> a = random_spd(n, 3);
  a(0, 0) = std::numeric_limits<float>::quiet_NaN();
  Matrix<float> out(n, n);
  EXPECT_EQ(gpu_inverse_root(a.view(), 4.0, 1e-6, out.view()).code(), StatusCode::non_finite_input);
}

INSTANTIATE_TEST_SUITE_P(Sizes, GpuInverseRoot, ::testing::Values(1, 17, 256, 1024));

}  // namespace
}  // namespace asteria::real::cuda

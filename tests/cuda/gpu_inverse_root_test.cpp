// The GPU inverse root and eigenbasis (cuSOLVER) agree with the host's LAPACK. Needs a CUDA device: without one the
// tests skip and say so; the device query itself is checked everywhere.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "core/linalg/blas.hpp"
#include "core/linalg/inverse_root.hpp"
#include "core/real/cuda/cuda_device.hpp"
#include "core/real/cuda/cuda_solver.hpp"
#include "core/real/cuda/device.hpp"
#include "core/real/cuda/gpu_inverse_root.hpp"
#include "tests/cuda/cuda_device_test.hpp"

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

class GpuInverseRoot : public test::NeedsCudaDevice<::testing::TestWithParam<int>> {};

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

namespace asteria::real::cuda {
namespace {

class CudaSolverTest : public test::NeedsCudaDevice<> {};

// SOAP's initial eigenbasis solved by cuSOLVER agrees with the host's column by column (up to
// each column's sign, which an eigensolver does not fix), in descending eigenvalue order.
TEST_F(CudaSolverTest, InitialEigenbasisMatchesTheHostUpToSigns) {
  const CudaSolver solver(current_device());
  for (const linalg::index n : {1, 17, 128, 300}) {
    const linalg::Matrix<float> a = random_spd(n, 11 + static_cast<unsigned>(n));
    linalg::Matrix<float> gpu(n, n), cpu(n, n);
    ASSERT_TRUE(solver.initial_eigenbasis(a.view(), gpu.view()).ok());
    ASSERT_TRUE(linalg::SymmetricSolver().initial_eigenbasis(a.view(), cpu.view()).ok());
    for (linalg::index j = 0; j < n; ++j) {
      double dot = 0.0;
      for (linalg::index i = 0; i < n; ++i) dot += static_cast<double>(gpu(i, j)) * cpu(i, j);
      EXPECT_NEAR(std::abs(dot), 1.0, 1e-3) << "n=" << n << " column " << j;
    }
  }
  EXPECT_EQ(solver.device_solves(), 4);
  EXPECT_EQ(solver.host_fallbacks(), 0);
}

// The device's solver is what a refresh placed on the device solves with; double precision
// stays on the host (the base class).
TEST_F(CudaSolverTest, TheCudaDeviceOffersItsSolver) {
  CudaDevice device(current_device());
  const linalg::SymmetricSolver* solver = device.solver();
  ASSERT_NE(solver, nullptr);
  EXPECT_NE(solver->name().find("cuSOLVER"), std::string::npos) << solver->name();
  const linalg::Matrix<float> a = random_spd(64, 5);
  linalg::Matrix<double> ad(64, 64), root(64, 64);
  for (linalg::index k = 0; k < a.size(); ++k) ad.values()[static_cast<std::size_t>(k)] = a.values()[static_cast<std::size_t>(k)];
  EXPECT_TRUE(solver->inverse_root_eigen(ad.view(), 4.0, 1e-6, root.view()).ok());
}

}  // namespace
}  // namespace asteria::real::cuda

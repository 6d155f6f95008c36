// Preconditioner refresh kernels side by side on one Kronecker-factor-like SPD matrix
// F = G Gᵀ/n + ridge·I (G random with a decaying column scale, so F's spectrum decays like a
// real statistic's): raw LAPACK ssyevd, the eigen-method inverse root, coupled Newton, and
// SOAP's warm eigenbasis refresh with each orthogonalization. Counters: ms per call, achieved
// GFLOP/s (nominal flop counts below), and for refreshes the orthogonality error ‖QᵀQ − I‖_F.
#include <benchmark/benchmark.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <vector>

#include "core/linalg/blas.hpp"
#include "core/linalg/eigenbasis.hpp"
#include "core/linalg/inverse_root.hpp"
#include "core/linalg/matrix.hpp"
#include "core/linalg/orthogonality.hpp"

namespace {

using asteria::linalg::ConstMatrixView;
using asteria::linalg::index;
using asteria::linalg::Matrix;
using asteria::linalg::Op;

// Nominal flop counts: syevd with eigenvectors ≈ 9n³ (ALGORITHMS.md: c ≈ 9–10); the eigen
// root adds one SYRK (n³); one Newton iteration for p = 4 is 6n³; a refresh is one GEMM (2n³)
// plus Householder QR (geqrf + orgqr, 8n³/3).
double cube(index n) { return static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n); }

Matrix<float> make_statistics(index n, unsigned seed, float drift) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  Matrix<float> g(n, n);
  for (index i = 0; i < n; ++i)
    for (index j = 0; j < n; ++j) g(i, j) = normal(rng) / std::sqrt(1.0F + static_cast<float>(j));
  // A second seed's noise, scaled by `drift`, stands for the statistics a few steps later.
  std::mt19937 rng2(seed + 1);
  for (index i = 0; i < n; ++i)
    for (index j = 0; j < n; ++j) g(i, j) += drift * normal(rng2) / std::sqrt(1.0F + static_cast<float>(j));
  Matrix<float> f(n, n);
  asteria::linalg::syrk<float>(1.0F / static_cast<float>(n), g, Op::none, 0.0F, f);
  double trace = 0.0;
  for (index i = 0; i < n; ++i) trace += f(i, i);
  for (index i = 0; i < n; ++i) f(i, i) += static_cast<float>(1e-4 * trace / static_cast<double>(n));
  return f;
}

const Matrix<float>& statistics(index n) {
  static std::map<index, Matrix<float>> cache;
  auto [it, inserted] = cache.try_emplace(n);
  if (inserted) it->second = make_statistics(n, 7, 0.0F);
  return it->second;
}

// Basis of the statistics a few steps earlier: what a warm refresh starts from.
const Matrix<float>& warm_basis(index n) {
  static std::map<index, Matrix<float>> cache;
  auto [it, inserted] = cache.try_emplace(n);
  if (inserted) {
    Matrix<float> earlier = make_statistics(n, 7, 0.05F);
    it->second = Matrix<float>(n, n);
    if (!asteria::linalg::initial_eigenbasis<float>(earlier, it->second).ok()) std::abort();
  }
  return it->second;
}

void set_counters(benchmark::State& state, double flops) {
  state.counters["ms"] = benchmark::Counter(1e-3, benchmark::Counter::kIsIterationInvariantRate |
                                                      benchmark::Counter::kInvert);
  state.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_raw_ssyevd(benchmark::State& state) {
  const index n = state.range(0);
  const Matrix<float>& f = statistics(n);
  std::vector<float> work(static_cast<std::size_t>(n * n));
  std::vector<float> w(static_cast<std::size_t>(n));
  for (auto _ : state) {
    std::copy(f.values().begin(), f.values().end(), work.begin());
    const int info = LAPACKE_ssyevd(LAPACK_COL_MAJOR, 'V', 'L', static_cast<lapack_int>(n), work.data(),
                                    static_cast<lapack_int>(n), w.data());
    if (info != 0) state.SkipWithError("ssyevd failed");
    benchmark::DoNotOptimize(work.data());
  }
  set_counters(state, 9.0 * cube(n));
}

void BM_inverse_root_eigen(benchmark::State& state) {
  const index n = state.range(0);
  const Matrix<float>& f = statistics(n);
  Matrix<float> x(n, n);
  for (auto _ : state) {
    if (!asteria::linalg::inverse_root_eigen<float>(f, 4.0, 1e-12, x).ok()) state.SkipWithError("eigen root failed");
    benchmark::DoNotOptimize(x.data());
  }
  set_counters(state, 10.0 * cube(n));
  state.counters["residual"] = asteria::linalg::inverse_root_residual<float>(f, x, 4.0, 1e-12);
}

void BM_inverse_root_newton(benchmark::State& state) {
  const index n = state.range(0);
  const Matrix<float>& f = statistics(n);
  Matrix<float> x(n, n);
  asteria::linalg::NewtonReport report;
  for (auto _ : state) {
    if (!asteria::linalg::inverse_root_newton<float>(f, 4, 1e-12, {}, x, report).ok())
      state.SkipWithError("Newton root failed");
    benchmark::DoNotOptimize(x.data());
  }
  set_counters(state, 6.0 * cube(n) * report.iterations);
  state.counters["iterations"] = report.iterations;
  state.counters["residual"] = asteria::linalg::inverse_root_residual<float>(f, x, 4.0, 1e-12);
}

void refresh(benchmark::State& state, asteria::linalg::Orthogonalization method) {
  const index n = state.range(0);
  const Matrix<float>& f = statistics(n);
  const Matrix<float>& basis = warm_basis(n);
  Matrix<float> fresh(n, n);
  std::vector<index> order(static_cast<std::size_t>(n));
  std::vector<float> eigenvalues(static_cast<std::size_t>(n));
  for (auto _ : state) {
    if (!asteria::linalg::refresh_eigenbasis<float>(f, basis, asteria::linalg::EigenvalueOrder::descending, method,
                                                    fresh, order, eigenvalues)
             .ok())
      state.SkipWithError("refresh failed");
    benchmark::DoNotOptimize(fresh.data());
  }
  set_counters(state, 2.0 * cube(n) + 8.0 / 3.0 * cube(n));
  state.counters["orth_err"] = asteria::linalg::orthogonality_error<float>(fresh);
  // How the Cholesky variant went on this input (passes; 1 when it fell back to Householder).
  Matrix<float> product(n, n);
  asteria::linalg::gemm<float>(1.0F, f, Op::none, basis, Op::none, 0.0F, product);
  asteria::linalg::OrthonormalizationReport report;
  if (asteria::linalg::orthonormalize_columns<float>(product, {}, method, fresh, report).ok()) {
    state.counters["chol_passes"] = report.cholesky_passes;
    state.counters["fell_back"] = report.fell_back ? 1 : 0;
  }
}

void BM_refresh_householder(benchmark::State& state) {
  refresh(state, asteria::linalg::Orthogonalization::householder);
}
void BM_refresh_shifted_cholesky_qr(benchmark::State& state) {
  refresh(state, asteria::linalg::Orthogonalization::shifted_cholesky_qr);
}

void sizes(benchmark::internal::Benchmark* b) {
  for (index n : {256, 512, 1024, 2048}) b->Arg(n);
  // The host is shared: report the fastest of several repetitions as well as the median.
  b->Unit(benchmark::kMillisecond)->UseRealTime()->Repetitions(3)->ComputeStatistics("min", [](const std::vector<double>& v) {
    return *std::min_element(v.begin(), v.end());
  });
}

BENCHMARK(BM_raw_ssyevd)->Apply(sizes);
BENCHMARK(BM_inverse_root_eigen)->Apply(sizes);
BENCHMARK(BM_inverse_root_newton)->Apply(sizes);
BENCHMARK(BM_refresh_householder)->Apply(sizes);
BENCHMARK(BM_refresh_shifted_cholesky_qr)->Apply(sizes);

}  // namespace

BENCHMARK_MAIN();

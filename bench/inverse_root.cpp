// Preconditioner refresh kernels side by side on Kronecker-factor-like SPD statistics F of two
// families (second benchmark argument):
//   0 "decaying": F = G Gᵀ/n + ridge·I, G n x n with column scale 1/√(1+j), so F's spectrum
//     decays like a real statistic's (κ ~ 1e5);
//   1 "wishart":  F = G Gᵀ/(4n) + ridge·I, G n x 4n plain Gaussian: full rank, no decay (κ ≈ 9,
//     eigenvalues crowded, so a warm basis is far from F's eigenvectors).
// Kernels: raw LAPACK ssyevd, the eigen-method inverse root, coupled Newton, and SOAP's warm
// eigenbasis refresh with each orthogonalization, from the basis of the same family's
// statistics a few steps earlier. Counters: ms per call, achieved GFLOP/s (nominal flop counts
// below), and for refreshes the orthogonality error ‖QᵀQ − I‖_F with the Cholesky QR passes.
#include <benchmark/benchmark.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>
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
// plus the orthogonalization: Householder QR (geqrf + orgqr) 8n³/3; LU-preconditioned
// Cholesky QR getrf 2n³/3, a first pass of 5n³/3 (lauum n³/3, potrf n³/3, TRSM n³) and 7n³/3
// for each further pass (SYRK n³, potrf, TRSM).
double cube(index n) { return static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n); }

enum Family : int { decaying = 0, wishart = 1 };

Matrix<float> make_statistics(index n, Family family, unsigned seed, float drift) {
  const index width = family == wishart ? 4 * n : n;
  auto column_scale = [&](index j) {
    return family == wishart ? 1.0F : 1.0F / std::sqrt(1.0F + static_cast<float>(j));
  };
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  Matrix<float> g(n, width);
  for (index i = 0; i < n; ++i)
    for (index j = 0; j < width; ++j) g(i, j) = normal(rng) * column_scale(j);
  // A second seed's noise, scaled by `drift`, stands for the statistics a few steps later.
  std::mt19937 rng2(seed + 1);
  for (index i = 0; i < n; ++i)
    for (index j = 0; j < width; ++j) g(i, j) += drift * normal(rng2) * column_scale(j);
  Matrix<float> f(n, n);
  asteria::linalg::syrk<float>(1.0F / static_cast<float>(width), g, Op::none, 0.0F, f);
  double trace = 0.0;
  for (index i = 0; i < n; ++i) trace += f(i, i);
  for (index i = 0; i < n; ++i) f(i, i) += static_cast<float>(1e-4 * trace / static_cast<double>(n));
  return f;
}

const Matrix<float>& statistics(index n, Family family) {
  static std::map<std::pair<index, Family>, Matrix<float>> cache;
  auto [it, inserted] = cache.try_emplace({n, family});
  if (inserted) it->second = make_statistics(n, family, 7, 0.0F);
  return it->second;
}

// Basis of the statistics a few steps earlier: what a warm refresh starts from.
const Matrix<float>& warm_basis(index n, Family family) {
  static std::map<std::pair<index, Family>, Matrix<float>> cache;
  auto [it, inserted] = cache.try_emplace({n, family});
  if (inserted) {
    Matrix<float> earlier = make_statistics(n, family, 7, 0.05F);
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
  const Matrix<float>& f = statistics(n, static_cast<Family>(state.range(1)));
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
  const Matrix<float>& f = statistics(n, static_cast<Family>(state.range(1)));
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
  const Matrix<float>& f = statistics(n, static_cast<Family>(state.range(1)));
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
  const auto family = static_cast<Family>(state.range(1));
  const Matrix<float>& f = statistics(n, family);
  const Matrix<float>& basis = warm_basis(n, family);
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
  state.counters["orth_err"] = asteria::linalg::orthogonality_error<float>(fresh);
  // How the orthogonalization went inside that refresh: the same F·B, columns in the same order.
  Matrix<float> product(n, n);
  asteria::linalg::gemm<float>(1.0F, f, Op::none, basis, Op::none, 0.0F, product);
  asteria::linalg::OrthonormalizationReport report;
  if (!asteria::linalg::orthonormalize_columns<float>(product, order, method, fresh, report).ok())
    state.SkipWithError("orthonormalize failed");
  state.counters["chol_passes"] = report.cholesky_passes;
  state.counters["fell_back"] = report.fell_back ? 1 : 0;
  state.counters["lanczos_steps"] = report.lanczos_steps;
  double flops = 2.0 * cube(n);
  if (method == asteria::linalg::Orthogonalization::householder || report.fell_back) flops += 8.0 / 3.0 * cube(n);
  if (report.cholesky_passes > 0)
    flops += (2.0 / 3.0 + 5.0 / 3.0 + 7.0 / 3.0 * (report.cholesky_passes - 1)) * cube(n);
  set_counters(state, flops);
}

void BM_refresh_householder(benchmark::State& state) {
  refresh(state, asteria::linalg::Orthogonalization::householder);
}
void BM_refresh_shifted_cholesky_qr(benchmark::State& state) {
  refresh(state, asteria::linalg::Orthogonalization::shifted_cholesky_qr);
}

void sizes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"n", "family"});
  for (int family : {decaying, wishart})
    for (index n : {256, 512, 1024, 2048}) b->Args({n, family});
  // The host is shared: with --benchmark_repetitions=N, report the fastest repetition (the
  // least disturbed) beside the median; --benchmark_enable_random_interleaving=true spreads
  // each kernel's repetitions over the run, so that ratios are not skewed by load that comes
  // and goes.
  b->Unit(benchmark::kMillisecond)->UseRealTime()->ComputeStatistics("min", [](const std::vector<double>& v) {
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

#include "hwmodels/calibrate/cpu_bench.hpp"

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/common/error.hpp"

namespace asteria::hw::calibrate {
namespace {

std::vector<float> random_matrix(std::int64_t rows, std::int64_t cols, std::uint32_t seed) {
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> m(static_cast<std::size_t>(rows * cols));
  for (float& x : m) x = uniform(engine);
  return m;
}

// A random symmetric (Wigner) matrix: its eigenvalues spread out, so divide and conquer does
// the full work instead of deflating clustered eigenvalues.
std::vector<float> random_symmetric(std::int64_t n, std::uint32_t seed) {
  std::vector<float> m = random_matrix(n, n, seed);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < i; ++j) m[i * n + j] = m[j * n + i];
  return m;
}

// Seconds of one product: the best of `repeats` runs of `products` back-to-back products.
double time_sgemm(std::int64_t n, int repeats, int products = 1) {
  const std::vector<float> a = random_matrix(n, n, 1);
  const std::vector<float> b = random_matrix(n, n, 2);
  std::vector<float> c(static_cast<std::size_t>(n * n), 0.0f);
  const int dim = static_cast<int>(n);
  auto product = [&] {
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, dim, dim, dim, 1.0f, a.data(), dim, b.data(), dim, 0.0f,
                c.data(), dim);
  };
  product();  // warm-up: thread pool start, page faults
  return best_seconds(repeats, [&] {
           for (int p = 0; p < products; ++p) product();
         }) /
         products;
}

std::int64_t round_to_64(double n, std::int64_t max_n) {
  const auto rounded = static_cast<std::int64_t>(std::llround(n / 64.0)) * 64;
  return std::clamp<std::int64_t>(rounded, 64, max_n);
}

lapack_int as_lapack(std::int64_t n) { return static_cast<lapack_int>(n); }

void check_lapack(lapack_int info, const char* routine, std::int64_t n) {
  if (info != 0)
    throw Error(std::string("calibrate: LAPACK ") + routine + " failed at n = " + std::to_string(n) +
                " (info " + std::to_string(info) + ")");
}

double time_eigh(std::int64_t n, int repeats) {
  const std::vector<float> original = random_symmetric(n, static_cast<std::uint32_t>(n));
  std::vector<float> a = original;
  std::vector<float> w(static_cast<std::size_t>(n));
  const lapack_int dim = as_lapack(n);
  float work_size = 0.0f;
  lapack_int iwork_size = 0;
  check_lapack(LAPACKE_ssyevd_work(LAPACK_COL_MAJOR, 'V', 'L', dim, a.data(), dim, w.data(), &work_size, -1,
                                   &iwork_size, -1),
               "ssyevd (workspace query)", n);
  std::vector<float> work(static_cast<std::size_t>(work_size));
  std::vector<lapack_int> iwork(static_cast<std::size_t>(iwork_size));
  lapack_int info = 0;
  const double seconds = best_seconds(
      repeats, [&] { a = original; },
      [&] {
        info = LAPACKE_ssyevd_work(LAPACK_COL_MAJOR, 'V', 'L', dim, a.data(), dim, w.data(), work.data(),
                                   as_lapack(static_cast<std::int64_t>(work.size())), iwork.data(),
                                   as_lapack(static_cast<std::int64_t>(iwork.size())));
      });
  check_lapack(info, "ssyevd", n);
  return seconds;
}

double time_qr(std::int64_t n, int repeats) {
  const std::vector<float> original = random_matrix(n, n, static_cast<std::uint32_t>(n) + 7);
  std::vector<float> a = original;
  std::vector<float> tau(static_cast<std::size_t>(n));
  const lapack_int dim = as_lapack(n);
  float geqrf_size = 0.0f;
  float orgqr_size = 0.0f;
  check_lapack(LAPACKE_sgeqrf_work(LAPACK_COL_MAJOR, dim, dim, a.data(), dim, tau.data(), &geqrf_size, -1),
               "sgeqrf (workspace query)", n);
  check_lapack(LAPACKE_sorgqr_work(LAPACK_COL_MAJOR, dim, dim, dim, a.data(), dim, tau.data(), &orgqr_size, -1),
               "sorgqr (workspace query)", n);
  std::vector<float> work(static_cast<std::size_t>(std::max(geqrf_size, orgqr_size)));
  const lapack_int lwork = as_lapack(static_cast<std::int64_t>(work.size()));
  lapack_int info = 0;
  const double seconds = best_seconds(
      repeats, [&] { a = original; },
      [&] {
        info = LAPACKE_sgeqrf_work(LAPACK_COL_MAJOR, dim, dim, a.data(), dim, tau.data(), work.data(), lwork);
        if (info == 0)
          info = LAPACKE_sorgqr_work(LAPACK_COL_MAJOR, dim, dim, dim, a.data(), dim, tau.data(), work.data(), lwork);
      });
  check_lapack(info, "sgeqrf/sorgqr", n);
  return seconds;
}

template <class TimeOne>
CubicTimings time_sizes(std::span<const std::int64_t> sizes, int repeats, int threads, const std::string& what,
                        TimeOne&& time_one) {
  if (sizes.empty()) throw InputError("calibrate", what, "expected at least one matrix size");
  const BlasThreads blas(threads);
  CubicTimings result;
  for (const std::int64_t n : sizes) result.timings.push_back({n, time_one(n, repeats)});
  std::sort(result.timings.begin(), result.timings.end(),
            [](const TimedSize& a, const TimedSize& b) { return a.n < b.n; });
  const std::vector<TimedSize> fitted = larger_sizes(result.timings);
  result.fit = fit_cubic(fitted);
  result.method = what + ", " + std::to_string(blas.threads()) +
                  (blas.threads() == 1 ? " BLAS thread, best of " : " BLAS threads, best of ") +
                  std::to_string(repeats) + ", " + describe_sizes(result.timings) + "; c fitted by least squares on " +
                  describe_sizes(fitted);
  return result;
}

}  // namespace

BlasThreads::BlasThreads(int threads) : previous_(openblas_get_num_threads()) {
  openblas_set_num_threads(threads);
  threads_ = openblas_get_num_threads();
}

BlasThreads::~BlasThreads() { openblas_set_num_threads(previous_); }

Measured measure_sgemm(const SgemmPlan& plan) {
  const BlasThreads blas(plan.threads);
  // Grow n until one product takes about the target time: small products say more about
  // call overheads and cache sizes than about the core's arithmetic rate.
  std::int64_t n = std::min<std::int64_t>(256, plan.max_n);
  for (int attempt = 0; attempt < 4; ++attempt) {
    const double seconds = time_sgemm(n, 1);
    const std::int64_t next = round_to_64(static_cast<double>(n) * std::cbrt(plan.target_seconds / seconds), plan.max_n);
    if (next <= n || seconds >= 0.5 * plan.target_seconds) break;
    n = next;
  }
  const double seconds = time_sgemm(n, plan.repeats);
  Measured m;
  m.value = 2.0 * std::pow(static_cast<double>(n), 3) / seconds;
  m.method = "OpenBLAS cblas_sgemm n=" + std::to_string(n) + ", " + std::to_string(blas.threads()) +
             (blas.threads() == 1 ? " thread" : " threads") + ", best of " + std::to_string(plan.repeats);
  return m;
}

SizedRate measure_sgemm_at(std::int64_t n, int threads, int repeats) {
  if (n < 1 || threads < 1 || repeats < 1)
    throw InputError("calibrate", "SGEMM size, threads, repeats", "expected each to be at least 1");
  const BlasThreads blas(threads);
  const double flops = 2.0 * std::pow(static_cast<double>(n), 3);
  constexpr double kFlopsPerRun = 2e8;  // a few milliseconds of work at least
  const int products = static_cast<int>(std::clamp(std::ceil(kFlopsPerRun / flops), 1.0, 10000.0));
  const double seconds = time_sgemm(n, repeats, products);
  SizedRate result;
  result.n = n;
  result.rate.value = flops / seconds;
  result.rate.method = "OpenBLAS cblas_sgemm n=" + std::to_string(n) + ", " + std::to_string(blas.threads()) +
                       (blas.threads() == 1 ? " thread" : " threads") + ", best of " + std::to_string(repeats) +
                       " runs of " + std::to_string(products) + (products == 1 ? " product" : " products");
  return result;
}

Measured measure_core_contention(std::int64_t n, int cores, int repeats) {
  Measured m;
  if (cores < 2) return m;
  const BlasThreads blas(1);
  const double flops = 2.0 * std::pow(static_cast<double>(n), 3);
  const int products = static_cast<int>(std::clamp(std::ceil(5e9 / flops), 1.0, 10000.0));  // ~50 ms a run
  // Medians, not the best runs: contention comes and goes (a neighbour's memory traffic, shared
  // clocks), and the simulator charges what it costs on average.
  const auto median_seconds = [&] {
    std::vector<double> runs;
    for (int r = 0; r < repeats; ++r) runs.push_back(time_sgemm(n, 1, products));
    std::nth_element(runs.begin(), runs.begin() + static_cast<std::ptrdiff_t>(runs.size() / 2), runs.end());
    return runs[runs.size() / 2];
  };
  const double alone = median_seconds();
  std::atomic<bool> stop{false};
  std::vector<std::thread> others;
  for (int k = 1; k < cores; ++k)
    others.emplace_back([&stop, n] {
      const std::vector<float> a = random_matrix(n, n, 3), b = random_matrix(n, n, 4);
      std::vector<float> c(static_cast<std::size_t>(n * n), 0.0f);
      const int dim = static_cast<int>(n);
      while (!stop.load(std::memory_order_relaxed))
        cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, dim, dim, dim, 1.0f, a.data(), dim, b.data(), dim,
                    0.0f, c.data(), dim);
    });
  double contended = 0.0;
  try {
    contended = median_seconds();
  } catch (...) {
    stop = true;
    for (std::thread& t : others) t.join();
    throw;
  }
  stop = true;
  for (std::thread& t : others) t.join();
  m.value = contended / alone;
  m.method = "OpenBLAS cblas_sgemm n=" + std::to_string(n) + " on 1 thread, " + std::to_string(cores - 1) +
             (cores == 2 ? " other core" : " other cores") + " running the same, against alone: medians of " + std::to_string(repeats) + " runs of " +
             std::to_string(products) + " products each";
  return m;
}

CubicTimings measure_eigh(std::span<const std::int64_t> sizes, int repeats, int threads) {
  return time_sizes(sizes, repeats, threads, "LAPACK ssyevd with vectors (random symmetric)", time_eigh);
}

CubicTimings measure_qr(std::span<const std::int64_t> sizes, int repeats, int threads) {
  return time_sizes(sizes, repeats, threads, "LAPACK sgeqrf + sorgqr (random square)", time_qr);
}

}  // namespace asteria::hw::calibrate

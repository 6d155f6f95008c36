#include "hwmodels/calibrate/cuda/gpu_solver.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "hwmodels/calibrate/cuda/cuda_support.hpp"
#include "hwmodels/calibrate/measurement.hpp"

namespace asteria::hw::calibrate::gpu {
namespace {

void check_info(const DeviceArray<int>& info, const char* routine, std::int64_t n) {
  int host_info = 0;
  check(cudaMemcpy(&host_info, info.get(), sizeof host_info, cudaMemcpyDeviceToHost), "cudaMemcpy (info)");
  if (host_info != 0)
    throw Error(std::string("calibrate: GPU: ") + routine + " failed at n = " + std::to_string(n) + " (info " +
                std::to_string(host_info) + ")");
}

// Host clock around the call and a stream synchronize: cuSOLVER's drivers synchronize and
// compute on the host internally, so device events alone would miss part of their time.
template <class Factorize>
double time_factorization(int repeats, const Stream& stream, const DeviceArray<float>& original,
                          const DeviceArray<float>& a, Factorize&& factorize) {
  auto restore = [&] {
    check(cudaMemcpyAsync(a.get(), original.get(), a.bytes(), cudaMemcpyDeviceToDevice, stream.get()),
          "cudaMemcpyAsync (restore input)");
    stream.synchronize();
  };
  auto run = [&] {
    factorize();
    stream.synchronize();
  };
  restore();
  run();  // warm-up: cuSOLVER's first call sets up kernels and workspaces
  return best_seconds(repeats, restore, run);
}

double time_eigh(std::int64_t n, int repeats, const Stream& stream, const SolverHandle& solver) {
  const auto count = static_cast<std::size_t>(n * n);
  const int dim = static_cast<int>(n);
  DeviceArray<float> original(count), a(count), w(static_cast<std::size_t>(n));
  DeviceArray<int> info(1);
  // syevd reads the lower triangle only: random values there define a random symmetric matrix.
  fill_uniform(original.get(), count, static_cast<std::uint32_t>(n), stream);
  int lwork = 0;
  check(cusolverDnSsyevd_bufferSize(solver.get(), CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, dim, a.get(), dim,
                                    w.get(), &lwork),
        "cusolverDnSsyevd_bufferSize");
  DeviceArray<float> work(static_cast<std::size_t>(std::max(lwork, 1)));
  const double seconds = time_factorization(repeats, stream, original, a, [&] {
    check(cusolverDnSsyevd(solver.get(), CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, dim, a.get(), dim, w.get(),
                           work.get(), lwork, info.get()),
          "cusolverDnSsyevd");
  });
  check_info(info, "cusolverDnSsyevd", n);
  return seconds;
}

double time_qr(std::int64_t n, int repeats, const Stream& stream, const SolverHandle& solver) {
  const auto count = static_cast<std::size_t>(n * n);
  const int dim = static_cast<int>(n);
  DeviceArray<float> original(count), a(count), tau(static_cast<std::size_t>(n));
  DeviceArray<int> info(1);
  fill_uniform(original.get(), count, static_cast<std::uint32_t>(n) + 7u, stream);
  int geqrf_size = 0;
  int orgqr_size = 0;
  check(cusolverDnSgeqrf_bufferSize(solver.get(), dim, dim, a.get(), dim, &geqrf_size), "cusolverDnSgeqrf_bufferSize");
  check(cusolverDnSorgqr_bufferSize(solver.get(), dim, dim, dim, a.get(), dim, tau.get(), &orgqr_size),
        "cusolverDnSorgqr_bufferSize");
  const int lwork = std::max({geqrf_size, orgqr_size, 1});
  DeviceArray<float> work(static_cast<std::size_t>(lwork));
  const double seconds = time_factorization(repeats, stream, original, a, [&] {
    check(cusolverDnSgeqrf(solver.get(), dim, dim, a.get(), dim, tau.get(), work.get(), lwork, info.get()),
          "cusolverDnSgeqrf");
    check(cusolverDnSorgqr(solver.get(), dim, dim, dim, a.get(), dim, tau.get(), work.get(), lwork, info.get()),
          "cusolverDnSorgqr");
  });
  check_info(info, "cusolverDnSgeqrf/cusolverDnSorgqr", n);
  return seconds;
}

template <class TimeOne>
CubicTimings time_sizes(std::span<const std::int64_t> sizes, int repeats, const std::string& what,
                        TimeOne&& time_one) {
  if (sizes.empty()) throw InputError("calibrate", what, "expected at least one matrix size");
  const Stream stream;
  const SolverHandle solver(stream);
  CubicTimings result;
  for (const std::int64_t n : sizes) result.timings.push_back({n, time_one(n, repeats, stream, solver)});
  std::sort(result.timings.begin(), result.timings.end(),
            [](const TimedSize& a, const TimedSize& b) { return a.n < b.n; });
  const std::vector<TimedSize> fitted = larger_sizes(result.timings);
  result.fit = fit_cubic(fitted);
  result.method = what + ", best of " + std::to_string(repeats) + ", " + describe_sizes(result.timings) +
                  "; c fitted by least squares on " + describe_sizes(fitted);
  return result;
}

}  // namespace

CubicTimings time_gpu_eigh(std::span<const std::int64_t> sizes, int repeats) {
  return time_sizes(sizes, repeats, "cusolverDnSsyevd with vectors (random symmetric)", time_eigh);
}

CubicTimings time_gpu_qr(std::span<const std::int64_t> sizes, int repeats) {
  return time_sizes(sizes, repeats, "cusolverDnSgeqrf + cusolverDnSorgqr (random square)", time_qr);
}

}  // namespace asteria::hw::calibrate::gpu

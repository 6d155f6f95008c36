#pragma once
// CPU compute: OpenBLAS SGEMM rate, LAPACK eigendecomposition and QR times.
#include <cstdint>
#include <span>

#include "hwmodels/calibrate/cubic_fit.hpp"
#include "hwmodels/calibrate/measurement.hpp"

namespace asteria::hw::calibrate {

// Sets OpenBLAS's thread count for its lifetime and restores the previous count after.
class BlasThreads {
 public:
  explicit BlasThreads(int threads);
  ~BlasThreads();
  BlasThreads(const BlasThreads&) = delete;
  BlasThreads& operator=(const BlasThreads&) = delete;

  int threads() const noexcept { return threads_; }  // as OpenBLAS reports it after the change

 private:
  int previous_;
  int threads_;
};

struct SgemmPlan {
  int threads = 1;
  double target_seconds = 0.2;  // n is chosen so one SGEMM takes about this long
  int repeats = 5;              // the best of this many timed runs counts
  std::int64_t max_n = 4096;    // keeps the three matrices within 200 MB
};

// FP32 FLOP/s (2n³ per n x n x n product) of cblas_sgemm on `plan.threads` threads.
Measured measure_sgemm(const SgemmPlan& plan);

// cblas_sgemm of n x n x n on `threads` threads: the best of `repeats` timed runs of enough
// back-to-back products (at least one) that a run is not dominated by the clock's resolution.
SizedRate measure_sgemm_at(std::int64_t n, int threads, int repeats);

// How much longer one core takes for a single-thread SGEMM of n while every other of the
// `cores` cores runs the same loop: the ratio contended / alone of the best of `repeats` timed
// runs each (about 1: cores do not slow one another); not measured (method empty) for one core.
Measured measure_core_contention(std::int64_t n, int cores, int repeats);

// LAPACK ssyevd (eigenvalues and eigenvectors) of random symmetric n x n matrices on `threads`
// BLAS threads (one, as a refresh worker runs it); c fitted on the larger sizes.
CubicTimings measure_eigh(std::span<const std::int64_t> sizes, int repeats, int threads = 1);

// Householder QR with explicit Q (sgeqrf + sorgqr) of random n x n matrices on `threads` BLAS
// threads.
CubicTimings measure_qr(std::span<const std::int64_t> sizes, int repeats, int threads = 1);

}  // namespace asteria::hw::calibrate

#pragma once
// The device stream of a CPU device (the real backend's CPU mode: the model's GEMMs on OpenBLAS
// threads), measured on `threads` host threads: the figures of its profile's gpu section.
#include <array>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <vector>

#include "hwmodels/calibrate/cpu_bench.hpp"
#include "hwmodels/calibrate/cubic_fit.hpp"
#include "hwmodels/calibrate/measurement.hpp"
#include "hwmodels/profile.hpp"

namespace asteria::hw::calibrate {

struct CpuDevicePlan {
  int threads = 1;                                                   // OpenBLAS threads of the stream
  SgemmPlan sgemm;                                                   // the sized SGEMM for the peak
  std::array<std::int64_t, GemmEfficiency::kClasses> class_sizes{};  // one n per size class
  int gemm_repeats = 3;
  std::vector<std::int64_t> solver_sizes;  // n of the eigh and QR timings
  int solver_repeats = 3;
  std::size_t memcpy_bytes = 0;
  int memcpy_repeats = 3;
  int calls = 1000;  // tiny calls for the per-call overhead
  int wake_samples = 50;  // submissions to the idle stream for its wake latency
};

struct CpuDeviceMeasurements {
  int threads = 0;                                           // 0: not measured
  Measured sgemm_sized;                                      // FLOP/s, n grown to the plan's target time
  std::array<SizedRate, GemmEfficiency::kClasses> sgemm_by_class;
  Measured memory_bandwidth;  // bytes/s, memcpy on `threads` threads
  Measured call_latency;      // s per tiny cblas_sgemm
  Measured copy_latency;      // s per small memcpy on one thread
  Measured wake_latency;      // s from submitting to the idle stream (its thread asleep) to the start
  CubicTimings eigh;          // on `threads` BLAS threads
  CubicTimings qr;

  bool measured() const noexcept { return threads > 0; }
  // The fastest SGEMM rate measured: the stream's peak, of which the class rates are fractions.
  double peak_flops() const noexcept;
};

// Runs the plan; progress lines go to `progress`. Throws InputError when plan.threads < 1.
CpuDeviceMeasurements measure_cpu_device(const CpuDevicePlan& plan, std::ostream& progress);

}  // namespace asteria::hw::calibrate

#pragma once
// GPU measurements (CUDA, cuBLAS, cuSOLVER) on device 0. Built from cuda/*.cu when the CUDA
// toolkit is found; otherwise (and on machines without a device) they report why nothing was
// measured instead of failing.
#include <array>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "hwmodels/calibrate/cubic_fit.hpp"
#include "hwmodels/calibrate/measurement.hpp"

namespace asteria::hw::calibrate {

struct GpuPresence {
  int count = 0;       // usable CUDA devices
  std::string model;   // device 0's name
  std::string reason;  // why count is 0: built without CUDA, no driver, no device
};

// Cheap: cudaGetDeviceCount and device 0's properties.
GpuPresence probe_gpu();

struct GpuPlan {
  std::int64_t gemm_n = 8192;                       // n x n x n products
  int gemm_repeats = 5;                             // timed runs (of several products each); best counts
  std::vector<std::int64_t> solver_sizes{512, 1024, 2048};
  int solver_repeats = 3;
  std::size_t host_copy_bytes = std::size_t{256} << 20;   // pinned H2D / D2H transfers
  std::size_t device_copy_bytes = std::size_t{1} << 30;   // D2D copy for memory bandwidth
  int copy_repeats = 5;
  int launches = 1000;         // empty kernels for the launch latency
  int latency_samples = 200;   // 4-byte transfers for the link latencies
  // BF16 products per GEMM size class (GemmEfficiency: < 256, < 1024, < 4096, >= 4096).
  std::array<std::int64_t, 4> class_sizes{128, 512, 2048, 8192};
};

struct GpuMeasurements {
  GpuPresence presence;
  Measured memory_bytes;            // bytes
  Measured sgemm_flops;             // FLOP/s, cublasSgemm (FP32, no TF32)
  Measured bf16_gemm_flops;         // FLOP/s, cublasGemmEx BF16 in and out, FP32 accumulate
  std::array<SizedRate, 4> bf16_gemm_by_class;  // the same at each of GpuPlan::class_sizes
  Measured memory_bandwidth;        // bytes/s, D2D copy, bytes read + written
  Measured host_to_device;          // bytes/s, pinned
  Measured device_to_host;          // bytes/s, pinned
  Measured host_to_device_latency;  // s, 4-byte copy including the synchronize
  Measured device_to_host_latency;  // s
  Measured launch_latency;          // s per empty kernel launch
  CubicTimings eigh;                // cusolverDnSsyevd
  CubicTimings qr;                  // cusolverDnSgeqrf + cusolverDnSorgqr

  bool measured() const noexcept { return presence.count > 0; }
};

// Runs the plan on device 0 when probe_gpu() finds one (progress lines on `progress`); else
// returns the presence with its reason and nothing measured. Throws asteria::Error when a
// device is present but a CUDA, cuBLAS or cuSOLVER call fails.
GpuMeasurements measure_gpu(const GpuPlan& plan, std::ostream& progress);

}  // namespace asteria::hw::calibrate

// GPU measurements: device query, cuBLAS GEMM rates, copy bandwidths and latencies, launch
// latency; the cuSOLVER timings live in gpu_solver.cu.
#include <algorithm>
#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "hwmodels/calibrate/cuda/cuda_support.hpp"
#include "hwmodels/calibrate/cuda/gpu_solver.hpp"
#include "hwmodels/calibrate/gpu_bench.hpp"

namespace asteria::hw::calibrate {
namespace gpu {
namespace {

// splitmix64 of the index: reproducible values without a random-number state per thread.
__device__ float hashed_uniform(std::uint64_t i, std::uint32_t seed) {
  std::uint64_t z = i * 0x9E3779B97F4A7C15ull + seed;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return static_cast<float>(z >> 40) * (2.0f / 16777216.0f) - 1.0f;
}

__global__ void fill_float(float* data, std::size_t count, std::uint32_t seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    data[i] = hashed_uniform(i, seed);
}

__global__ void fill_bf16(__nv_bfloat16* data, std::size_t count, std::uint32_t seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    data[i] = __float2bfloat16(hashed_uniform(i, seed));
}

__global__ void empty_kernel() {}

constexpr int kFillBlocks = 1024;
constexpr int kFillThreads = 256;

std::string mib(std::size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

// Best of `repeats` timed runs of `products` back-to-back products each (device events).
template <class Product>
double best_product_seconds(int repeats, int products, const Stream& stream, Product&& product) {
  product();  // warm-up: cuBLAS picks and loads its kernel
  stream.synchronize();
  Event start, stop;
  double best = INFINITY;
  for (int r = 0; r < repeats; ++r) {
    start.record(stream);
    for (int p = 0; p < products; ++p) product();
    stop.record(stream);
    best = std::min(best, elapsed_seconds(start, stop) / products);
  }
  return best;
}

constexpr int kProductsPerRun = 10;

Measured measure_sgemm(std::int64_t n, int repeats) {
  const Stream stream;
  const BlasHandle blas(stream);
  check(cublasSetMathMode(blas.get(), CUBLAS_DEFAULT_MATH), "cublasSetMathMode");  // FP32, no TF32
  const auto count = static_cast<std::size_t>(n * n);
  const int dim = static_cast<int>(n);
  DeviceArray<float> a(count), b(count), c(count);
  fill_uniform(a.get(), count, 1, stream);
  fill_uniform(b.get(), count, 2, stream);
  const float one = 1.0f, zero = 0.0f;
  const double seconds = best_product_seconds(repeats, kProductsPerRun, stream, [&] {
    check(cublasSgemm(blas.get(), CUBLAS_OP_N, CUBLAS_OP_N, dim, dim, dim, &one, a.get(), dim, b.get(), dim, &zero,
                      c.get(), dim),
          "cublasSgemm");
  });
  Measured m;
  m.value = 2.0 * std::pow(static_cast<double>(n), 3) / seconds;
  m.method = "cublasSgemm FP32 (no TF32) n=" + std::to_string(n) + ", best of " + std::to_string(repeats) + " runs of " +
             std::to_string(kProductsPerRun);
  return m;
}

Measured measure_bf16_gemm(std::int64_t n, int repeats) {
  const Stream stream;
  const BlasHandle blas(stream);
  const auto count = static_cast<std::size_t>(n * n);
  const int dim = static_cast<int>(n);
  DeviceArray<__nv_bfloat16> a(count), b(count), c(count);
  fill_uniform(a.get(), count, 3, stream);
  fill_uniform(b.get(), count, 4, stream);
  const float one = 1.0f, zero = 0.0f;
  const double seconds = best_product_seconds(repeats, kProductsPerRun, stream, [&] {
    check(cublasGemmEx(blas.get(), CUBLAS_OP_N, CUBLAS_OP_N, dim, dim, dim, &one, a.get(), CUDA_R_16BF, dim, b.get(),
                       CUDA_R_16BF, dim, &zero, c.get(), CUDA_R_16BF, dim, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx (BF16)");
  });
  Measured m;
  m.value = 2.0 * std::pow(static_cast<double>(n), 3) / seconds;
  m.method = "cublasGemmEx BF16 in/out, FP32 accumulate, n=" + std::to_string(n) + ", best of " +
             std::to_string(repeats) + " runs of " + std::to_string(kProductsPerRun);
  return m;
}

// Bytes/s of one cudaMemcpyAsync of `bytes`, best of `repeats` (device events); `factor`
// counts the bytes a copy moves per byte copied (2 for D2D: read + write).
double copy_rate(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, int repeats, double factor) {
  const Stream stream;
  Event start, stop;
  check(cudaMemcpyAsync(dst, src, bytes, kind, stream.get()), "cudaMemcpyAsync (warm-up)");
  stream.synchronize();
  double best = INFINITY;
  for (int r = 0; r < repeats; ++r) {
    start.record(stream);
    check(cudaMemcpyAsync(dst, src, bytes, kind, stream.get()), "cudaMemcpyAsync");
    stop.record(stream);
    best = std::min(best, elapsed_seconds(start, stop));
  }
  return factor * static_cast<double>(bytes) / best;
}

// Median host time of a 4-byte copy and the synchronize that waits for it: what a small
// transfer costs the runtime beyond its bytes.
double small_copy_latency(void* dst, const void* src, cudaMemcpyKind kind, int samples) {
  const Stream stream;
  std::vector<double> times;
  for (int i = 0; i < samples + 1; ++i) {
    const WallClock::time_point start = WallClock::now();
    check(cudaMemcpyAsync(dst, src, 4, kind, stream.get()), "cudaMemcpyAsync (4 bytes)");
    stream.synchronize();
    if (i > 0) times.push_back(seconds_between(start, WallClock::now()));  // the first one warms up
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

void measure_links(const GpuPlan& plan, GpuMeasurements& result) {
  const PinnedBuffer host(plan.host_copy_bytes);
  DeviceArray<std::byte> device(plan.host_copy_bytes);
  std::fill_n(static_cast<std::byte*>(host.get()), host.bytes(), std::byte{0x5a});
  const std::string how = "pinned cudaMemcpyAsync of " + mib(plan.host_copy_bytes) + ", best of " +
                          std::to_string(plan.copy_repeats);
  result.host_to_device = {copy_rate(device.get(), host.get(), host.bytes(), cudaMemcpyHostToDevice,
                                     plan.copy_repeats, 1.0),
                           how};
  result.device_to_host = {copy_rate(host.get(), device.get(), host.bytes(), cudaMemcpyDeviceToHost,
                                     plan.copy_repeats, 1.0),
                           how};
  const std::string latency_how = "median of " + std::to_string(plan.latency_samples) +
                                  " pinned 4-byte cudaMemcpyAsync + cudaStreamSynchronize (host clock)";
  result.host_to_device_latency = {
      small_copy_latency(device.get(), host.get(), cudaMemcpyHostToDevice, plan.latency_samples), latency_how};
  result.device_to_host_latency = {
      small_copy_latency(host.get(), device.get(), cudaMemcpyDeviceToHost, plan.latency_samples), latency_how};
}

Measured measure_device_bandwidth(const GpuPlan& plan) {
  DeviceArray<std::byte> src(plan.device_copy_bytes), dst(plan.device_copy_bytes);
  check(cudaMemset(src.get(), 0x5a, src.bytes()), "cudaMemset");
  return {copy_rate(dst.get(), src.get(), src.bytes(), cudaMemcpyDeviceToDevice, plan.copy_repeats, 2.0),
          "device-to-device cudaMemcpyAsync of " + mib(plan.device_copy_bytes) + ", best of " +
              std::to_string(plan.copy_repeats) + ", counting bytes read + written"};
}

Measured measure_launch_latency(int launches) {
  const Stream stream;
  for (int i = 0; i < 10; ++i) empty_kernel<<<1, 1, 0, stream.get()>>>();
  stream.synchronize();
  const WallClock::time_point start = WallClock::now();
  for (int i = 0; i < launches; ++i) empty_kernel<<<1, 1, 0, stream.get()>>>();
  check(cudaGetLastError(), "empty kernel launch");
  stream.synchronize();
  const double seconds = seconds_between(start, WallClock::now());
  return {seconds / launches, std::to_string(launches) + " back-to-back empty kernel launches and one synchronize, "
                                  "host time per launch"};
}

}  // namespace

void fill_uniform(float* data, std::size_t count, std::uint32_t seed, const Stream& stream) {
  fill_float<<<kFillBlocks, kFillThreads, 0, stream.get()>>>(data, count, seed);
  check(cudaGetLastError(), "fill kernel launch");
}

void fill_uniform(__nv_bfloat16* data, std::size_t count, std::uint32_t seed, const Stream& stream) {
  fill_bf16<<<kFillBlocks, kFillThreads, 0, stream.get()>>>(data, count, seed);
  check(cudaGetLastError(), "fill kernel launch");
}

}  // namespace gpu

GpuPresence probe_gpu() {
  GpuPresence presence;
  int count = 0;
  if (const cudaError_t status = cudaGetDeviceCount(&count); status != cudaSuccess) {
    presence.reason = std::string("no usable CUDA device (") + cudaGetErrorString(status) + ")";
    cudaGetLastError();  // clear the error for later callers
    return presence;
  }
  if (count == 0) {
    presence.reason = "no CUDA device";
    return presence;
  }
  cudaDeviceProp properties{};
  if (cudaGetDeviceProperties(&properties, 0) != cudaSuccess) {
    presence.reason = "cudaGetDeviceProperties failed on device 0";
    cudaGetLastError();
    return presence;
  }
  presence.count = count;
  presence.model = properties.name;
  return presence;
}

GpuMeasurements measure_gpu(const GpuPlan& plan, std::ostream& progress) {
  GpuMeasurements result;
  result.presence = probe_gpu();
  if (!result.measured()) return result;
  gpu::check(cudaSetDevice(0), "cudaSetDevice");
  cudaDeviceProp properties{};
  gpu::check(cudaGetDeviceProperties(&properties, 0), "cudaGetDeviceProperties");
  result.memory_bytes = {static_cast<double>(properties.totalGlobalMem), "cudaGetDeviceProperties totalGlobalMem"};

  progress << "calibrate: GPU " << result.presence.model << ": cuBLAS SGEMM and BF16 GEMM\n" << std::flush;
  result.sgemm_flops = gpu::measure_sgemm(plan.gemm_n, plan.gemm_repeats);
  result.bf16_gemm_flops = gpu::measure_bf16_gemm(plan.gemm_n, plan.gemm_repeats);
  for (std::size_t i = 0; i < plan.class_sizes.size(); ++i)
    result.bf16_gemm_by_class[i] = {plan.class_sizes[i], gpu::measure_bf16_gemm(plan.class_sizes[i], plan.gemm_repeats)};
  progress << "calibrate: GPU memory and host-link bandwidth, launch latency\n" << std::flush;
  result.memory_bandwidth = gpu::measure_device_bandwidth(plan);
  gpu::measure_links(plan, result);
  result.launch_latency = gpu::measure_launch_latency(plan.launches);
  progress << "calibrate: GPU cuSOLVER eigh and QR\n" << std::flush;
  result.eigh = gpu::time_gpu_eigh(plan.solver_sizes, plan.solver_repeats);
  result.qr = gpu::time_gpu_qr(plan.solver_sizes, plan.solver_repeats);
  return result;
}

}  // namespace asteria::hw::calibrate

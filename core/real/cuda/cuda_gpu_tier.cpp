#include "core/real/cuda/cuda_gpu_tier.hpp"

#include <cuda_runtime.h>

#include <array>
#include <cstring>
#include <stdexcept>
#include <string>

namespace asteria::real::cuda {

namespace {

std::string describe(cudaError_t err) { return std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err); }

class CudaGpuTier final : public GpuTier {
 public:
  explicit CudaGpuTier(int device) : device_(device) {
    check(cudaSetDevice(device_), "cudaSetDevice");
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, device_), "cudaGetDeviceProperties");
    name_ = prop.name;
    try {
      for (cudaStream_t& s : streams_) check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    } catch (...) {
      destroy_streams();
      throw;
    }
  }
  ~CudaGpuTier() override { destroy_streams(); }
  CudaGpuTier(const CudaGpuTier&) = delete;
  CudaGpuTier& operator=(const CudaGpuTier&) = delete;

  std::string_view name() const noexcept override { return name_; }

  std::byte* allocate_device(std::size_t bytes) override {
    if (cudaSetDevice(device_) != cudaSuccess) return failed();
    void* p = nullptr;
    if (cudaMalloc(&p, bytes == 0 ? 1 : bytes) != cudaSuccess) return failed();
    if (!zero_device(static_cast<std::byte*>(p), bytes)) {
      cudaFree(p);
      return failed();
    }
    return static_cast<std::byte*>(p);
  }
  void free_device(std::byte* pointer) noexcept override {
    cudaSetDevice(device_);
    cudaFree(pointer);
  }

  bool zero_device(std::byte* pointer, std::size_t bytes) noexcept override {
    // On the legacy stream and waited for: the copy streams do not order after it.
    return cudaSetDevice(device_) == cudaSuccess && cudaMemset(pointer, 0, bytes) == cudaSuccess &&
           cudaStreamSynchronize(cudaStreamLegacy) == cudaSuccess;
  }

  std::byte* allocate_pinned(std::size_t bytes) override {
    void* p = nullptr;
    if (cudaHostAlloc(&p, bytes == 0 ? 1 : bytes, cudaHostAllocPortable) != cudaSuccess) return failed();
    std::memset(p, 0, bytes);
    return static_cast<std::byte*>(p);
  }
  void free_pinned(std::byte* pointer) noexcept override { cudaFreeHost(pointer); }

  Status copy(std::byte* dst, const std::byte* src, std::size_t bytes, CopyDirection direction) override {
    // The current device is per thread: copy-engine threads set it before each call.
    if (cudaError_t e = cudaSetDevice(device_); e != cudaSuccess) return fail("cudaSetDevice", e);
    const auto index = static_cast<std::size_t>(direction);
    cudaEvent_t done = nullptr;
    if (cudaError_t e = cudaEventCreateWithFlags(&done, cudaEventDisableTiming); e != cudaSuccess)
      return fail("cudaEventCreate", e);
    cudaError_t e = cudaMemcpyAsync(dst, src, bytes, kind_of(direction), streams_[index]);
    if (e == cudaSuccess) e = cudaEventRecord(done, streams_[index]);
    if (e == cudaSuccess) e = cudaEventSynchronize(done);
    cudaEventDestroy(done);
    return e == cudaSuccess ? Status::success() : fail("cudaMemcpyAsync", e);
  }

 private:
  void destroy_streams() noexcept {
    cudaSetDevice(device_);
    for (cudaStream_t& s : streams_) {
      if (s != nullptr) cudaStreamDestroy(s);
      s = nullptr;
    }
  }
  static cudaMemcpyKind kind_of(CopyDirection d) noexcept {
    switch (d) {
      case CopyDirection::host_to_device: return cudaMemcpyHostToDevice;
      case CopyDirection::device_to_host: return cudaMemcpyDeviceToHost;
      case CopyDirection::device_to_device: return cudaMemcpyDeviceToDevice;
    }
    return cudaMemcpyDefault;
  }
  static std::byte* failed() noexcept {
    cudaGetLastError();  // clear a sticky allocation error so later calls start clean
    return nullptr;
  }
  Status fail(const char* call, cudaError_t err) const {
    cudaGetLastError();
    return {StatusCode::io_error, std::string(call) + " on " + name_ + " failed (" + describe(err) + ")"};
  }
  static void check(cudaError_t err, const char* call) {
    if (err != cudaSuccess) {
      cudaGetLastError();
      throw std::runtime_error(std::string(call) + " failed (" + describe(err) + ")");
    }
  }

  int device_;
  std::string name_;
  std::array<cudaStream_t, 3> streams_{};
};

}  // namespace

std::unique_ptr<GpuTier> make_cuda_gpu_tier(int device) { return std::make_unique<CudaGpuTier>(device); }

}  // namespace asteria::real::cuda

#pragma once
// RAII owners and error checks for the calibration's CUDA code (included by cuda/*.cu only).
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/common/error.hpp"

namespace asteria::hw::calibrate::gpu {

inline void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw Error(std::string("calibrate: GPU: ") + what + ": " + cudaGetErrorString(status));
}
inline void check(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw Error(std::string("calibrate: GPU: ") + what + ": " + cublasGetStatusString(status));
}
inline void check(cusolverStatus_t status, const char* what) {
  if (status != CUSOLVER_STATUS_SUCCESS)
    throw Error(std::string("calibrate: GPU: ") + what + ": cuSOLVER status " + std::to_string(static_cast<int>(status)));
}

template <class T>
class DeviceArray {
 public:
  explicit DeviceArray(std::size_t count) : count_(count) {
    void* p = nullptr;
    check(cudaMalloc(&p, count * sizeof(T)), "cudaMalloc");
    data_ = static_cast<T*>(p);
  }
  ~DeviceArray() { cudaFree(data_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  T* get() const noexcept { return data_; }
  std::size_t count() const noexcept { return count_; }
  std::size_t bytes() const noexcept { return count_ * sizeof(T); }

 private:
  T* data_ = nullptr;
  std::size_t count_;
};

class PinnedBuffer {
 public:
  explicit PinnedBuffer(std::size_t bytes) : bytes_(bytes) { check(cudaMallocHost(&data_, bytes), "cudaMallocHost"); }
  ~PinnedBuffer() { cudaFreeHost(data_); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void* get() const noexcept { return data_; }
  std::size_t bytes() const noexcept { return bytes_; }

 private:
  void* data_ = nullptr;
  std::size_t bytes_;
};

class Stream {
 public:
  Stream() { check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate"); }
  ~Stream() { cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const noexcept { return stream_; }
  void synchronize() const { check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize"); }

 private:
  cudaStream_t stream_ = nullptr;
};

class Event {
 public:
  Event() { check(cudaEventCreate(&event_), "cudaEventCreate"); }
  ~Event() { cudaEventDestroy(event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(const Stream& stream) { check(cudaEventRecord(event_, stream.get()), "cudaEventRecord"); }
  cudaEvent_t get() const noexcept { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

// Seconds between two recorded events, once `stop` has completed.
inline double elapsed_seconds(const Event& start, const Event& stop) {
  check(cudaEventSynchronize(stop.get()), "cudaEventSynchronize");
  float ms = 0.0f;
  check(cudaEventElapsedTime(&ms, start.get(), stop.get()), "cudaEventElapsedTime");
  return static_cast<double>(ms) * 1e-3;
}

class BlasHandle {
 public:
  explicit BlasHandle(const Stream& stream) {
    check(cublasCreate(&handle_), "cublasCreate");
    check(cublasSetStream(handle_, stream.get()), "cublasSetStream");
  }
  ~BlasHandle() { cublasDestroy(handle_); }
  BlasHandle(const BlasHandle&) = delete;
  BlasHandle& operator=(const BlasHandle&) = delete;
  cublasHandle_t get() const noexcept { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

class SolverHandle {
 public:
  explicit SolverHandle(const Stream& stream) {
    check(cusolverDnCreate(&handle_), "cusolverDnCreate");
    check(cusolverDnSetStream(handle_, stream.get()), "cusolverDnSetStream");
  }
  ~SolverHandle() { cusolverDnDestroy(handle_); }
  SolverHandle(const SolverHandle&) = delete;
  SolverHandle& operator=(const SolverHandle&) = delete;
  cusolverDnHandle_t get() const noexcept { return handle_; }

 private:
  cusolverDnHandle_t handle_ = nullptr;
};

// Fills with reproducible values uniform in [-1, 1) (defined in gpu_bench.cu). Not zeros:
// GEMMs on zeros draw less power and would report clocks real data does not get.
void fill_uniform(float* data, std::size_t count, std::uint32_t seed, const Stream& stream);
void fill_uniform(__nv_bfloat16* data, std::size_t count, std::uint32_t seed, const Stream& stream);

}  // namespace asteria::hw::calibrate::gpu

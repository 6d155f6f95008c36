#pragma once
// RAII owners and error checks for GptCuda: a device array, and the stream + cuBLAS handle the
// model runs on. Every failed CUDA or cuBLAS call becomes a std::runtime_error that names what
// was being done and the library's own error string.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

namespace asteria::real::cuda {

inline void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string("GptCuda: ") + what + ": CUDA error: " + cudaGetErrorString(status));
}

inline void check_cublas(cublasStatus_t status, const char* what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("GptCuda: ") + what + ": cuBLAS error: " + cublasGetStatusString(status));
}

// A kernel launch reports configuration errors only through cudaGetLastError.
inline void check_launch(const char* what) { check_cuda(cudaGetLastError(), what); }

// `size` elements of T in device memory; contents undefined until written.
template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(std::size_t size) { allocate(size); }
  ~DeviceArray() { release(); }
  DeviceArray(DeviceArray&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  DeviceArray& operator=(DeviceArray&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;

  T* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }

  // Makes room for at least `size` elements; a growth drops the old contents.
  void reserve_discarding(std::size_t size) {
    if (size <= size_) return;
    release();
    allocate(size);
  }

 private:
  void allocate(std::size_t size) {
    if (size == 0) return;
    void* at = nullptr;
    check_cuda(cudaMalloc(&at, size * sizeof(T)), "cudaMalloc");
    data_ = static_cast<T*>(at);
    size_ = size;
  }
  void release() noexcept {
    if (data_ != nullptr) cudaFree(data_);
    data_ = nullptr;
    size_ = 0;
  }

  T* data_ = nullptr;
  std::size_t size_ = 0;
};

// The model's stream and the cuBLAS handle bound to it.
class CudaContext {
 public:
  CudaContext() {
    try {
      check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
      check_cublas(cublasCreate(&blas_), "cublasCreate");
      check_cublas(cublasSetStream(blas_, stream_), "cublasSetStream");
      // Full FP32 products (no TF32 tensor cores): the model must agree with the CPU reference
      // to float rounding.
      check_cublas(cublasSetMathMode(blas_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
    } catch (...) {
      destroy();
      throw;
    }
  }
  ~CudaContext() { destroy(); }
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;

  cudaStream_t stream() const noexcept { return stream_; }
  cublasHandle_t blas() const noexcept { return blas_; }

  void synchronize(const char* what) const { check_cuda(cudaStreamSynchronize(stream_), what); }

 private:
  void destroy() noexcept {
    if (blas_ != nullptr) cublasDestroy(blas_);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
    blas_ = nullptr;
    stream_ = nullptr;
  }

  cudaStream_t stream_ = nullptr;
  cublasHandle_t blas_ = nullptr;
};

}  // namespace asteria::real::cuda

#include "core/real/cuda/device.hpp"

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace asteria::real::cuda {

DeviceInfo query_devices() {
  DeviceInfo info;
  int count = 0;
  if (cudaError_t err = cudaGetDeviceCount(&count); err != cudaSuccess) {
    info.reason = cudaGetErrorString(err);
    cudaGetLastError();  // clear the sticky error for later callers
    return info;
  }
  info.count = count;
  if (count == 0) {
    info.reason = "no CUDA device";
    return info;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) info.name = prop.name;
  return info;
}

int current_device() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return device;
}

void use_device(int device) {
  if (const cudaError_t err = cudaSetDevice(device); err != cudaSuccess)
    throw std::runtime_error("cudaSetDevice(" + std::to_string(device) + "): " + cudaGetErrorString(err));
}

}  // namespace asteria::real::cuda

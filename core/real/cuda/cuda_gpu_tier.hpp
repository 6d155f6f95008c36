#pragma once
// RealMemory's device tier on a CUDA GPU: cudaMalloc'd device memory, page-locked host memory,
// copies with cudaMemcpyAsync on one non-blocking stream per direction, each awaited by an event.
#include <memory>

#include "core/real/tier_backend.hpp"

namespace asteria::real::cuda {

// Throws std::runtime_error when `device` cannot be used (check query_devices() first).
std::unique_ptr<GpuTier> make_cuda_gpu_tier(int device = 0);

}  // namespace asteria::real::cuda

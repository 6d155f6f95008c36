#pragma once
// The CUDA accelerator of the real backend: device `index`'s memory (CudaGpuTier) and its math
// (CudaDevice), both on that device.
#include <memory>

#include "core/real/accelerator.hpp"

namespace asteria::real::cuda {

// Throws std::runtime_error when `device` cannot be used (check query_devices() first).
std::unique_ptr<Accelerator> make_cuda_accelerator(int device = 0);

}  // namespace asteria::real::cuda

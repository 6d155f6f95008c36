#pragma once
// What a GPU brings to the real backend: memory for the device tier (GpuTier: device memory and
// page-locked host memory, with their copies) and the device the optimizers' per-step math runs
// on for state resting there (an ops::Device over the same memory, queueing its operations on a
// stream of its own and fencing them for the device stream executor). The CUDA one comes from
// core/real/cuda/cuda_accelerator.hpp; tests build one that emulates a device in host memory.
#include <string_view>

#include "core/ops/device.hpp"
#include "core/real/tier_backend.hpp"

namespace asteria::real {

class Accelerator {
 public:
  virtual ~Accelerator() = default;
  virtual std::string_view name() const noexcept = 0;  // for the run's description
  virtual GpuTier& memory() = 0;
  // Its memory is not host-addressable (host_addressable() is false): a host read of it is a bug.
  virtual ops::Device& math() = 0;
};

}  // namespace asteria::real

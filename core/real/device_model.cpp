#include "core/real/device_model.hpp"

#include <algorithm>

namespace asteria::real {

platform::Seconds DeviceModel::duration(const platform::Cost& cost) const noexcept {
  const double compute = flops_per_second > 0.0 ? cost.flops / flops_per_second : 0.0;
  const double memory = bytes_per_second > 0.0 ? cost.bytes / bytes_per_second : 0.0;
  return std::max(0.0, launch_latency) + std::max({0.0, compute, memory});
}

platform::Seconds LinkModel::duration(std::size_t bytes) const noexcept {
  if (!modelled()) return 0.0;
  return std::max(0.0, latency) + static_cast<double>(bytes) / bytes_per_second;
}

}  // namespace asteria::real

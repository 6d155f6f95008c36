#pragma once
// How long device work and data moves take when the real backend emulates them.
#include <cstddef>
#include <string_view>

#include "core/platform/cost.hpp"
#include "core/platform/time.hpp"

namespace asteria::real {


// Roofline of one device: a kernel lasts launch_latency + max(flops / flops_per_second,
// bytes / bytes_per_second). A rate of 0 leaves that term out.
// Defaults: H100 SXM peaks (HARDWARE.md: FP32 67 TFLOP/s, HBM3 3.35 TB/s), ~5 us per launch.
struct DeviceModel {
  double flops_per_second = 67.0e12;
  double bytes_per_second = 3.35e12;
  platform::Seconds launch_latency = 5.0e-6;
  platform::Seconds duration(const platform::Cost& cost) const noexcept;
};

// One direction of data movement between two tiers: latency + bytes / bytes_per_second.
// bytes_per_second = 0 means "not modelled": the move takes the time the copy takes.
struct LinkModel {
  double bytes_per_second = 0.0;
  platform::Seconds latency = 0.0;
  bool modelled() const noexcept { return bytes_per_second > 0.0; }
  platform::Seconds duration(std::size_t bytes) const noexcept;
};

}  // namespace asteria::real

#pragma once
// The host CPU, on the calling thread: where tests that drive optimizer blocks directly run their
// per-step math (core/ops). One per test program; it holds no state between operations.
#include "core/ops/cpu_device.hpp"

namespace asteria::test {

inline ops::CpuDevice& host_device() {
  static ops::CpuDevice device;
  return device;
}

}  // namespace asteria::test

#pragma once
// Tests that need a CUDA device: without one they skip and say why.
#include <gtest/gtest.h>

#include "core/real/cuda/device.hpp"

namespace asteria::real::cuda::test {

template <class Base = ::testing::Test>
class NeedsCudaDevice : public Base {
 protected:
  void SetUp() override {
    if (const DeviceInfo info = query_devices(); info.count == 0)
      GTEST_SKIP() << "no CUDA device on this machine: " << info.reason;
  }
};

}  // namespace asteria::real::cuda::test

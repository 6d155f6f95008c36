// RealMemory on a CUDA GPU: device regions in cudaMalloc'd memory, pinned host regions, copies
// through cudaMemcpyAsync. Compiled whenever CUDA is found; without a device the tests skip and
// say so (the device query itself is checked in test_cuda).
#include <gtest/gtest.h>

#if ASTERIA_HAVE_CUDA

#include <cstring>
#include <random>
#include <vector>

#include "core/real/cuda/device.hpp"
#include "core/real/real_platform.hpp"
#include "tests/platform/in_memory_nvme_tier.hpp"

namespace asteria::real {
namespace {

using platform::Region;
using platform::Tier;

class RealGpuMemory : public ::testing::Test {
 protected:
  void SetUp() override {
    const cuda::DeviceInfo info = cuda::query_devices();
    if (info.count == 0) GTEST_SKIP() << "no CUDA device on this machine: " << info.reason;
  }
};

TEST_F(RealGpuMemory, DeviceTierIsGpuMemoryAndBytesRoundTrip) {
  testing::InMemoryNvmeTier nvme;
  RealPlatformOptions o;
  o.memory.budgets = {64 << 20, 64 << 20, 64 << 20};
  o.gpu = GpuUse::if_present;
  o.nvme = &nvme;
  RealPlatform p(o);
  RealMemory& m = p.real_memory();
  ASSERT_TRUE(m.device_is_gpu());

  constexpr std::size_t n = (8 << 20) + 5;
  std::vector<std::byte> data(n);
  std::mt19937 gen(3);
  for (std::byte& b : data) b = static_cast<std::byte>(gen() & 0xff);
  Region host = *m.allocate(Tier::host, n, "host");
  Region device = *m.allocate(Tier::device, n, "device");
  Region device2 = *m.allocate(Tier::device, n, "device2");
  Region disk = *m.allocate(Tier::nvme, n, "disk");
  Region back = *m.allocate(Tier::host, n, "back");
  EXPECT_EQ(m.host_address(device), nullptr);
  std::memcpy(m.host_address(host), data.data(), n);

  ASSERT_TRUE(m.copy(host, device).status().ok());
  ASSERT_TRUE(m.copy(device, device2).status().ok());  // device to device
  ASSERT_TRUE(m.copy(device2, disk).status().ok());    // through a bounce buffer
  Region device3 = *m.allocate(Tier::device, n, "device3");
  ASSERT_TRUE(m.copy(disk, device3).status().ok());
  ASSERT_TRUE(m.copy(device3, back).status().ok());
  EXPECT_EQ(std::memcmp(m.host_address(back), data.data(), n), 0);

  // Fresh device regions read back as zeros.
  Region zeros = *m.allocate(Tier::device, 4096, "zeros");
  ASSERT_TRUE(m.copy(zeros, back).status().ok());
  for (std::size_t i = 0; i < 4096; ++i) ASSERT_EQ(m.host_address(back)[i], std::byte{0});
  EXPECT_EQ(m.totals(Tier::host, Tier::device).bytes, n);
}

TEST_F(RealGpuMemory, BudgetStillBoundsTheDeviceTier) {
  RealPlatformOptions o;
  o.memory.budgets = {1 << 20, 1 << 20, 0};
  o.gpu = GpuUse::if_present;
  RealPlatform p(o);
  auto all = p.memory().allocate(Tier::device, 1 << 20, "all");
  ASSERT_TRUE(all.has_value());
  EXPECT_FALSE(p.memory().allocate(Tier::device, 1, "more").has_value());
  p.memory().release(*all);
  EXPECT_EQ(p.memory().usage(Tier::device).resident, 0u);
}

}  // namespace
}  // namespace asteria::real

#endif  // ASTERIA_HAVE_CUDA

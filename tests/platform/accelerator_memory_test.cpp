// RealMemory with an accelerator's memory as the device tier (an emulated one: host RAM at
// addresses that fault when the host touches them): device regions have a device address and
// no host address, their bytes go in and out by Memory::write / read and by copies between
// tiers, and the platform's math for the device tier is the accelerator's.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "core/real/real_platform.hpp"
#include "tests/common/emulated_accelerator.hpp"
#include "tests/platform/in_memory_nvme_tier.hpp"

namespace asteria::real {
namespace {

using platform::Tier;

struct Machine {
  Machine() : accelerator(std::make_shared<test::EmulatedAccelerator>()), platform([&] {
    RealPlatformOptions o;
    o.memory.budgets = {1 << 20, 1 << 20, 1 << 20};
    o.accelerator = accelerator;
    o.nvme = &nvme;
    return o;
  }()) {}
  testing::InMemoryNvmeTier nvme;
  std::shared_ptr<test::EmulatedAccelerator> accelerator;
  RealPlatform platform;
};

std::vector<std::byte> pattern(std::size_t n, int seed) {
  std::vector<std::byte> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((i * 31 + static_cast<std::size_t>(seed)) & 0xff);
  return v;
}

TEST(AcceleratorMemory, DeviceRegionsHaveADeviceAddressAndNoHostAddress) {
  Machine m;
  RealMemory& memory = m.platform.real_memory();
  ASSERT_TRUE(memory.device_is_gpu());
  platform::Allocation device(memory, *memory.allocate(Tier::device, 4096, "d"));
  platform::Allocation host(memory, *memory.allocate(Tier::host, 4096, "h"));
  EXPECT_EQ(device.host_address(), nullptr);
  ASSERT_NE(device.address(), nullptr);
  EXPECT_TRUE(test::disguised(device.address()));
  EXPECT_EQ(host.address(), host.host_address());
  EXPECT_FALSE(test::disguised(host.address()));
  EXPECT_EQ(&m.platform.math(Tier::device), &m.accelerator->math());
  EXPECT_FALSE(m.platform.math(Tier::device).host_addressable());
  EXPECT_TRUE(m.platform.math(Tier::host).host_addressable());
}

TEST(AcceleratorMemory, BytesGoInAndOutByWriteAndReadAndMoveBetweenTiers) {
  Machine m;
  RealMemory& memory = m.platform.real_memory();
  const std::size_t n = 3000;
  platform::Allocation device(memory, *memory.allocate(Tier::device, n, "d"));
  platform::Allocation host(memory, *memory.allocate(Tier::host, n, "h"));
  platform::Allocation nvme(memory, *memory.allocate(Tier::nvme, n, "n"));
  const std::vector<std::byte> in = pattern(n, 7);
  ASSERT_TRUE(memory.write(device.region(), in).ok());
  std::vector<std::byte> out(n);
  ASSERT_TRUE(memory.read(device.region(), out).ok());
  EXPECT_EQ(out, in);
  // device -> nvme -> host: the bytes arrive where the host can read them.
  ASSERT_TRUE(memory.copy(device.region(), nvme.region()).status().ok());
  ASSERT_TRUE(memory.copy(nvme.region(), host.region()).status().ok());
  EXPECT_EQ(std::memcmp(host.host_address(), in.data(), n), 0);
  // host -> device, then read back.
  const std::vector<std::byte> other = pattern(n, 11);
  std::memcpy(host.host_address(), other.data(), n);
  ASSERT_TRUE(memory.copy(host.region(), device.region()).status().ok());
  ASSERT_TRUE(memory.read(device.region(), out).ok());
  EXPECT_EQ(out, other);
  EXPECT_GE(m.accelerator->emulated_memory().copies(), 4);
}

TEST(AcceleratorMemory, ReadAndWriteCheckSizesAndRefuseNvmeRegions) {
  Machine m;
  RealMemory& memory = m.platform.real_memory();
  platform::Allocation device(memory, *memory.allocate(Tier::device, 64, "d"));
  platform::Allocation nvme(memory, *memory.allocate(Tier::nvme, 64, "n"));
  std::vector<std::byte> too_many(65);
  const Status status = memory.write(device.region(), too_many);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.reason().find("'d'"), std::string::npos) << status.reason();
  EXPECT_FALSE(memory.read(device.region(), too_many).ok());
  std::vector<std::byte> some(8);
  EXPECT_THROW((void)memory.write(nvme.region(), some), std::logic_error);
  EXPECT_THROW((void)memory.read(nvme.region(), some), std::logic_error);
}

}  // namespace
}  // namespace asteria::real

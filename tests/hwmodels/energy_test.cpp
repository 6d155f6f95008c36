// A unit's energy from its resources' power and busy time, worked by hand.
#include <gtest/gtest.h>

#include "hwmodels/energy.hpp"

namespace asteria::hw {
namespace {

Quantity watts(double w) { return {w, Provenance::derived, "a test figure"}; }

HardwareProfile two_gpu_node() {
  HardwareProfile p;
  p.node.units_per_node = {2.0, Provenance::derived, "two units a node"};
  p.node.nics_per_node = {1.0, Provenance::derived, "one NIC a node"};
  PowerSpec& w = p.power;
  w.gpu_idle = watts(50);
  w.gpu_busy = watts(400);
  w.cpu_idle = watts(20);
  w.cpu_core_busy = watts(3);
  w.memory = watts(10);
  w.nvme_idle = watts(4);
  w.nvme_busy = watts(12);
  w.nic_idle = watts(10);
  w.nic_busy = watts(30);
  return p;
}

TEST(Energy, EachResourceDrawsItsIdlePowerThroughoutAndItsBusyPowerWhileItWorks) {
  const HardwareProfile p = two_gpu_node();
  platform::ResourceBusy busy;
  busy.device_s = 6.0;      // of a 10 s interval
  busy.host_core_s = 15.0;  // e.g. 3 workers for 5 s
  busy.nvme_s = 2.0;
  busy.network_s = 4.0;
  const Energy one_node = unit_energy(p, 10.0, busy, 1);
  EXPECT_DOUBLE_EQ(one_node.device_j, 50 * 10 + (400 - 50) * 6);  // 2600
  EXPECT_DOUBLE_EQ(one_node.host_j, 20 * 10 + 3 * 15);             // 245
  EXPECT_DOUBLE_EQ(one_node.memory_j, 10 * 10);                    // 100
  EXPECT_DOUBLE_EQ(one_node.storage_j, 4 * 10 + (12 - 4) * 2);     // 56
  // Half a NIC (one a node, two units), idle: inside one node collectives travel over NVLink.
  EXPECT_DOUBLE_EQ(one_node.network_j, 10 * 0.5 * 10);             // 50
  EXPECT_DOUBLE_EQ(one_node.total_j(), 2600 + 245 + 100 + 56 + 50);
  // Across nodes the NIC share works while the unit's collectives run.
  const Energy two_nodes = unit_energy(p, 10.0, busy, 2);
  EXPECT_DOUBLE_EQ(two_nodes.network_j, 10 * 0.5 * 10 + (30 - 10) * 0.5 * 4);  // 90
  EXPECT_DOUBLE_EQ(two_nodes.device_j, one_node.device_j);
}

// A package cap bounds GPU, CPU and memory together: scaled down alike, the excess reported;
// NVMe and NICs lie outside the package.
TEST(Energy, APackageCapBoundsTheMeanDrawOfGpuCpuAndMemory) {
  HardwareProfile p = two_gpu_node();
  platform::ResourceBusy busy;
  busy.device_s = 6.0;
  busy.host_core_s = 15.0;
  busy.nvme_s = 2.0;
  p.power.package_cap = watts(189);  // 1890 J over 10 s against the 2600 + 245 + 100 = 2945 drawn
  const Energy capped = unit_energy(p, 10.0, busy, 1);
  const double scale = 1890.0 / 2945.0;
  EXPECT_DOUBLE_EQ(capped.device_j, 2600 * scale);
  EXPECT_DOUBLE_EQ(capped.host_j, 245 * scale);
  EXPECT_DOUBLE_EQ(capped.memory_j, 100 * scale);
  EXPECT_NEAR(capped.device_j + capped.host_j + capped.memory_j, 1890.0, 1e-9);
  EXPECT_DOUBLE_EQ(capped.over_cap_j, 2945.0 - 1890.0);
  EXPECT_DOUBLE_EQ(capped.storage_j, 56);  // outside the package
  EXPECT_DOUBLE_EQ(capped.network_j, 50);
  // A cap above the draw changes nothing.
  p.power.package_cap = watts(300);
  const Energy free = unit_energy(p, 10.0, busy, 1);
  EXPECT_DOUBLE_EQ(free.device_j, 2600);
  EXPECT_DOUBLE_EQ(free.over_cap_j, 0.0);
}

TEST(Energy, BusyTimeBeyondTheIntervalCountsAsTheWholeInterval) {
  const HardwareProfile p = two_gpu_node();
  platform::ResourceBusy busy;
  busy.device_s = 12.0;  // rounding past a 10 s interval
  busy.nvme_s = -1.0;
  const Energy e = unit_energy(p, 10.0, busy, 1);
  EXPECT_DOUBLE_EQ(e.device_j, 400 * 10);
  EXPECT_DOUBLE_EQ(e.storage_j, 4 * 10);
}

TEST(Energy, AProfileWithoutPowerHasNone) {
  const HardwareProfile p;
  EXPECT_FALSE(p.power.has_power());
  platform::ResourceBusy busy;
  busy.device_s = 1.0;
  EXPECT_DOUBLE_EQ(unit_energy(p, 1.0, busy, 1).total_j(), 0.0);
  EXPECT_TRUE(two_gpu_node().power.has_power());
}

TEST(Energy, PartsAddUp) {
  Energy a{1, 2, 3, 4, 5};
  a += Energy{10, 20, 30, 40, 50};
  EXPECT_DOUBLE_EQ(a.total_j(), 165);
  EXPECT_DOUBLE_EQ(a.storage_j, 44);
}

}  // namespace
}  // namespace asteria::hw

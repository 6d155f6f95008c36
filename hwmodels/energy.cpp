#include "hwmodels/energy.hpp"

#include <algorithm>

namespace asteria::hw {

Energy& Energy::operator+=(const Energy& other) noexcept {
  device_j += other.device_j;
  host_j += other.host_j;
  memory_j += other.memory_j;
  storage_j += other.storage_j;
  network_j += other.network_j;
  over_cap_j += other.over_cap_j;
  return *this;
}

Energy unit_energy(const HardwareProfile& profile, double seconds, const platform::ResourceBusy& busy, int nodes) {
  const PowerSpec& p = profile.power;
  const double nics = profile.node.nics_per_node.value / std::max(1, profile.units_per_node());
  // A resource is never busy longer than the interval (the device stream's records could only
  // exceed it by rounding).
  const auto within = [seconds](double s) { return std::clamp(s, 0.0, seconds); };
  Energy e;
  e.device_j = p.gpu_idle.value * seconds + (p.gpu_busy.value - p.gpu_idle.value) * within(busy.device_s);
  e.host_j = p.cpu_idle.value * seconds + p.cpu_core_busy.value * std::max(0.0, busy.host_core_s);
  e.memory_j = p.memory.value * seconds;
  e.storage_j = p.nvme_idle.value * seconds + (p.nvme_busy.value - p.nvme_idle.value) * within(busy.nvme_s);
  e.network_j = p.nic_idle.value * nics * seconds;
  if (nodes > 1) e.network_j += (p.nic_busy.value - p.nic_idle.value) * nics * within(busy.network_s);
  const double package = e.device_j + e.host_j + e.memory_j;
  if (const double most = p.package_cap.value * seconds; p.package_cap.value > 0.0 && package > most) {
    const double scale = most / package;
    e.device_j *= scale;
    e.host_j *= scale;
    e.memory_j *= scale;
    e.over_cap_j = package - most;
  }
  return e;
}

}  // namespace asteria::hw

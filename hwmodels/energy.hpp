#pragma once
// The energy a unit (one GPU and its share of a node) uses over an interval, from the power its
// resources draw (PowerSpec) and how long each was busy (platform::ResourceBusy): every resource
// draws its idle power for the whole interval and its busy power while it works,
//   E = Σ idle · T + Σ (busy − idle) · busy seconds,
// where the unit holds its GPU, CPU, host memory and NVMe drive (the profile describes each per
// unit) and 1/units_per_node of the node's NICs; a busy host worker adds cpu_core_busy per
// core-second, and a collective the NICs' busy power only when the run spans nodes (inside a
// node it travels over NVLink, whose power the GPUs' figures hold). Where GPU, CPU and memory share
// one package with a power cap (package_cap, a SoC's TDP), their joules over the interval are
// at most cap · T, scaled down together: a bound on the mean draw. The firmware meets the cap by
// lowering clocks, which lengthens the run; that is not modelled (the run's time is the cost
// model's), so a capped figure is the least the unit can draw over that time.
#include "core/platform/resource_busy.hpp"
#include "hwmodels/profile.hpp"

namespace asteria::hw {

struct Energy {
  double device_j = 0.0;   // the GPU
  double host_j = 0.0;     // its CPU: idle, and the workers' cores
  double memory_j = 0.0;   // its host memory
  double storage_j = 0.0;  // the NVMe drive
  double network_j = 0.0;  // the NICs' share
  double over_cap_j = 0.0; // what GPU, CPU and memory would have drawn past the package cap (taken off)
  double total_j() const noexcept { return device_j + host_j + memory_j + storage_j + network_j; }
  Energy& operator+=(const Energy& other) noexcept;
};

// One unit over `seconds`, its resources busy as `busy` says; `nodes`: how many nodes the run spans.
Energy unit_energy(const HardwareProfile& profile, double seconds, const platform::ResourceBusy& busy, int nodes);

}  // namespace asteria::hw

#pragma once
// The simulated machine, built in C++ from a hardware profile (no platform XML). Per unit u:
//   host  gpu<u>   one core; runs the device stream (a CPU device, profile device: cpu, runs it on
//                  cpu<u> instead, sharing the cores with the host workers; gpu<u> then only ends
//                  the h2d/d2h links, its memory copies)
//   host  cpu<u>   cpu.cores cores; runs the unit's main actor, refresh workers, copy actors;
//                  one pstate per count of other busy cores (cpu.contention_slowdown,
//                  core_load.hpp)
//   disk  nvme<u>  on cpu<u>; read/write bandwidths of the profile (reads and writes share the
//                  larger of the two, SimGrid's default for a disk)
//   link  h2d<u>   cpu<u> -> gpu<u>, one way; d2h<u> the other way (their bandwidths differ)
//   link  hbm<u>   gpu<u> -> gpu<u>: device-to-device copies, gpu.memory_bandwidth / 2 (a copy
//                  reads and writes every byte)
//   link  dram<u>  cpu<u> -> cpu<u>: host-to-host copies, cpu.memory_bandwidth / 2
//   host  hbm-traffic<u>, dram-traffic<u>  one core at gpu.memory_bandwidth, cpu.memory_bandwidth
//                  "flops" (bytes) per second: the memory traffic of kernels and host work runs
//                  there, so concurrent traffic shares the bandwidth (copies use the links)
// Per node k (units k·upn ... k·upn + upn - 1, in a zone "node<k>" with a gateway router):
//   link  nvlink<i>-<j>  gpu<i> -> gpu<j> for units i != j of the node (one per ordered pair)
//   link  nic-up<k>.<j>, nic-down<k>.<j>  NIC j of the node (j < nics_per_node; node.nic
//                  bandwidth and latency each) towards and from the backbone. The unit with local
//                  index l (its place in the node, u - k·upn) uses NIC l % nics_per_node for both
//                  its gpu and cpu hosts, as each GH200 of an Alps node has its own Slingshot-11
//                  NIC (HARDWARE.md, CSCS Alps documentation: 4 NICs per node). A flow
//                  between nodes goes gpu<u> -> nic-up<k>.<j> -> backbone -> nic-down<k'>.<j'> ->
//                  gpu<u'>. (Only when the simulation spans several nodes.)
//   link  backbone  between node gateways, non-blocking (a fat pipe that never limits a flow)
// Every host runs at kSpeed "flops" per second per core, so an execution of `seconds` of
// modelled time has the amount seconds · kSpeed.
#include <vector>

#include <simgrid/s4u.hpp>

#include "sim/simulation_options.hpp"

namespace asteria::sim {

inline constexpr double kSpeed = 1e9;

struct UnitResources {
  int unit = 0;
  int node = 0;
  simgrid::s4u::Host* gpu = nullptr;
  simgrid::s4u::Host* cpu = nullptr;
  simgrid::s4u::Disk* nvme = nullptr;
  simgrid::s4u::Link* h2d = nullptr;
  simgrid::s4u::Link* d2h = nullptr;
  simgrid::s4u::Link* device_memory = nullptr;  // hbm<u>
  simgrid::s4u::Link* host_memory = nullptr;    // dram<u>
  // The memories as shared resources for kernels' traffic: one core each, speed = bandwidth.
  simgrid::s4u::Host* gpu_memory = nullptr;     // host hbm-traffic<u>
  simgrid::s4u::Host* cpu_memory = nullptr;     // host dram-traffic<u>
  // The unit's NIC towards and from the backbone; null when the simulation has one node.
  simgrid::s4u::Link* nic_up = nullptr;         // nic-up<k>.<j>
  simgrid::s4u::Link* nic_down = nullptr;       // nic-down<k>.<j>
};

struct Topology {
  std::vector<UnitResources> units;
  int nodes = 0;
  int nics_per_node = 1;
  bool nic_beside_gpu = false;  // the profile's node.nic_beside_gpu
};

// Builds the platform into the (already created and configured) engine and seals it.
Topology build_topology(const SimulationOptions& options);

// The NIC (j in nic-up<k>.<j>) that `unit` uses: its local index modulo the node's NICs.
int nic_of_unit(const hw::HardwareProfile& profile, int unit);

}  // namespace asteria::sim

#pragma once
// A made-up unit with round numbers, so the tests' expected times can be worked out by hand.
#include "hwmodels/profile.hpp"
#include "sim/simulation_options.hpp"

namespace asteria::sim::testing {

inline hw::Quantity q(double value) { return {value, hw::Provenance::derived, "test profile"}; }

inline hw::HardwareProfile tiny_profile() {
  hw::HardwareProfile p;
  p.name = "tiny";
  p.description = "round numbers for hand-computed expectations";
  p.origin = "tests/sim/tiny_profile.hpp";
  p.gpu.model = "tiny gpu";
  p.gpu.fp32_flops = q(1e12);
  p.gpu.bf16_flops = q(4e12);
  p.gpu.gemm_efficiency = q(0.5);
  p.gpu.memory_bytes = q(1e6);
  p.gpu.memory_bandwidth = q(2e11);
  p.gpu.launch_latency = q(1e-5);
  p.gpu.eigh_seconds_per_n3 = q(1e-9);
  p.gpu.qr_seconds_per_n3 = q(5e-10);
  p.cpu.model = "tiny cpu";
  p.cpu.cores = q(2);
  p.cpu.gemm_flops_per_core = q(1e10);
  p.cpu.memory_bandwidth = q(5e10);
  p.cpu.eigh_seconds_per_n3 = q(2e-9);
  p.cpu.qr_seconds_per_n3 = q(1e-9);
  p.cpu.threads_per_worker = q(1);
  p.host_memory.bytes = q(4e6);
  p.host_memory.usable_fraction = q(0.5);
  p.host_to_device = {q(1e9), q(1e-6)};
  p.device_to_host = {q(5e8), q(2e-6)};
  p.nvme.bytes = q(1e7);
  p.nvme.read_bandwidth = q(2e9);
  p.nvme.write_bandwidth = q(1e9);
  p.nvme.latency = q(1e-4);
  p.node.units_per_node = q(2);
  p.node.gpu_link = {q(1e10), q(1e-6)};
  p.node.nics_per_node = q(1);
  p.node.nic = {q(1e9), q(5e-6)};
  return p;
}

inline SimulationOptions tiny_options(platform::Numerics numerics = platform::Numerics::values) {
  SimulationOptions o;
  o.profile = tiny_profile();
  o.numerics = numerics;
  return o;
}

// Within a relative 1e-9 of what was worked out by hand.
inline double tolerance(double expected) { return 1e-9 * expected; }

}  // namespace asteria::sim::testing

#pragma once
// The fields of a profile, described once for the reader and the writer, so the two cannot
// drift apart. A visitor V provides text, flag, optional_flag, quantity, optional_quantity (absent: the field
// keeps its default), optional_integer, device_kind, section, optional_section (absent: its
// fields keep their defaults) and size_classes (a section of
// per-size-class quantities that may also be written as one quantity for every class).
#include <string_view>

#include "hwmodels/profile.hpp"
#include "hwmodels/units.hpp"

namespace asteria::hw::schema {

// What a quantity measures: fixes its unit class and the values it may take.
enum class Measure {
  bytes,          // capacity, > 0
  bandwidth,      // bytes/s, > 0
  flop_rate,      // FLOP/s, > 0
  latency,        // s, >= 0
  coefficient,    // c of c·n³, in s, > 0
  fraction,       // dimensionless, in (0, 1]
  count,          // integer >= 1
  count_or_zero,  // integer >= 0
  slowdown,       // dimensionless, >= 0 (0.25: 25% slower)
  power,          // W, >= 0
};

constexpr UnitClass unit_class_of(Measure measure) noexcept {
  switch (measure) {
    case Measure::bytes: return UnitClass::bytes;
    case Measure::bandwidth: return UnitClass::bandwidth;
    case Measure::flop_rate: return UnitClass::flop_rate;
    case Measure::latency:
    case Measure::coefficient: return UnitClass::time;
    case Measure::fraction:
    case Measure::count:
    case Measure::count_or_zero:
    case Measure::slowdown: return UnitClass::dimensionless;
    case Measure::power: return UnitClass::power;
  }
  return UnitClass::dimensionless;
}

// Coefficients of c·n³ read best as plain seconds ("1.2e-10 s"); the rest pick their unit.
constexpr std::string_view preferred_unit(Measure measure) noexcept {
  return measure == Measure::coefficient ? "s" : "";
}

template <class V>
void describe(V& v, LinkSpec& link) {
  v.quantity("bandwidth", link.bandwidth, Measure::bandwidth);
  v.quantity("latency", link.latency, Measure::latency);
}

template <class V>
void describe(V& v, GemmEfficiency& efficiency) {
  for (std::size_t i = 0; i < GemmEfficiency::kClasses; ++i)
    v.quantity(GemmEfficiency::kNames[i], efficiency.by_class(i), Measure::fraction);
}

// `device`: a CPU device must say how many cores its stream occupies; a GPU's default is one.
template <class V>
void describe(V& v, GpuSpec& gpu, DeviceKind device) {
  v.text("model", gpu.model);
  v.quantity("fp32_flops", gpu.fp32_flops, Measure::flop_rate);
  v.quantity("bf16_flops", gpu.bf16_flops, Measure::flop_rate);
  v.size_classes("gemm_efficiency", gpu.gemm_efficiency, [&](V& s) { describe(s, gpu.gemm_efficiency); });
  v.quantity("memory_bytes", gpu.memory_bytes, Measure::bytes);
  v.quantity("memory_bandwidth", gpu.memory_bandwidth, Measure::bandwidth);
  v.quantity("launch_latency", gpu.launch_latency, Measure::latency);
  v.quantity("eigh_seconds_per_n3", gpu.eigh_seconds_per_n3, Measure::coefficient);
  v.quantity("qr_seconds_per_n3", gpu.qr_seconds_per_n3, Measure::coefficient);
  if (device == DeviceKind::cpu) v.quantity("device_threads", gpu.device_threads, Measure::count);
  else v.optional_quantity("device_threads", gpu.device_threads, Measure::count);
  v.optional_quantity("elementwise_seconds_per_flop", gpu.elementwise_seconds_per_flop, Measure::latency);
  v.optional_quantity("wake_latency", gpu.wake_latency, Measure::latency);
}

template <class V>
void describe(V& v, CpuSpec& cpu) {
  v.text("model", cpu.model);
  v.quantity("cores", cpu.cores, Measure::count);
  v.quantity("gemm_flops_per_core", cpu.gemm_flops_per_core, Measure::flop_rate);
  v.quantity("memory_bandwidth", cpu.memory_bandwidth, Measure::bandwidth);
  v.quantity("eigh_seconds_per_n3", cpu.eigh_seconds_per_n3, Measure::coefficient);
  v.quantity("qr_seconds_per_n3", cpu.qr_seconds_per_n3, Measure::coefficient);
  v.quantity("threads_per_worker", cpu.threads_per_worker, Measure::count);
  v.optional_quantity("task_latency", cpu.task_latency, Measure::latency);  // older profiles lack it
  v.optional_quantity("issue_latency", cpu.issue_latency, Measure::latency);
  v.optional_quantity("elementwise_seconds_per_flop", cpu.elementwise_seconds_per_flop, Measure::latency);
  v.optional_quantity("contention_slowdown", cpu.contention_slowdown, Measure::slowdown);
}

template <class V>
void describe(V& v, HostMemorySpec& memory) {
  v.quantity("bytes", memory.bytes, Measure::bytes);
  v.quantity("usable_fraction", memory.usable_fraction, Measure::fraction);
  v.flag("unified", memory.unified);
}

template <class V>
void describe(V& v, NvmeSpec& nvme) {
  v.quantity("bytes", nvme.bytes, Measure::bytes);
  v.quantity("read_bandwidth", nvme.read_bandwidth, Measure::bandwidth);
  v.quantity("write_bandwidth", nvme.write_bandwidth, Measure::bandwidth);
  v.quantity("latency", nvme.latency, Measure::latency);
}

template <class V>
void describe(V& v, PowerSpec& power) {
  v.quantity("gpu_idle", power.gpu_idle, Measure::power);
  v.quantity("gpu_busy", power.gpu_busy, Measure::power);
  v.quantity("cpu_idle", power.cpu_idle, Measure::power);
  v.quantity("cpu_core_busy", power.cpu_core_busy, Measure::power);
  v.quantity("memory", power.memory, Measure::power);
  v.quantity("nvme_idle", power.nvme_idle, Measure::power);
  v.quantity("nvme_busy", power.nvme_busy, Measure::power);
  v.quantity("nic_idle", power.nic_idle, Measure::power);
  v.quantity("nic_busy", power.nic_busy, Measure::power);
  v.optional_quantity("package_cap", power.package_cap, Measure::power);
}

template <class V>
void describe(V& v, NodeSpec& node) {
  v.quantity("units_per_node", node.units_per_node, Measure::count);
  v.section("gpu_link", [&](V& s) { describe(s, node.gpu_link); });
  v.quantity("nics_per_node", node.nics_per_node, Measure::count_or_zero);
  v.section("nic", [&](V& s) { describe(s, node.nic); });
  v.optional_flag("nic_beside_gpu", node.nic_beside_gpu, false);
  v.optional_integer("nodes", node.nodes, 1);  // a study parameter; rarely written
}

template <class V>
void describe(V& v, HardwareProfile& profile) {
  v.text("name", profile.name);
  v.text("description", profile.description);
  v.device_kind("device", profile.device);  // before gpu, whose fields depend on it
  v.section("gpu", [&](V& s) { describe(s, profile.gpu, profile.device); });
  v.section("cpu", [&](V& s) { describe(s, profile.cpu); });
  v.section("host_memory", [&](V& s) { describe(s, profile.host_memory); });
  v.section("host_to_device", [&](V& s) { describe(s, profile.host_to_device); });
  v.section("device_to_host", [&](V& s) { describe(s, profile.device_to_host); });
  v.section("nvme", [&](V& s) { describe(s, profile.nvme); });
  v.section("node", [&](V& s) { describe(s, profile.node); });
  // Older profiles have none: every resource then draws nothing, and runs report no energy.
  v.optional_section("power", [&](V& s) { describe(s, profile.power); });
}

}  // namespace asteria::hw::schema

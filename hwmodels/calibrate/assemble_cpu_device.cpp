// A CPU-device profile: the device stream is this machine's cores running OpenBLAS, so the gpu
// section, the host links and the node are measured here or follow from the machine itself.
#include <cmath>
#include <string>

#include "hwmodels/calibrate/assembler.hpp"

namespace asteria::hw::calibrate::assembly {
namespace {

// The size classes as fractions of the stream's peak (its fastest SGEMM rate), the per-call
// overhead taken out as for a GPU's launch latency; never above 1.
void assemble_classes(const CpuDeviceMeasurements& d, const Assembler& a, const HardwareProfile& base,
                      HardwareProfile& p) {
  const double peak = p.gpu.fp32_flops.value;
  const double launch = p.gpu.launch_latency.value;
  for (std::size_t i = 0; i < GemmEfficiency::kClasses; ++i) {
    const SizedRate& sized = d.sgemm_by_class[i];
    if (!sized.rate.valid()) {
      p.gpu.gemm_efficiency.by_class(i) = a.copied(base.gpu.gemm_efficiency.by_class(i));
      continue;
    }
    const double efficiency = class_efficiency(sized, peak, launch);
    p.gpu.gemm_efficiency.by_class(i) = a.derived(
        std::min(efficiency, 1.0),
        sized.rate.method + ": " + number("%.4g GFLOP/s", sized.rate.value * 1e-9) + ", " +
            duration(sized.seconds_per_product()) + " per product, less the " + duration(launch) +
            " per-call overhead, / the " + number("%.4g GFLOP/s", peak * 1e-9) +
            " peak" + (efficiency > 1.0 ? " (capped at 1)" : "") + class_size_note(sized, i));
  }
}

}  // namespace

void assemble_cpu_device(const Measurements& m, const Assembler& a, const HardwareProfile& base, HardwareProfile& p) {
  const CpuDeviceMeasurements& d = m.cpu_device;
  const std::string threads = std::to_string(d.threads) + (d.threads == 1 ? " thread" : " threads");
  p.device = DeviceKind::cpu;
  p.gpu.model = m.host.cpu_model + " (CPU device: OpenBLAS on " + threads + ")";
  p.gpu.device_threads = Quantity{static_cast<double>(d.threads), Provenance::derived,
                                  "the OpenBLAS threads the device stream was measured on (asteria calibrate "
                                  "--device-threads; default all cores)"};

  // The peak is the fastest SGEMM measured on the stream's threads: which one, and the others.
  std::string rates = d.sgemm_sized.method + ": " + number("%.4g GFLOP/s", d.sgemm_sized.value * 1e-9);
  for (const SizedRate& sized : d.sgemm_by_class)
    rates += "; n=" + std::to_string(sized.n) + ": " + number("%.4g GFLOP/s", sized.rate.value * 1e-9);
  const double peak = d.peak_flops();
  if (peak > 0.0) {
    p.gpu.fp32_flops = a.measured(peak, "the fastest of these SGEMM rates on " + threads + ": " + rates);
    p.gpu.bf16_flops = a.derived(peak, "equal to gpu.fp32_flops: a CPU device computes reduced-precision GEMMs "
                                       "in fp32");
  } else {
    p.gpu.fp32_flops = a.copied(base.gpu.fp32_flops, "no SGEMM rate measured");
    p.gpu.bf16_flops = a.copied(base.gpu.bf16_flops, "no SGEMM rate measured");
  }
  p.gpu.launch_latency = a.measured_or_copied(d.call_latency, base.gpu.launch_latency);
  p.gpu.wake_latency = a.measured_or_copied(d.wake_latency, base.gpu.wake_latency);
  // The optimizer's elementwise kernels run on the stream's own thread.
  p.gpu.elementwise_seconds_per_flop = a.measured_or_copied(m.elementwise, base.gpu.elementwise_seconds_per_flop);
  assemble_classes(d, a, base, p);

  // The device computes in host memory: unified, its share all the usable memory.
  p.host_memory.unified = true;
  const double pool = p.host_memory.bytes.value * p.host_memory.usable_fraction.value;
  p.gpu.memory_bytes = a.derived(pool, "a CPU device's memory is the usable host memory: host_memory.bytes x "
                                       "usable_fraction");
  p.gpu.memory_bytes.value = rounded_down(pool);  // within the pool, as the loader checks
  p.gpu.memory_bandwidth = a.measured_or_copied(d.memory_bandwidth, base.gpu.memory_bandwidth);
  p.gpu.eigh_seconds_per_n3 = a.fitted_or_copied(d.eigh, base.gpu.eigh_seconds_per_n3);
  p.gpu.qr_seconds_per_n3 = a.fitted_or_copied(d.qr, base.gpu.qr_seconds_per_n3);

  // Moving a tensor between the device and host tiers is a memory copy on one thread.
  const std::string copy_note = " (a CPU device's host link is a memory copy)";
  p.host_to_device = {a.measured_or_copied(m.memcpy_one_thread, base.host_to_device.bandwidth, 1.0, copy_note),
                      a.measured_or_copied(d.copy_latency, base.host_to_device.latency, 1.0, copy_note)};
  p.device_to_host = p.host_to_device;

  p.node.units_per_node = Quantity{1.0, Provenance::derived, "a CPU-device profile describes this one machine"};
  p.node.gpu_link = a.copied(base.node.gpu_link, "unused: one unit per node");
  p.node.nics_per_node = Quantity{0.0, Provenance::derived, "a CPU-device profile describes one machine, no NIC"};
  p.node.nic = a.copied(base.node.nic, "unused: no NIC");
}

}  // namespace asteria::hw::calibrate::assembly

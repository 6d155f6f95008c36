// Profile assembly: measured fields say how and where they were measured; everything else is
// copied from the base profile and says so.
#include <algorithm>
#include <cmath>
#include <string>

#include "hwmodels/calibrate/assembler.hpp"
#include "hwmodels/calibrate/calibration.hpp"

namespace asteria::hw::calibrate {
namespace {

using assembly::Assembler;
using assembly::number;

void assemble_cpu(const Measurements& m, const Assembler& a, int units, HardwareProfile& p) {
  const std::string per_unit = units > 1 ? ", divided among the " + std::to_string(units) + " GPUs of this host" : "";
  p.cpu.model = m.host.cpu_model;
  p.cpu.cores = a.measured(std::max(1, m.host.cores / units),
                           "std::thread::hardware_concurrency() = " + std::to_string(m.host.cores) + per_unit);
  const double all_per_core = m.sgemm_all_threads.value / std::max(1, m.host.cores);
  p.cpu.gemm_flops_per_core = a.measured_or_copied(
      m.sgemm_one_thread, p.cpu.gemm_flops_per_core, 1.0,
      m.sgemm_all_threads.valid()
          ? "; " + m.sgemm_all_threads.method + ": " + number("%.4g GFLOP/s", m.sgemm_all_threads.value * 1e-9) +
                ", " + number("%.4g GFLOP/s", all_per_core * 1e-9) + " per core"
          : std::string());
  // The cores together reach at least what one reaches: when all threads copied slower than one
  // (a busy machine), the one-thread figure is the better estimate, and the source says so.
  const bool all_faster = m.memcpy_all_threads.valid() &&
                          !(m.memcpy_one_thread.valid() && m.memcpy_one_thread.value > m.memcpy_all_threads.value);
  const Measured& copy = all_faster ? m.memcpy_all_threads : m.memcpy_one_thread;
  const Measured& other = all_faster ? m.memcpy_one_thread : m.memcpy_all_threads;
  p.cpu.memory_bandwidth = a.measured_or_copied(
      copy, p.cpu.memory_bandwidth, units,
      per_unit + (other.valid() ? "; the faster of this and " + other.method + ": " +
                                      number("%.4g GB/s", other.value * 1e-9)
                                : std::string()));
  // A ratio below 1 (noise on a machine whose cores do not slow one another) is no slowdown.
  p.cpu.contention_slowdown =
      m.core_contention.valid()
          ? a.measured(std::max(0.0, m.core_contention.value - 1.0),
                       m.core_contention.method + ": " + number("%.3f", m.core_contention.value) + " times as long")
          : a.copied(p.cpu.contention_slowdown);
  p.cpu.eigh_seconds_per_n3 = a.fitted_or_copied(m.eigh, p.cpu.eigh_seconds_per_n3);
  p.cpu.qr_seconds_per_n3 = a.fitted_or_copied(m.qr, p.cpu.qr_seconds_per_n3);
  p.cpu.task_latency = a.measured_or_copied(m.task_latency, p.cpu.task_latency);
  p.cpu.elementwise_seconds_per_flop = a.measured_or_copied(m.elementwise, p.cpu.elementwise_seconds_per_flop);
  // The c·n³ coefficients above are for one BLAS thread, as each refresh worker runs.
  p.cpu.threads_per_worker = Quantity{1.0, Provenance::derived,
                                      "eigh and QR were timed on 1 BLAS thread, the refresh workers' setting"};
  if (m.host.memory_bytes > 0.0)
    p.host_memory.bytes = a.measured(m.host.memory_bytes / units,
                                     "sysconf(_SC_PHYS_PAGES) x sysconf(_SC_PAGE_SIZE)" + per_unit);
  else
    p.host_memory.bytes = a.copied(p.host_memory.bytes);
  p.host_memory.usable_fraction = a.copied(p.host_memory.usable_fraction);
}

// Each size class from the BF16 GEMM measured at its size, as a fraction of the base's BF16 peak
// once the launch latency (charged on top by the cost model) is taken out. A fraction above 1
// means the base's peak is another GPU's: the base's class is kept, and says why.
void assemble_gpu_efficiency(const GpuMeasurements& g, const Assembler& a, const HardwareProfile& base,
                             HardwareProfile& p) {
  const double peak = base.gpu.bf16_flops.value;
  const double launch = p.gpu.launch_latency.value;
  const std::string fp32_text =
      g.sgemm_flops.valid() ? "; " + g.sgemm_flops.method + ": " + number("%.4g TFLOP/s", g.sgemm_flops.value * 1e-12) +
                                  " = " + number("%.3f", g.sgemm_flops.value / base.gpu.fp32_flops.value) +
                                  " of the FP32 peak"
                            : std::string();
  for (std::size_t i = 0; i < GemmEfficiency::kClasses; ++i) {
    const SizedRate& sized = g.bf16_gemm_by_class[i];
    const Quantity& fallback = base.gpu.gemm_efficiency.by_class(i);
    if (!sized.rate.valid()) {
      p.gpu.gemm_efficiency.by_class(i) = a.copied(fallback);
      continue;
    }
    const double efficiency = assembly::class_efficiency(sized, peak, launch);
    const std::string text =
        sized.rate.method + ": " + number("%.4g TFLOP/s", sized.rate.value * 1e-12) + ", " +
        assembly::duration(sized.seconds_per_product()) + " per product, less the " + assembly::duration(launch) +
        " launch latency, / " + number("%.4g TFLOP/s", peak * 1e-12) +
        " BF16 peak of " + a.base_label() + assembly::class_size_note(sized, i) + fp32_text;
    p.gpu.gemm_efficiency.by_class(i) =
        efficiency <= 1.0
            ? a.derived(efficiency, text)
            : a.copied(fallback, "the measured rate exceeds the base's peak, which is then for another GPU; " + text);
  }
}

void assemble_gpu(const Measurements& m, const Assembler& a, const HardwareProfile& base,
                  const std::string& base_label, HardwareProfile& p) {
  const GpuMeasurements& g = m.gpu;
  if (!g.measured()) {
    const std::string why = "no GPU measured on " + m.host.host + ": " + g.presence.reason;
    p.gpu.model = base.gpu.model + " (not measured: copied from " + base_label + ")";
    p.gpu.fp32_flops = a.copied(base.gpu.fp32_flops, why);
    p.gpu.bf16_flops = a.copied(base.gpu.bf16_flops, why);
    for (std::size_t i = 0; i < GemmEfficiency::kClasses; ++i)
      p.gpu.gemm_efficiency.by_class(i) = a.copied(base.gpu.gemm_efficiency.by_class(i), why);
    p.gpu.memory_bytes = a.copied(base.gpu.memory_bytes, why);
    p.gpu.memory_bandwidth = a.copied(base.gpu.memory_bandwidth, why);
    p.gpu.launch_latency = a.copied(base.gpu.launch_latency, why);
    p.gpu.eigh_seconds_per_n3 = a.copied(base.gpu.eigh_seconds_per_n3, why);
    p.gpu.qr_seconds_per_n3 = a.copied(base.gpu.qr_seconds_per_n3, why);
    p.gpu.device_threads = a.copied(base.gpu.device_threads, why);  // the stand-in keeps its device kind
    p.host_to_device = a.copied(base.host_to_device, why);
    p.device_to_host = a.copied(base.device_to_host, why);
    return;
  }
  const std::string peak_note = "a vendor peak; " + base_label + " describes a " + base.gpu.model;
  p.device = DeviceKind::gpu;
  p.gpu.device_threads = GpuSpec{}.device_threads;
  p.gpu.model = g.presence.model;
  p.gpu.fp32_flops = a.copied(base.gpu.fp32_flops, peak_note);
  p.gpu.bf16_flops = a.copied(base.gpu.bf16_flops, peak_note);
  p.gpu.launch_latency = a.measured_or_copied(g.launch_latency, base.gpu.launch_latency);
  assemble_gpu_efficiency(g, a, base, p);
  p.gpu.memory_bytes = a.measured_or_copied(g.memory_bytes, base.gpu.memory_bytes);
  p.gpu.memory_bandwidth = a.measured_or_copied(g.memory_bandwidth, base.gpu.memory_bandwidth);
  p.gpu.eigh_seconds_per_n3 = a.fitted_or_copied(g.eigh, base.gpu.eigh_seconds_per_n3);
  p.gpu.qr_seconds_per_n3 = a.fitted_or_copied(g.qr, base.gpu.qr_seconds_per_n3);
  p.host_to_device = {a.measured_or_copied(g.host_to_device, base.host_to_device.bandwidth),
                      a.measured_or_copied(g.host_to_device_latency, base.host_to_device.latency)};
  p.device_to_host = {a.measured_or_copied(g.device_to_host, base.device_to_host.bandwidth),
                      a.measured_or_copied(g.device_to_host_latency, base.device_to_host.latency)};
}

// On unified memory the GPU's share cannot exceed the usable pool: a base's GPU share (copied,
// or a device's reported total) is capped at the pool measured here.
void cap_unified_share(const Assembler& a, HardwareProfile& p) {
  if (!p.host_memory.unified) return;
  const double pool = p.host_memory.bytes.value * p.host_memory.usable_fraction.value;
  if (p.gpu.memory_bytes.value <= pool) return;
  p.gpu.memory_bytes = a.derived(pool, "unified memory: the GPU's share capped at host_memory.bytes x usable_fraction (" +
                                           number("%.4g GB", p.gpu.memory_bytes.value * 1e-9) + " before: " +
                                           p.gpu.memory_bytes.source + ")");
  p.gpu.memory_bytes.value = assembly::rounded_down(pool);  // rounded() may round up past the pool
}

// The power section per unit (one GPU and its share of the host): what the machine's counters
// measured, the rest copied from the base.
void assemble_power(const Measurements& m, const Assembler& a, int units, const HardwareProfile& base,
                    HardwareProfile& p) {
  const PowerMeasurements& w = m.power;
  const PowerSpec& b = base.power;
  PowerSpec& out = p.power;
  if (!b.has_power() && !w.cpu_idle.valid() && !w.gpu_idle.valid()) return;  // no section, none measured
  out = {a.copied(b.gpu_idle),  a.copied(b.gpu_busy),  a.copied(b.cpu_idle),  a.copied(b.cpu_core_busy),
         a.copied(b.memory),    a.copied(b.nvme_idle), a.copied(b.nvme_busy), a.copied(b.nic_idle),
         a.copied(b.nic_busy),  b.package_cap.value > 0.0 ? a.copied(b.package_cap) : b.package_cap};
  const std::string share = units > 1 ? ", divided over " + std::to_string(units) + " units" : std::string();
  if (w.cpu_idle.valid()) out.cpu_idle = a.measured(w.cpu_idle.value / units, w.cpu_idle.method + share);
  if (w.cpu_idle.valid() && w.cpu_all_cores.valid() && w.cpu_all_cores.value > w.cpu_idle.value)
    out.cpu_core_busy = a.derived((w.cpu_all_cores.value - w.cpu_idle.value) / std::max(1, m.host.cores),
                                  "(" + number("%.1f W", w.cpu_all_cores.value) + " with every core busy: " +
                                      w.cpu_all_cores.method + ") less (" + number("%.1f W", w.cpu_idle.value) +
                                      " at rest), over " + std::to_string(m.host.cores) + " cores");
  const int gpus = m.gpu.measured() ? std::max(1, m.gpu.presence.count) : 0;
  if (gpus == 0 || !w.gpu_idle.valid()) return;
  const double idle_each = w.gpu_idle.value / gpus;
  out.gpu_idle = a.measured(idle_each, w.gpu_idle.method + (gpus > 1 ? ", over " + std::to_string(gpus) + " GPUs" : ""));
  // Device 0 ran the benchmarks while the others rested; their mix (GEMMs, copies, solvers) makes
  // this at most the draw of a GEMM alone.
  const double busy = w.gpu_busy.valid() ? w.gpu_busy.value - (gpus - 1) * idle_each : 0.0;
  if (busy > idle_each)
    out.gpu_busy = a.measured(busy, w.gpu_busy.method + (gpus > 1 ? ", less the other GPUs' rest" : "") +
                                        "; the benchmarks' mean, at most a GEMM's draw");
}

}  // namespace

HardwareProfile assemble_profile(const Measurements& m, const HardwareProfile& base, const std::string& base_label,
                                 const std::string& name) {
  const Assembler a(m, base_label);
  // Host figures are per unit: one GPU and its share of the host.
  const bool cpu_device = m.cpu_device.measured();
  const int units = !cpu_device && m.gpu.measured() ? std::max(1, m.gpu.presence.count) : 1;
  HardwareProfile p = base;
  p.name = name;
  p.origin = "asteria calibrate on " + m.host.host;

  assemble_cpu(m, a, units, p);
  if (cpu_device) assembly::assemble_cpu_device(m, a, base, p);
  else assemble_gpu(m, a, base, base_label, p);

  const std::string in_dir = " in " + m.file_directory.string();
  p.nvme.bytes = a.copied(base.nvme.bytes);
  p.nvme.read_bandwidth = a.measured_or_copied(m.file.read, base.nvme.read_bandwidth, 1.0, in_dir);
  p.nvme.write_bandwidth = a.measured_or_copied(m.file.write, base.nvme.write_bandwidth, 1.0, in_dir);
  p.nvme.latency = a.measured_or_copied(m.file.read_latency, base.nvme.latency, 1.0, in_dir);

  cap_unified_share(a, p);

  if (!cpu_device) {  // a CPU device's node is this one machine (assemble_cpu_device)
    p.node.units_per_node = a.copied(base.node.units_per_node);
    p.node.gpu_link = a.copied(base.node.gpu_link);
    p.node.nics_per_node = a.copied(base.node.nics_per_node);
    p.node.nic = a.copied(base.node.nic);
  }

  assemble_power(m, a, units, base, p);

  const std::string device_text =
      cpu_device ? ", a CPU device on " + std::to_string(m.cpu_device.threads) + " OpenBLAS threads"
      : m.gpu.measured() ? ", " + m.gpu.presence.model
                         : ", no GPU measured";
  p.description = "Calibrated by asteria calibrate on " + m.host.host + " (" + m.host.date + "): " +
                  m.host.cpu_model + ", " + std::to_string(m.host.cores) + " cores" + device_text +
                  "; BLAS: " + m.host.blas + ". Fields not measured here (" +
                  (cpu_device ? std::string("usable memory fraction, NVMe capacity, the unused links")
                              : std::string("peaks, node layout, NIC, NVMe capacity") +
                                    (m.gpu.measured() ? "" : ", the GPU and its host links")) +
                  ") are copied from " + base_label + ", as their sources say.";
  return p;
}

}  // namespace asteria::hw::calibrate

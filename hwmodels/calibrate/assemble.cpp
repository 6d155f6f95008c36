// Profile assembly: measured fields say how and where they were measured; everything else is
// copied from the base profile and says so.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "hwmodels/calibrate/calibration.hpp"

namespace asteria::hw::calibrate {
namespace {

// Four significant digits: more than any of these measurements can tell, and a readable file.
// Scales by exact powers of ten (up to 1e22) so that round numbers stay exact: 80e9 -> 80e9.
double rounded(double value) {
  if (!(value > 0.0) || !std::isfinite(value)) return value;
  const int shift = static_cast<int>(std::floor(std::log10(value))) - 3;
  double power = 1.0;
  for (int i = 0; i < std::min(std::abs(shift), 22); ++i) power *= 10.0;
  return shift >= 0 ? std::round(value / power) * power : std::round(value * power) / power;
}

std::string number(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

std::string times_text(const CubicTimings& t) {
  std::string text = "times";
  for (std::size_t i = 0; i < t.timings.size(); ++i)
    text += (i == 0 ? " " : ", ") + std::to_string(t.timings[i].n) + ": " +
            number("%.3g ms", t.timings[i].seconds * 1e3);
  return text + "; relative RMS residual of the fit " + number("%.1f%%", t.fit.relative_rms_residual * 100.0);
}

class Assembler {
 public:
  Assembler(const Measurements& m, const std::string& base_label)
      : base_label_(base_label), where_(" on " + m.host.host + ", " + m.host.date + ": ") {}

  Quantity measured(double value, const std::string& how) const {
    return Quantity{rounded(value), Provenance::measured, "measured" + where_ + how};
  }
  Quantity derived(double value, const std::string& how) const {
    return Quantity{rounded(value), Provenance::derived, "derived from measurements" + where_ + how};
  }
  // A base field, its kind kept (a peak stays a peak), its source saying where it comes from.
  Quantity copied(const Quantity& base, const std::string& why = {}) const {
    Quantity q = base;
    q.source = "not measured" + (why.empty() ? std::string() : " (" + why + ")") + ": copied from " + base_label_ +
               ": " + base.source;
    return q;
  }
  // The measurement when there is one, else the base's field.
  Quantity measured_or_copied(const Measured& measurement, const Quantity& base, double divisor = 1.0,
                              const std::string& note = {}) const {
    if (!measurement.valid()) return copied(base);
    return measured(measurement.value / divisor, measurement.method + note);
  }
  LinkSpec copied(const LinkSpec& base, const std::string& why = {}) const {
    return {copied(base.bandwidth, why), copied(base.latency, why)};
  }

 private:
  std::string base_label_;
  std::string where_;
};

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
  if (m.eigh.valid()) p.cpu.eigh_seconds_per_n3 = a.measured(m.eigh.fit.c, m.eigh.method + "; " + times_text(m.eigh));
  else p.cpu.eigh_seconds_per_n3 = a.copied(p.cpu.eigh_seconds_per_n3);
  if (m.qr.valid()) p.cpu.qr_seconds_per_n3 = a.measured(m.qr.fit.c, m.qr.method + "; " + times_text(m.qr));
  else p.cpu.qr_seconds_per_n3 = a.copied(p.cpu.qr_seconds_per_n3);
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

void assemble_gpu(const Measurements& m, const Assembler& a, const HardwareProfile& base,
                  const std::string& base_label, HardwareProfile& p) {
  const GpuMeasurements& g = m.gpu;
  if (!g.measured()) {
    const std::string why = "no GPU measured on " + m.host.host + ": " + g.presence.reason;
    p.gpu.model = base.gpu.model + " (not measured: copied from " + base_label + ")";
    p.gpu.fp32_flops = a.copied(base.gpu.fp32_flops, why);
    p.gpu.bf16_flops = a.copied(base.gpu.bf16_flops, why);
    p.gpu.gemm_efficiency = a.copied(base.gpu.gemm_efficiency, why);
    p.gpu.memory_bytes = a.copied(base.gpu.memory_bytes, why);
    p.gpu.memory_bandwidth = a.copied(base.gpu.memory_bandwidth, why);
    p.gpu.launch_latency = a.copied(base.gpu.launch_latency, why);
    p.gpu.eigh_seconds_per_n3 = a.copied(base.gpu.eigh_seconds_per_n3, why);
    p.gpu.qr_seconds_per_n3 = a.copied(base.gpu.qr_seconds_per_n3, why);
    p.host_to_device = a.copied(base.host_to_device, why);
    p.device_to_host = a.copied(base.device_to_host, why);
    return;
  }
  const std::string peak_note = "a vendor peak; " + base_label + " describes a " + base.gpu.model;
  p.gpu.model = g.presence.model;
  p.gpu.fp32_flops = a.copied(base.gpu.fp32_flops, peak_note);
  p.gpu.bf16_flops = a.copied(base.gpu.bf16_flops, peak_note);
  const double efficiency = g.bf16_gemm_flops.value / base.gpu.bf16_flops.value;
  const std::string gemm_text =
      g.bf16_gemm_flops.method + ": " + number("%.4g TFLOP/s", g.bf16_gemm_flops.value * 1e-12) + " / " +
      number("%.4g TFLOP/s", base.gpu.bf16_flops.value * 1e-12) + " BF16 peak of " + base_label + "; " +
      g.sgemm_flops.method + ": " + number("%.4g TFLOP/s", g.sgemm_flops.value * 1e-12) + " = " +
      number("%.3f", g.sgemm_flops.value / base.gpu.fp32_flops.value) + " of the FP32 peak";
  if (g.bf16_gemm_flops.valid() && efficiency <= 1.0)
    p.gpu.gemm_efficiency = a.derived(efficiency, gemm_text);
  else
    p.gpu.gemm_efficiency = a.copied(base.gpu.gemm_efficiency,
                                     "the measured rate exceeds the base's peak, which is then for another GPU; " +
                                         gemm_text);
  p.gpu.memory_bytes = a.measured_or_copied(g.memory_bytes, base.gpu.memory_bytes);
  p.gpu.memory_bandwidth = a.measured_or_copied(g.memory_bandwidth, base.gpu.memory_bandwidth);
  p.gpu.launch_latency = a.measured_or_copied(g.launch_latency, base.gpu.launch_latency);
  p.gpu.eigh_seconds_per_n3 = g.eigh.valid() ? a.measured(g.eigh.fit.c, g.eigh.method + "; " + times_text(g.eigh))
                                             : a.copied(base.gpu.eigh_seconds_per_n3);
  p.gpu.qr_seconds_per_n3 = g.qr.valid() ? a.measured(g.qr.fit.c, g.qr.method + "; " + times_text(g.qr))
                                         : a.copied(base.gpu.qr_seconds_per_n3);
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
  // rounded() may round up past the pool; the share must stay within it.
  if (p.gpu.memory_bytes.value > pool) p.gpu.memory_bytes.value = std::floor(pool);
}

}  // namespace

HardwareProfile assemble_profile(const Measurements& m, const HardwareProfile& base, const std::string& base_label,
                                 const std::string& name) {
  const Assembler a(m, base_label);
  // Host figures are per unit: one GPU and its share of the host.
  const int units = m.gpu.measured() ? std::max(1, m.gpu.presence.count) : 1;
  HardwareProfile p = base;
  p.name = name;
  p.origin = "asteria calibrate on " + m.host.host;

  assemble_cpu(m, a, units, p);
  assemble_gpu(m, a, base, base_label, p);

  const std::string in_dir = " in " + m.file_directory.string();
  p.nvme.bytes = a.copied(base.nvme.bytes);
  p.nvme.read_bandwidth = a.measured_or_copied(m.file.read, base.nvme.read_bandwidth, 1.0, in_dir);
  p.nvme.write_bandwidth = a.measured_or_copied(m.file.write, base.nvme.write_bandwidth, 1.0, in_dir);
  p.nvme.latency = a.measured_or_copied(m.file.read_latency, base.nvme.latency, 1.0, in_dir);

  cap_unified_share(a, p);

  p.node.units_per_node = a.copied(base.node.units_per_node);
  p.node.gpu_link = a.copied(base.node.gpu_link);
  p.node.nics_per_node = a.copied(base.node.nics_per_node);
  p.node.nic = a.copied(base.node.nic);

  p.description = "Calibrated by asteria calibrate on " + m.host.host + " (" + m.host.date + "): " +
                  m.host.cpu_model + ", " + std::to_string(m.host.cores) + " cores" +
                  (m.gpu.measured() ? ", " + m.gpu.presence.model : ", no GPU measured") +
                  ". Fields not measured here (peaks, node layout, NIC, NVMe capacity" +
                  (m.gpu.measured() ? "" : ", the GPU and its host links") + ") are copied from " + base_label +
                  ", as their sources say.";
  return p;
}

}  // namespace asteria::hw::calibrate

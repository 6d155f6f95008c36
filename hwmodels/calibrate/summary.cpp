// The table `asteria calibrate` prints: one row per measurement, with how it was taken.
#include <cstdio>
#include <ostream>
#include <string>

#include "hwmodels/calibrate/calibration.hpp"

namespace asteria::hw::calibrate {
namespace {

std::string number(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

class Table {
 public:
  explicit Table(std::ostream& out) : out_(out) {}
  void row(const std::string& what, const std::string& value, const std::string& how) {
    char line[96];
    std::snprintf(line, sizeof line, "  %-30s %-18s ", what.c_str(), value.c_str());
    out_ << line << how << '\n';
  }
  void measured(const std::string& what, const Measured& m, const char* format, double scale) {
    if (m.valid()) row(what, number(format, m.value * scale), m.method);
    else row(what, "-", "not measured");
  }
  void fit(const std::string& what, const CubicTimings& t) {
    if (!t.valid()) return row(what, "-", "not measured");
    std::string times;
    for (const TimedSize& s : t.timings)
      times += (times.empty() ? "" : ", ") + std::to_string(s.n) + ": " + number("%.3g ms", s.seconds * 1e3);
    row(what, number("%.3g s", t.fit.c),
        "residual " + number("%.1f%%", t.fit.relative_rms_residual * 100.0) + "; " + times);
  }

 private:
  std::ostream& out_;
};

}  // namespace

void print_summary(const Measurements& m, const std::string& base_label, std::ostream& out) {
  out << "asteria calibrate on " << m.host.host << " (" << m.host.date << "): " << m.host.cpu_model << ", "
      << m.host.cores << " cores, " << number("%.1f GiB", m.host.memory_bytes / (1024.0 * 1024.0 * 1024.0))
      << " of memory\n"
      << "BLAS: " << m.host.blas << '\n';
  Table table(out);
  table.row("measurement", "value", "how");
  table.measured("CPU SGEMM, 1 thread", m.sgemm_one_thread, "%.1f GFLOP/s", 1e-9);
  table.measured("CPU SGEMM, " + std::to_string(m.host.cores) + " threads", m.sgemm_all_threads, "%.1f GFLOP/s",
                 1e-9);
  if (m.sgemm_all_threads.valid())
    table.row("  per core", number("%.1f GFLOP/s", m.sgemm_all_threads.value * 1e-9 / m.host.cores),
              "the " + std::to_string(m.host.cores) + "-thread rate / " + std::to_string(m.host.cores) + " cores");
  table.measured("CPU SGEMM beside busy cores", m.core_contention, "%.3fx as long", 1.0);
  table.fit("CPU eigh c (1 thread)", m.eigh);
  table.fit("CPU QR c (1 thread)", m.qr);
  table.measured("memcpy, 1 thread", m.memcpy_one_thread, "%.2f GB/s", 1e-9);
  table.measured("memcpy, " + std::to_string(m.host.cores) + " threads", m.memcpy_all_threads, "%.2f GB/s", 1e-9);
  table.measured("task hand-off", m.task_latency, "%.1f us", 1e6);
  table.measured("elementwise arithmetic", m.elementwise, "%.3g s/flop", 1.0);
  table.measured("file write", m.file.write, "%.2f GB/s", 1e-9);
  table.measured("file read", m.file.read, "%.2f GB/s", 1e-9);
  table.measured("file 4 KiB read latency", m.file.read_latency, "%.1f us", 1e6);
  out << "  (files in " << m.file_directory.string() << ")\n";

  const CpuDeviceMeasurements& d = m.cpu_device;
  if (d.measured()) {
    out << "CPU device on " << d.threads << (d.threads == 1 ? " thread" : " threads") << '\n';
    table.measured("device SGEMM, sized", d.sgemm_sized, "%.1f GFLOP/s", 1e-9);
    for (const SizedRate& sized : d.sgemm_by_class)
      table.measured("device SGEMM, n=" + std::to_string(sized.n), sized.rate, "%.1f GFLOP/s", 1e-9);
    table.measured("device memcpy", d.memory_bandwidth, "%.2f GB/s", 1e-9);
    table.measured("device per-call overhead", d.call_latency, "%.2f us", 1e6);
    table.measured("small copy", d.copy_latency, "%.3f us", 1e6);
    table.measured("idle stream wake", d.wake_latency, "%.1f us", 1e6);
    table.fit("device eigh c", d.eigh);
    table.fit("device QR c", d.qr);
    return;
  }
  const GpuMeasurements& g = m.gpu;
  if (!g.measured()) {
    out << "GPU: not measured (" << g.presence.reason << "); the GPU section and host links are copied from "
        << base_label << '\n';
    return;
  }
  out << "GPU 0 of " << g.presence.count << ": " << g.presence.model << '\n';
  table.measured("GPU memory", g.memory_bytes, "%.1f GiB", 1.0 / (1024.0 * 1024.0 * 1024.0));
  table.measured("GPU SGEMM", g.sgemm_flops, "%.1f TFLOP/s", 1e-12);
  table.measured("GPU BF16 GEMM", g.bf16_gemm_flops, "%.1f TFLOP/s", 1e-12);
  for (const SizedRate& sized : g.bf16_gemm_by_class)
    table.measured("GPU BF16 GEMM, n=" + std::to_string(sized.n), sized.rate, "%.1f TFLOP/s", 1e-12);
  table.measured("GPU memory bandwidth", g.memory_bandwidth, "%.0f GB/s", 1e-9);
  table.measured("host-to-device", g.host_to_device, "%.2f GB/s", 1e-9);
  table.measured("device-to-host", g.device_to_host, "%.2f GB/s", 1e-9);
  table.measured("host-to-device latency", g.host_to_device_latency, "%.1f us", 1e6);
  table.measured("device-to-host latency", g.device_to_host_latency, "%.1f us", 1e6);
  table.measured("kernel launch", g.launch_latency, "%.2f us", 1e6);
  table.fit("GPU eigh c", g.eigh);
  table.fit("GPU QR c", g.qr);
}

}  // namespace asteria::hw::calibrate

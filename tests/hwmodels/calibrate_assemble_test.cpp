// Profile assembly from hand-made measurements: which fields are measured, which are copied
// from the base and how each says so.
#include <gtest/gtest.h>

#include <string>

#include "hwmodels/calibrate/calibration.hpp"
#include "hwmodels/profile_loader.hpp"

namespace asteria::hw::calibrate {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

CubicTimings timings(double c, const std::string& method) {
  CubicTimings t;
  t.timings = {{256, c * 256.0 * 256 * 256}, {512, c * 512.0 * 512 * 512}};
  t.fit = {c, 0.0, 2};
  t.method = method;
  return t;
}

// The BF16 rate at which one n x n x n product takes 2n³ / (989e12 x efficiency) + launch seconds:
// what the assembly must turn back into `efficiency` against h100-pcie-host's 989 TFLOP/s peak.
SizedRate rate_for(std::int64_t n, double efficiency, double launch) {
  const double flops = 2.0 * double(n) * double(n) * double(n);
  return {n, {flops / (flops / (989e12 * efficiency) + launch), "bf16-" + std::to_string(n)}};
}

// A 16-core host with round numbers; no GPU unless a test adds one.
Measurements round_measurements() {
  Measurements m;
  m.host = {"testhost", "2025-01-02", "Test CPU 9000", 16, 64e9, "OpenBLAS TestX kernels (avx512) on Test CPU 9000 (avx512)"};
  m.sgemm_one_thread = {80e9, "sgemm-1"};
  m.sgemm_all_threads = {1200e9, "sgemm-16"};
  m.core_contention = {1.25, "contention-method"};
  m.eigh = timings(6e-11, "eigh-method");
  m.qr = timings(2e-11, "qr-method");
  m.memcpy_one_thread = {12e9, "memcpy-1"};
  m.memcpy_all_threads = {48e9, "memcpy-16"};
  m.task_latency = {15e-6, "task-method"};
  m.file.write = {1.5e9, "write-method"};
  m.file.read = {2.5e9, "read-method"};
  m.file.read_latency = {80e-6, "latency-method"};
  m.file_directory = "/scratch/here";
  m.gpu.presence.reason = "no CUDA device";
  return m;
}

HardwareProfile base(const std::string& name) { return load_profile(find_profile(name)); }

void expect_measured(const Quantity& q, double value, const std::string& method) {
  EXPECT_EQ(q.value, value) << q.source;
  EXPECT_EQ(q.provenance, Provenance::measured) << q.source;
  EXPECT_TRUE(contains(q.source, "testhost")) << q.source;
  EXPECT_TRUE(contains(q.source, "2025-01-02")) << q.source;
  EXPECT_TRUE(contains(q.source, method)) << q.source;
}

void expect_copied(const Quantity& q, const Quantity& from_base, const std::string& base_label) {
  EXPECT_EQ(q.value, from_base.value) << q.source;
  EXPECT_EQ(q.provenance, from_base.provenance) << q.source;
  EXPECT_EQ(q.source.rfind("not measured", 0), 0u) << q.source;
  EXPECT_TRUE(contains(q.source, "copied from " + base_label)) << q.source;
  EXPECT_TRUE(contains(q.source, from_base.source)) << q.source;
}

TEST(CalibrateAssemble, CpuOnlyHostMeasuresTheHostAndCopiesTheGpu) {
  const HardwareProfile h100 = base("h100-pcie-host");
  const HardwareProfile p = assemble_profile(round_measurements(), h100, "h100-pcie-host", "mine");
  EXPECT_EQ(p.name, "mine");
  EXPECT_EQ(p.origin, "asteria calibrate on testhost");
  EXPECT_EQ(p.cpu.model, "Test CPU 9000");
  expect_measured(p.cpu.cores, 16, "hardware_concurrency");
  expect_measured(p.cpu.gemm_flops_per_core, 80e9, "sgemm-1");
  EXPECT_TRUE(contains(p.cpu.gemm_flops_per_core.source, "75 GFLOP/s per core")) << "1200 / 16 = 75";
  expect_measured(p.cpu.memory_bandwidth, 48e9, "memcpy-16");
  expect_measured(p.cpu.eigh_seconds_per_n3, 6e-11, "eigh-method");
  expect_measured(p.cpu.qr_seconds_per_n3, 2e-11, "qr-method");
  EXPECT_EQ(p.cpu.threads_per_worker.value, 1.0);
  expect_measured(p.cpu.task_latency, 15e-6, "task-method");
  expect_measured(p.cpu.contention_slowdown, 0.25, "contention-method");
  expect_measured(p.host_memory.bytes, 64e9, "sysconf");
  expect_copied(p.host_memory.usable_fraction, h100.host_memory.usable_fraction, "h100-pcie-host");
  expect_measured(p.nvme.write_bandwidth, 1.5e9, "write-method");
  expect_measured(p.nvme.read_bandwidth, 2.5e9, "read-method");
  expect_measured(p.nvme.latency, 80e-6, "latency-method");
  EXPECT_TRUE(contains(p.nvme.read_bandwidth.source, "/scratch/here"));
  expect_copied(p.nvme.bytes, h100.nvme.bytes, "h100-pcie-host");

  // No GPU: the base's GPU section and host links, each saying why.
  for (const auto& [got, want] : {std::pair{p.gpu.fp32_flops, h100.gpu.fp32_flops},
                                  {p.gpu.bf16_flops, h100.gpu.bf16_flops},
                                  {p.gpu.gemm_efficiency.below_256, h100.gpu.gemm_efficiency.below_256},
                                  {p.gpu.gemm_efficiency.from_4096, h100.gpu.gemm_efficiency.from_4096},
                                  {p.gpu.memory_bytes, h100.gpu.memory_bytes},
                                  {p.gpu.memory_bandwidth, h100.gpu.memory_bandwidth},
                                  {p.gpu.launch_latency, h100.gpu.launch_latency},
                                  {p.gpu.eigh_seconds_per_n3, h100.gpu.eigh_seconds_per_n3},
                                  {p.gpu.qr_seconds_per_n3, h100.gpu.qr_seconds_per_n3},
                                  {p.host_to_device.bandwidth, h100.host_to_device.bandwidth},
                                  {p.device_to_host.latency, h100.device_to_host.latency}}) {
    expect_copied(got, want, "h100-pcie-host");
    EXPECT_TRUE(contains(got.source, "no CUDA device")) << got.source;
  }
  EXPECT_TRUE(contains(p.gpu.model, "not measured"));
  EXPECT_EQ(p.device, DeviceKind::gpu);
  expect_copied(p.node.units_per_node, h100.node.units_per_node, "h100-pcie-host");
  expect_copied(p.node.nic.bandwidth, h100.node.nic.bandwidth, "h100-pcie-host");
  EXPECT_TRUE(contains(p.description, "testhost"));

  // What calibrate writes reads back as the same profile.
  EXPECT_EQ(parse_profile(profile_to_yaml(p), p.origin), p);
}

// Busy cores that ran no slower (noise below 1) slow nothing; a machine of one core measures none.
// The power section: the counters' readings per unit (2 GPUs: each unit a GPU and half the
// host), the all-cores CPU draw over the 16 cores, device 0's busy draw without the other GPU's
// rest; what was not measured copied from the base, saying so.
TEST(CalibrateAssemble, PowerFromTheCountersIsSharedPerUnit) {
  Measurements m = round_measurements();
  m.gpu.presence = {2, "Test GPU", ""};
  m.power.cpu_idle = {40.0, "RAPL package-0, at rest over 1.00 s"};
  m.power.cpu_all_cores = {200.0, "RAPL package-0, SGEMM on all 16 cores over 1.00 s"};
  m.power.gpu_idle = {120.0, "NVML 2 GPUs, at rest over 1.00 s"};
  m.power.gpu_busy = {560.0, "NVML 2 GPUs, the GPU benchmarks on device 0 over 9.00 s"};
  const HardwareProfile h100 = base("h100-pcie-host");
  const HardwareProfile p = assemble_profile(m, h100, "h100-pcie-host", "mine");
  expect_measured(p.power.cpu_idle, 20.0, "RAPL package-0, at rest");           // 40 W over 2 units
  EXPECT_EQ(p.power.cpu_core_busy.value, 10.0) << p.power.cpu_core_busy.source;  // (200 - 40) / 16
  EXPECT_EQ(p.power.cpu_core_busy.provenance, Provenance::derived);
  expect_measured(p.power.gpu_idle, 60.0, "NVML 2 GPUs, at rest");  // 120 W over 2 GPUs
  expect_measured(p.power.gpu_busy, 500.0, "the GPU benchmarks");   // 560 less the other GPU's 60
  expect_copied(p.power.memory, h100.power.memory, "h100-pcie-host");
  expect_copied(p.power.nic_busy, h100.power.nic_busy, "h100-pcie-host");
  // Without counters the whole section is the base's, each field saying so.
  const HardwareProfile q = assemble_profile(round_measurements(), h100, "h100-pcie-host", "mine");
  expect_copied(q.power.cpu_idle, h100.power.cpu_idle, "h100-pcie-host");
  expect_copied(q.power.gpu_busy, h100.power.gpu_busy, "h100-pcie-host");
  // A base's package cap is copied too (a SoC's, GB10's 140 W).
  const HardwareProfile gb10 = base("gb10");
  expect_copied(assemble_profile(m, gb10, "gb10", "mine").power.package_cap, gb10.power.package_cap, "gb10");
  // A base without power and nothing measured: still no power section.
  HardwareProfile bare = h100;
  bare.power = {};
  EXPECT_FALSE(assemble_profile(round_measurements(), bare, "bare", "mine").power.has_power());
}

TEST(CalibrateAssemble, ContentionBelowOneIsNoSlowdown) {
  Measurements m = round_measurements();
  m.core_contention = {0.98, "contention-method"};
  EXPECT_EQ(assemble_profile(m, base("gh200"), "gh200", "t").cpu.contention_slowdown.value, 0.0);
  m.core_contention = {};
  const HardwareProfile p = assemble_profile(m, base("gh200"), "gh200", "t");
  expect_copied(p.cpu.contention_slowdown, base("gh200").cpu.contention_slowdown, "gh200");
}

TEST(CalibrateAssemble, MemoryBandwidthIsTheFasterOfOneAndAllThreads) {
  Measurements m = round_measurements();
  m.memcpy_all_threads.value = 10e9;  // slower than the 12 GB/s of one thread: a busy machine
  const HardwareProfile p = assemble_profile(m, base("h100-pcie-host"), "h100-pcie-host", "mine");
  expect_measured(p.cpu.memory_bandwidth, 12e9, "memcpy-1");
  EXPECT_TRUE(contains(p.cpu.memory_bandwidth.source, "memcpy-16: 10 GB/s")) << p.cpu.memory_bandwidth.source;
}

TEST(CalibrateAssemble, MeasurementsKeepFourSignificantDigits) {
  Measurements m = round_measurements();
  m.sgemm_one_thread.value = 87654321098.0;   // 87.65 GFLOP/s
  m.eigh.fit.c = 6.123456e-11;                 // 6.123e-11 s
  const HardwareProfile p = assemble_profile(m, base("h100-pcie-host"), "h100-pcie-host", "mine");
  EXPECT_DOUBLE_EQ(p.cpu.gemm_flops_per_core.value, 87.65e9);
  EXPECT_DOUBLE_EQ(p.cpu.eigh_seconds_per_n3.value, 6.123e-11);
}

TEST(CalibrateAssemble, GpuHostMeasuresTheGpuAndSplitsTheHostAmongGpus) {
  Measurements m = round_measurements();
  GpuMeasurements& g = m.gpu;
  g.presence = {2, "Test GPU", ""};
  g.memory_bytes = {80e9, "props"};
  g.sgemm_flops = {50e12, "sgemm-gpu"};
  g.bf16_gemm_flops = {494.5e12, "bf16-gpu"};  // half of h100-pcie-host's 989 TFLOP/s peak
  // Per class, the rate at which a product takes 2n³ / (989e12 x efficiency) + the 3 us launch.
  g.bf16_gemm_by_class = {rate_for(128, 0.002, 3e-6), rate_for(512, 0.1, 3e-6), rate_for(2048, 0.7, 3e-6),
                          rate_for(8192, 0.5, 3e-6)};
  g.memory_bandwidth = {3e12, "d2d"};
  g.host_to_device = {50e9, "h2d"};
  g.device_to_host = {40e9, "d2h"};
  g.host_to_device_latency = {9e-6, "h2d-lat"};
  g.device_to_host_latency = {8e-6, "d2h-lat"};
  g.launch_latency = {3e-6, "launch"};
  g.eigh = timings(5e-12, "cusolver-eigh");
  g.qr = timings(1e-12, "cusolver-qr");
  const HardwareProfile h100 = base("h100-pcie-host");
  const HardwareProfile p = assemble_profile(m, h100, "h100-pcie-host", "mine");

  EXPECT_EQ(p.gpu.model, "Test GPU");
  expect_copied(p.gpu.fp32_flops, h100.gpu.fp32_flops, "h100-pcie-host");  // peaks are never measured
  // Each class back from its rate once the 3 us launch is taken out.
  EXPECT_DOUBLE_EQ(p.gpu.gemm_efficiency.below_256.value, 0.002);
  EXPECT_DOUBLE_EQ(p.gpu.gemm_efficiency.below_1024.value, 0.1);
  EXPECT_DOUBLE_EQ(p.gpu.gemm_efficiency.below_4096.value, 0.7);
  EXPECT_DOUBLE_EQ(p.gpu.gemm_efficiency.from_4096.value, 0.5);
  EXPECT_EQ(p.gpu.gemm_efficiency.from_4096.provenance, Provenance::derived);
  EXPECT_TRUE(contains(p.gpu.gemm_efficiency.from_4096.source, "bf16-8192")) << p.gpu.gemm_efficiency.from_4096.source;
  EXPECT_TRUE(contains(p.gpu.gemm_efficiency.from_4096.source, "less the 3 us launch latency"))
      << p.gpu.gemm_efficiency.from_4096.source;
  EXPECT_TRUE(contains(p.gpu.gemm_efficiency.below_256.source, "sgemm-gpu"));  // the FP32 rate for reference
  EXPECT_EQ(p.device, DeviceKind::gpu);
  expect_measured(p.gpu.memory_bytes, 80e9, "props");
  expect_measured(p.gpu.memory_bandwidth, 3e12, "d2d");
  expect_measured(p.gpu.launch_latency, 3e-6, "launch");
  expect_measured(p.gpu.eigh_seconds_per_n3, 5e-12, "cusolver-eigh");
  expect_measured(p.gpu.qr_seconds_per_n3, 1e-12, "cusolver-qr");
  expect_measured(p.host_to_device.bandwidth, 50e9, "h2d");
  expect_measured(p.host_to_device.latency, 9e-6, "h2d-lat");
  expect_measured(p.device_to_host.bandwidth, 40e9, "d2h");
  expect_measured(p.device_to_host.latency, 8e-6, "d2h-lat");
  // Two GPUs: each unit gets half of the 16 cores, 64 GB and 48 GB/s.
  expect_measured(p.cpu.cores, 8, "divided among the 2 GPUs");
  expect_measured(p.host_memory.bytes, 32e9, "divided among the 2 GPUs");
  expect_measured(p.cpu.memory_bandwidth, 24e9, "divided among the 2 GPUs");
  EXPECT_EQ(parse_profile(profile_to_yaml(p), p.origin), p);
}

TEST(CalibrateAssemble, GemmFasterThanTheBasePeakKeepsTheBaseEfficiency) {
  Measurements m = round_measurements();
  m.gpu.presence = {1, "Faster GPU", ""};
  m.gpu.bf16_gemm_flops = {2000e12, "bf16-gpu"};  // above the base's 989 TFLOP/s peak
  m.gpu.bf16_gemm_by_class[3] = {8192, {2000e12, "bf16-8192"}};
  m.gpu.sgemm_flops = {100e12, "sgemm-gpu"};
  const HardwareProfile h100 = base("h100-pcie-host");
  const HardwareProfile p = assemble_profile(m, h100, "h100-pcie-host", "mine");
  const Quantity& large = p.gpu.gemm_efficiency.from_4096;
  EXPECT_EQ(large.value, h100.gpu.gemm_efficiency.from_4096.value);
  EXPECT_TRUE(contains(large.source, "exceeds")) << large.source;
  // Classes this plan did not measure fall back to the base.
  expect_copied(p.gpu.gemm_efficiency.below_256, h100.gpu.gemm_efficiency.below_256, "h100-pcie-host");
  // GPU fields this plan did not measure fall back to the base.
  expect_copied(p.gpu.memory_bandwidth, h100.gpu.memory_bandwidth, "h100-pcie-host");
}

TEST(CalibrateAssemble, UnifiedBaseOnASmallerHostCapsTheGpuShare) {
  // gb10's GPU may take ~120 GB of its unified pool; this host has 64 GB: the copied share
  // must shrink to 64 GB x usable_fraction or the profile would not load.
  const HardwareProfile gb10 = base("gb10");
  ASSERT_TRUE(gb10.host_memory.unified);
  const HardwareProfile p = assemble_profile(round_measurements(), gb10, "gb10", "mine");
  const double pool = 64e9 * gb10.host_memory.usable_fraction.value;
  EXPECT_LE(p.gpu.memory_bytes.value, pool);
  EXPECT_GT(p.gpu.memory_bytes.value, pool * 0.999);
  EXPECT_EQ(p.gpu.memory_bytes.provenance, Provenance::derived);
  EXPECT_TRUE(contains(p.gpu.memory_bytes.source, "capped")) << p.gpu.memory_bytes.source;
  EXPECT_NO_THROW(parse_profile(profile_to_yaml(p), "mine.yaml"));
}

TEST(CalibrateAssemble, ALaunchBoundProductKeepsATenthOfItsTimeAsArithmetic) {
  Measurements m = round_measurements();
  m.gpu.presence = {1, "Test GPU", ""};
  m.gpu.launch_latency = {3e-6, "launch"};
  // 2 x 128³ = 4194304 FLOP in 2 us, less than the 3 us launch: 4194304 / (989e12 x 0.2e-6).
  m.gpu.bf16_gemm_by_class[0] = {128, {4194304.0 / 2e-6, "bf16-128"}};
  const HardwareProfile p = assemble_profile(m, base("h100-pcie-host"), "h100-pcie-host", "mine");
  EXPECT_NEAR(p.gpu.gemm_efficiency.below_256.value, 4194304.0 / (989e12 * 0.2e-6), 1e-4);
}

// A CPU device on 4 of the 16 cores, with round numbers.
CpuDeviceMeasurements cpu_device() {
  CpuDeviceMeasurements d;
  d.threads = 4;
  d.sgemm_sized = {380e9, "sgemm-sized"};
  d.sgemm_by_class = {SizedRate{128, {100e9, "sgemm-128"}}, SizedRate{512, {300e9, "sgemm-512"}},
                      SizedRate{1024, {400e9, "sgemm-1024"}}, SizedRate{2048, {400e9, "sgemm-2048"}}};
  d.memory_bandwidth = {40e9, "dev-memcpy"};
  d.call_latency = {1e-6, "tiny-call"};
  d.copy_latency = {5e-8, "small-copy"};
  d.wake_latency = {9e-6, "idle-wake"};
  d.eigh = timings(3e-11, "dev-eigh");
  d.qr = timings(1e-11, "dev-qr");
  return d;
}

TEST(CalibrateAssemble, CpuDeviceProfileDescribesTheStreamOnHostCores) {
  Measurements m = round_measurements();
  m.cpu_device = cpu_device();
  const HardwareProfile h100 = base("h100-pcie-host");
  const HardwareProfile p = assemble_profile(m, h100, "h100-pcie-host", "cpu-dev");
  EXPECT_EQ(p.device, DeviceKind::cpu);
  EXPECT_TRUE(contains(p.gpu.model, "CPU device")) << p.gpu.model;
  EXPECT_EQ(p.gpu.device_threads.value, 4.0);
  // The peak is the fastest rate measured (400 GFLOP/s); bf16 equals it.
  expect_measured(p.gpu.fp32_flops, 400e9, "sgemm-sized");
  EXPECT_EQ(p.gpu.bf16_flops.value, 400e9);
  EXPECT_EQ(p.gpu.bf16_flops.provenance, Provenance::derived);
  // n = 128 at 100 GFLOP/s: 41.94 us per product, 40.94 us less the 1 us call:
  // 4194304 / (400e9 x 40.94e-6) = 0.2561.
  const double t128 = 4194304.0 / 100e9;
  EXPECT_NEAR(p.gpu.gemm_efficiency.below_256.value, 4194304.0 / (400e9 * (t128 - 1e-6)), 1e-4);
  EXPECT_TRUE(contains(p.gpu.gemm_efficiency.below_256.source, "sgemm-128"));
  // n = 1024 at the peak: t / (t - 1 us) > 1, capped at 1.
  EXPECT_EQ(p.gpu.gemm_efficiency.below_4096.value, 1.0);
  EXPECT_TRUE(contains(p.gpu.gemm_efficiency.below_4096.source, "capped at 1"));
  // n = 2048 stands in for the class from_4096, and says so.
  EXPECT_TRUE(contains(p.gpu.gemm_efficiency.from_4096.source, "outside the class from_4096"))
      << p.gpu.gemm_efficiency.from_4096.source;
  expect_measured(p.gpu.memory_bandwidth, 40e9, "dev-memcpy");
  expect_measured(p.gpu.launch_latency, 1e-6, "tiny-call");
  expect_measured(p.gpu.wake_latency, 9e-6, "idle-wake");
  expect_measured(p.gpu.eigh_seconds_per_n3, 3e-11, "dev-eigh");
  expect_measured(p.gpu.qr_seconds_per_n3, 1e-11, "dev-qr");
  // Unified: the device's memory is the usable host memory, 64 GB x the base's usable fraction.
  EXPECT_TRUE(p.host_memory.unified);
  EXPECT_LE(p.gpu.memory_bytes.value, 64e9 * h100.host_memory.usable_fraction.value);
  EXPECT_GT(p.gpu.memory_bytes.value, 64e9 * h100.host_memory.usable_fraction.value * 0.999);
  // Host links are a one-thread memcpy; the host is not split among units.
  expect_measured(p.host_to_device.bandwidth, 12e9, "memcpy-1");
  expect_measured(p.device_to_host.latency, 5e-8, "small-copy");
  expect_measured(p.cpu.cores, 16, "hardware_concurrency");
  EXPECT_EQ(p.node.units_per_node.value, 1.0);
  EXPECT_EQ(p.node.nics_per_node.value, 0.0);
  expect_copied(p.node.nic.bandwidth, h100.node.nic.bandwidth, "h100-pcie-host");
  EXPECT_TRUE(contains(p.description, "CPU device on 4 OpenBLAS threads")) << p.description;
  EXPECT_EQ(parse_profile(profile_to_yaml(p), p.origin), p);
}

}  // namespace
}  // namespace asteria::hw::calibrate

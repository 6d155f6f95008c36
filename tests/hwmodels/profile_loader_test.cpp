#include "hwmodels/profile_loader.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/common/error.hpp"
#include "tests/hwmodels/tiny_profile.hpp"

namespace asteria::hw {
namespace {

using testing::cpu_device_profile_yaml;
using testing::replaced;
using testing::tiny_profile_yaml;

TEST(ProfileLoader, ReadsEveryFieldInSiUnits) {
  const HardwareProfile p = parse_profile(tiny_profile_yaml(), "tiny.yaml");
  EXPECT_EQ(p.name, "tiny");
  EXPECT_EQ(p.description, "A small machine with round numbers.");
  EXPECT_EQ(p.origin, "tiny.yaml");
  EXPECT_EQ(p.gpu.model, "Tiny GPU");
  EXPECT_EQ(p.gpu.fp32_flops.value, 10e12);
  EXPECT_EQ(p.gpu.fp32_flops.provenance, Provenance::peak);
  EXPECT_EQ(p.gpu.fp32_flops.source, "test sheet");
  EXPECT_EQ(p.gpu.bf16_flops.value, 100e12);
  EXPECT_EQ(p.device, DeviceKind::gpu);  // not written: a GPU
  EXPECT_EQ(p.gpu.gemm_efficiency.below_256.value, 0.125);
  EXPECT_EQ(p.gpu.gemm_efficiency.below_1024.value, 0.25);
  EXPECT_EQ(p.gpu.gemm_efficiency.below_4096.value, 0.4);
  EXPECT_EQ(p.gpu.gemm_efficiency.from_4096.value, 0.5);
  EXPECT_EQ(p.gpu.gemm_efficiency.from_4096.provenance, Provenance::derived);
  EXPECT_EQ(p.gpu.gemm_efficiency.below_256.source, "small test run");
  EXPECT_EQ(p.gpu.memory_bytes.value, 16.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(p.gpu.memory_bandwidth.value, 2e12);
  EXPECT_EQ(p.gpu.memory_bandwidth.provenance, Provenance::measured);
  EXPECT_EQ(p.gpu.launch_latency.value, 5e-6);
  EXPECT_EQ(p.gpu.eigh_seconds_per_n3.value, 1e-11);
  EXPECT_EQ(p.gpu.qr_seconds_per_n3.value, 2e-12);
  EXPECT_EQ(p.gpu.device_threads, GpuSpec{}.device_threads);  // not written: one host thread
  EXPECT_EQ(p.gpu.device_threads.value, 1.0);
  EXPECT_EQ(p.cpu.model, "Tiny CPU");
  EXPECT_EQ(p.cpu.cores.value, 8.0);
  EXPECT_EQ(p.cpu.gemm_flops_per_core.value, 50e9);
  EXPECT_EQ(p.cpu.memory_bandwidth.value, 100e9);
  EXPECT_EQ(p.cpu.eigh_seconds_per_n3.value, 1e-10);
  EXPECT_EQ(p.cpu.qr_seconds_per_n3.value, 5e-11);
  EXPECT_EQ(p.cpu.threads_per_worker.value, 2.0);
  EXPECT_EQ(p.cpu.task_latency.value, 20e-6);
  EXPECT_EQ(p.cpu.task_latency.provenance, Provenance::measured);
  EXPECT_EQ(p.host_memory.bytes.value, 64e9);
  EXPECT_EQ(p.host_memory.usable_fraction.value, 0.9);
  EXPECT_FALSE(p.host_memory.unified);
  EXPECT_EQ(p.host_to_device.bandwidth.value, 50e9);
  EXPECT_EQ(p.host_to_device.latency.value, 10e-6);
  EXPECT_EQ(p.device_to_host.bandwidth.value, 40e9);
  EXPECT_EQ(p.nvme.bytes.value, 2e12);
  EXPECT_EQ(p.nvme.read_bandwidth.value, 4.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(p.nvme.write_bandwidth.value, 2e9);
  EXPECT_EQ(p.nvme.latency.value, 100e-6);
  EXPECT_EQ(p.node.units_per_node.value, 4.0);
  EXPECT_EQ(p.node.gpu_link.bandwidth.value, 150e9);
  EXPECT_EQ(p.node.gpu_link.latency.value, 3e-6);
  EXPECT_EQ(p.node.nics_per_node.value, 2.0);
  EXPECT_EQ(p.node.nic.bandwidth.value, 25e9);  // 200 Gb/s
  EXPECT_EQ(p.node.nic.latency.value, 2e-3);
  EXPECT_EQ(p.node.nodes, 1);  // not written: one node
  EXPECT_EQ(p.units_per_node(), 4);
  EXPECT_EQ(p.total_units(), 4);
}

TEST(ProfileLoader, NodeCountIsAnOptionalStudyParameter) {
  const std::string text = replaced(tiny_profile_yaml(), "  nics_per_node:", "  nodes: 3\n  nics_per_node:");
  const HardwareProfile p = parse_profile(text, "tiny.yaml");
  EXPECT_EQ(p.node.nodes, 3);
  EXPECT_EQ(p.total_units(), 12);
}

// Parsing `text` fails with an InputError naming tiny.yaml, `field` and `expectation`.
void expect_error(const std::string& text, const std::string& field, const std::string& expectation) {
  try {
    parse_profile(text, "tiny.yaml");
    ADD_FAILURE() << "accepted a profile with a bad " << field;
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.source(), "tiny.yaml") << message;
    EXPECT_EQ(e.field(), field) << message;
    EXPECT_NE(message.find("tiny.yaml: " + field + ": "), std::string::npos) << message;
    EXPECT_NE(message.find(expectation), std::string::npos) << message;
  }
}

TEST(ProfileLoader, MissingFieldIsNamed) {
  expect_error(replaced(tiny_profile_yaml(),
                        "  memory_bandwidth: {value: 2 TB/s, kind: measured, source: test run}\n", ""),
               "gpu.memory_bandwidth", "missing; expected a mapping {value: <a bandwidth>");
  expect_error(replaced(tiny_profile_yaml(), "  unified: false\n", ""), "host_memory.unified",
               "missing; expected true or false");
  expect_error(replaced(tiny_profile_yaml(), "name: tiny\n", ""), "name", "missing");
  expect_error(replaced(tiny_profile_yaml(), "0.5, kind: derived, source: 50 of 100}",
                        "0.5, kind: derived}"),
               "gpu.gemm_efficiency.from_4096.source", "missing; expected a non-empty string");
}

TEST(ProfileLoader, MissingSectionIsNamed) {
  const std::string text = tiny_profile_yaml();
  const std::string without_nvme = text.substr(0, text.find("nvme:\n")) + text.substr(text.find("node:\n"));
  expect_error(without_nvme, "nvme", "missing; expected a mapping");
  const std::string scalar_section =
      replaced(text,
               "host_to_device:\n  bandwidth: {value: 50 GB/s, kind: measured, source: test run}\n"
               "  latency: {value: 10 us, kind: derived, source: assumed}\n",
               "host_to_device: 12\n");
  expect_error(scalar_section, "host_to_device", "expected a mapping of fields");
}

TEST(ProfileLoader, NegativeOrZeroAmountsAreRejected) {
  expect_error(replaced(tiny_profile_yaml(), "2 TB/s", "-2 TB/s"), "gpu.memory_bandwidth",
               "expected a positive bandwidth, found '-2 TB/s'");
  expect_error(replaced(tiny_profile_yaml(), "10 TFLOP/s", "0 TFLOP/s"), "gpu.fp32_flops",
               "expected a positive FLOP rate");
  expect_error(replaced(tiny_profile_yaml(), "16 GiB", "0 GiB"), "gpu.memory_bytes",
               "expected a positive size in bytes");
  expect_error(replaced(tiny_profile_yaml(), "3 us", "-3 us"), "node.gpu_link.latency",
               "expected a time >= 0");
  expect_error(replaced(tiny_profile_yaml(), "1e-10 s", "0 s"), "cpu.eigh_seconds_per_n3",
               "expected a positive time");
}

// A unit or an exponent off gives a value no hardware has: refused with the accepted range.
TEST(ProfileLoader, ImplausibleAmountsAreRejectedWithTheirRange) {
  expect_error(replaced(tiny_profile_yaml(), "1e-10 s", "1e30 s"), "cpu.eigh_seconds_per_n3",
               "expected a time in [1e-16 s, 1e-06 s] (beyond is a typo, not hardware), found '1e30 s'");
  expect_error(replaced(tiny_profile_yaml(), "2 TB/s", "200 TB/s"), "gpu.memory_bandwidth",
               "expected a bandwidth in [1 MB/s, 100 TB/s]");
  expect_error(replaced(tiny_profile_yaml(), "{value: 50 GB/s", "{value: 50 B/s"), "host_to_device.bandwidth",
               "expected a bandwidth in [1 MB/s, 100 TB/s]");
  expect_error(replaced(tiny_profile_yaml(), "10 TFLOP/s", "1e9 PFLOP/s"), "gpu.fp32_flops",
               "expected a FLOP rate in [1 MFLOP/s, 100 PFLOP/s]");
  expect_error(replaced(tiny_profile_yaml(), "16 GiB", "16 B"), "gpu.memory_bytes",
               "expected a size in bytes in [1 MB, 1000 TB]");
  expect_error(replaced(tiny_profile_yaml(), "16 GiB", "1e308 TB"), "gpu.memory_bytes", "[1 MB, 1000 TB]");
  expect_error(replaced(tiny_profile_yaml(), "3 us", "3 s"), "node.gpu_link.latency", "expected a time in [0 s, 1 s]");
  expect_error(replaced(tiny_profile_yaml(), "1e-10 s", "nan s"), "cpu.eigh_seconds_per_n3", "expected a time");
  expect_error(replaced(tiny_profile_yaml(), "1e-10 s", "inf s"), "cpu.eigh_seconds_per_n3", "expected a time");
  // The bounds are inclusive: a latency of exactly 1 s and a coefficient of 1e-6 s still load.
  const HardwareProfile edge =
      parse_profile(replaced(replaced(tiny_profile_yaml(), "3 us", "1 s"), "1e-10 s", "1e-6 s"), "tiny.yaml");
  EXPECT_EQ(edge.node.gpu_link.latency.value, 1.0);
  EXPECT_EQ(edge.cpu.eigh_seconds_per_n3.value, 1e-6);
}

TEST(ProfileLoader, BadUnitsAreRejected) {
  expect_error(replaced(tiny_profile_yaml(), "2 TB/s", "2 TB"), "gpu.memory_bandwidth",
               "expected a bandwidth");
  expect_error(replaced(tiny_profile_yaml(), "{value: 50 GB/s", "{value: 50 GX/s"), "host_to_device.bandwidth",
               "unknown unit 'GX/s'");
  expect_error(replaced(tiny_profile_yaml(), "16 GiB", "16"), "gpu.memory_bytes", "without a unit");
  expect_error(replaced(tiny_profile_yaml(), "{value: 0.5,", "{value: 0.5 s,"), "gpu.gemm_efficiency.from_4096",
               "plain number without unit");
}

TEST(ProfileLoader, FractionsAndCountsAreChecked) {
  expect_error(replaced(tiny_profile_yaml(), "0.9, kind", "1.5, kind"), "host_memory.usable_fraction",
               "expected a fraction in (0, 1], found '1.5'");
  expect_error(replaced(tiny_profile_yaml(), "{value: 0.5,", "{value: 0,"), "gpu.gemm_efficiency.from_4096",
               "fraction in (0, 1]");
  expect_error(replaced(tiny_profile_yaml(), "{value: 8,", "{value: 8.5,"), "cpu.cores",
               "expected a whole number >= 1, found '8.5'");
  expect_error(replaced(tiny_profile_yaml(), "{value: 2, kind: derived", "{value: 0, kind: derived"),
               "cpu.threads_per_worker", "whole number >= 1");
  expect_error(replaced(tiny_profile_yaml(), "  nics_per_node:", "  nodes: 0\n  nics_per_node:"),
               "node.nodes", "whole number >= 1");
  // A node without NICs is allowed.
  const std::string no_nics = replaced(tiny_profile_yaml(), "{value: 2, kind: peak", "{value: 0, kind: peak");
  EXPECT_EQ(parse_profile(no_nics, "tiny.yaml").node.nics_per_node.value, 0.0);
}

TEST(ProfileLoader, UnknownKindIsRejected) {
  expect_error(replaced(tiny_profile_yaml(), "2 TB/s, kind: measured", "2 TB/s, kind: guessed"),
               "gpu.memory_bandwidth.kind", "expected one of peak, measured, derived; found 'guessed'");
}

TEST(ProfileLoader, UnknownKeysAreRejectedAtEveryLevel) {
  expect_error(tiny_profile_yaml() + "nmve: {}\n", "nmve", "unknown key; expected one of name, description");
  expect_error(replaced(tiny_profile_yaml(), "  model: Tiny CPU\n", "  model: Tiny CPU\n  cores_per_die: 3\n"),
               "cpu.cores_per_die", "unknown key");
  expect_error(replaced(tiny_profile_yaml(), "source: test sheet}\n  bf16", "source: test sheet, unit: x}\n  bf16"),
               "gpu.fp32_flops.unit", "unknown key; expected one of value, kind, source");
}

TEST(ProfileLoader, DuplicateKeysAreRejected) {
  expect_error(tiny_profile_yaml() + "name: other\n", "name", "appears twice");
}

TEST(ProfileLoader, BadYamlReportsTheLine) {
  expect_error(replaced(tiny_profile_yaml(), "  model: Tiny GPU\n", "  model: [Tiny GPU\n"), "line 5, column 13",
               "expected valid YAML");
  expect_error("name: a\n\tgpu: b\n", "line 2, column 1", "expected valid YAML");
}

TEST(ProfileLoader, OtherShapeErrorsAreInputErrors) {
  expect_error("just a string\n", "document", "expected a mapping with the sections");
  expect_error("", "document", "expected a mapping");
  expect_error(replaced(tiny_profile_yaml(), "unified: false", "unified: maybe"), "host_memory.unified",
               "expected true or false");
  expect_error(replaced(tiny_profile_yaml(), "model: Tiny GPU", "model: [a, b]"), "gpu.model",
               "expected a non-empty string");
  expect_error(replaced(tiny_profile_yaml(), "fp32_flops: {value: 10 TFLOP/s, kind: peak, source: test sheet}",
                        "fp32_flops: 10 TFLOP/s"),
               "gpu.fp32_flops", "expected a mapping {value: <a FLOP rate>");
}

TEST(ProfileLoader, UnifiedMemoryMustHoldTheGpuShare) {
  std::string text = replaced(tiny_profile_yaml(), "unified: false", "unified: true");
  EXPECT_TRUE(parse_profile(text, "tiny.yaml").host_memory.unified);  // 16 GiB <= 0.9 x 64 GB
  text = replaced(text, "16 GiB", "60 GB");                             // > 57.6 GB
  expect_error(text, "gpu.memory_bytes", "at most host_memory.bytes x host_memory.usable_fraction");
}

TEST(ProfileLoader, GemmEfficiencyHasFourSizeClasses) {
  expect_error(replaced(tiny_profile_yaml(), "    below_1024: {value: 0.25, kind: derived, source: medium test run}\n", ""),
               "gpu.gemm_efficiency.below_1024", "missing; expected a mapping {value: <a fraction in (0, 1]>");
  expect_error(replaced(tiny_profile_yaml(), "    below_256:", "    below_128: {value: 0.1, kind: derived, source: x}\n"
                                                               "    below_256:"),
               "gpu.gemm_efficiency.below_128", "unknown key; expected one of below_256, below_1024, below_4096, from_4096");
  expect_error(replaced(tiny_profile_yaml(), "{value: 0.4,", "{value: 1.2,"), "gpu.gemm_efficiency.below_4096",
               "expected a fraction in (0, 1], found '1.2'");
  const std::string text = tiny_profile_yaml();
  const std::string without = text.substr(0, text.find("  gemm_efficiency:\n")) + text.substr(text.find("  memory_bytes:"));
  expect_error(without, "gpu.gemm_efficiency",
               "missing; expected a mapping of the size classes below_256, below_1024, below_4096, from_4096");
}

TEST(ProfileLoader, OneGemmEfficiencyHoldsForEveryClassAndSaysSo) {
  // How profiles written before the size classes give it.
  const std::string text = tiny_profile_yaml();
  const std::string old_form = text.substr(0, text.find("  gemm_efficiency:\n")) +
                               "  gemm_efficiency: {value: 0.6, kind: measured, source: big GEMM run}\n" +
                               text.substr(text.find("  memory_bytes:"));
  const HardwareProfile p = parse_profile(old_form, "old.yaml");
  for (std::size_t i = 0; i < GemmEfficiency::kClasses; ++i) {
    const Quantity& q = p.gpu.gemm_efficiency.by_class(i);
    EXPECT_EQ(q.value, 0.6) << GemmEfficiency::kNames[i];
    EXPECT_EQ(q.provenance, Provenance::measured);
    EXPECT_EQ(q.source, "one figure for every size class: big GEMM run");
  }
  EXPECT_EQ(parse_profile(profile_to_yaml(p), p.origin), p);  // written back as four classes
  expect_error(replaced(old_form, "{value: 0.6,", "{value: 0,"), "gpu.gemm_efficiency", "fraction in (0, 1]");
}

TEST(ProfileLoader, TaskLatencyIsOptional) {
  const HardwareProfile p = parse_profile(
      replaced(tiny_profile_yaml(), "  task_latency: {value: 20 us, kind: measured, source: test run}\n", ""), "t.yaml");
  EXPECT_EQ(p.cpu.task_latency, CpuSpec{}.task_latency);  // older profiles: no fixed cost per task
  EXPECT_EQ(p.cpu.task_latency.value, 0.0);
  expect_error(replaced(tiny_profile_yaml(), "{value: 20 us,", "{value: -1 us,"), "cpu.task_latency",
               "expected a time >= 0");
}

TEST(ProfileLoader, PowerIsAnOptionalSectionOfWatts) {
  const HardwareProfile without = parse_profile(tiny_profile_yaml(), "tiny.yaml");
  EXPECT_FALSE(without.power.has_power());  // older profiles: no energy reported
  std::string power = "power:\n";
  for (const char* key : {"gpu_idle", "gpu_busy", "cpu_idle", "cpu_core_busy", "memory", "nvme_idle", "nvme_busy",
                          "nic_idle", "nic_busy"})
    power += std::string("  ") + key + ": {value: 2 W, kind: derived, source: test figure}\n";
  const std::string with_power = tiny_profile_yaml() + power;
  const HardwareProfile p = parse_profile(replaced(with_power, "  gpu_busy: {value: 2 W,", "  gpu_busy: {value: 1.5 kW,"),
                                          "t.yaml");
  EXPECT_TRUE(p.power.has_power());
  EXPECT_EQ(p.power.gpu_busy.value, 1500.0);
  EXPECT_EQ(p.power.nic_idle.value, 2.0);
  EXPECT_EQ(parse_profile(profile_to_yaml(p), "again.yaml").power, p.power);
  expect_error(replaced(with_power, "  memory: {value: 2 W,", "  memory: {value: -2 W,"), "power.memory",
               "a power in [0 W, 100 kW]");
  expect_error(replaced(with_power, "  memory: {value: 2 W,", "  memory: {value: 2 GB,"), "power.memory", "a power");
  expect_error(replaced(with_power, "  nic_busy: {value: 2 W, kind: derived, source: test figure}\n", ""),
               "power.nic_busy", "missing");
}

TEST(ProfileLoader, WakeLatencyIsOptional) {
  const HardwareProfile without = parse_profile(tiny_profile_yaml(), "tiny.yaml");
  EXPECT_EQ(without.gpu.wake_latency, GpuSpec{}.wake_latency);  // older profiles: an idle stream starts at once
  EXPECT_EQ(without.gpu.wake_latency.value, 0.0);
  const std::string with = replaced(tiny_profile_yaml(), "  model: Tiny GPU\n",
                                    "  model: Tiny GPU\n  wake_latency: {value: 10 us, kind: measured, source: idle stream}\n");
  const HardwareProfile p = parse_profile(with, "tiny.yaml");
  EXPECT_EQ(p.gpu.wake_latency.value, 10e-6);
  EXPECT_EQ(p.gpu.wake_latency.provenance, Provenance::measured);
  EXPECT_EQ(p.gpu.wake_latency.source, "idle stream");
  EXPECT_EQ(parse_profile(profile_to_yaml(p), p.origin), p);
  expect_error(replaced(with, "{value: 10 us, kind: measured, source: idle", "{value: -1 us, kind: measured, source: idle"),
               "gpu.wake_latency", "expected a time >= 0");
}

TEST(ProfileLoader, ContentionSlowdownIsOptionalAndChecked) {
  EXPECT_EQ(parse_profile(tiny_profile_yaml(), "tiny.yaml").cpu.contention_slowdown, CpuSpec{}.contention_slowdown);
  const std::string with =
      replaced(tiny_profile_yaml(), "  task_latency: {value: 20 us, kind: measured, source: test run}\n",
               "  task_latency: {value: 20 us, kind: measured, source: test run}\n"
               "  contention_slowdown: {value: 0.27, kind: measured, source: busy cores}\n");
  const HardwareProfile p = parse_profile(with, "tiny.yaml");
  EXPECT_EQ(p.cpu.contention_slowdown.value, 0.27);
  EXPECT_EQ(parse_profile(profile_to_yaml(p), p.origin), p);
  expect_error(replaced(with, "{value: 0.27,", "{value: -0.1,"), "cpu.contention_slowdown",
               "expected a slowdown in [0, 10]");
  expect_error(replaced(with, "{value: 0.27,", "{value: 40,"), "cpu.contention_slowdown",
               "expected a slowdown in [0, 10]");
}

TEST(ProfileLoader, ReadsACpuDevice) {
  const HardwareProfile p = parse_profile(cpu_device_profile_yaml(), "cpu.yaml");
  EXPECT_EQ(p.device, DeviceKind::cpu);
  EXPECT_EQ(p.gpu.device_threads.value, 4.0);
  EXPECT_EQ(p.gpu.device_threads.source, "the stream's OpenBLAS threads");
  EXPECT_TRUE(p.host_memory.unified);
  EXPECT_EQ(parse_profile(profile_to_yaml(p), p.origin), p);
  // A GPU may say how many host threads drive its stream, too.
  const HardwareProfile gpu = parse_profile(
      replaced(tiny_profile_yaml(), "  model: Tiny GPU\n",
               "  model: Tiny GPU\n  device_threads: {value: 2, kind: derived, source: two streams}\n"),
      "gpu.yaml");
  EXPECT_EQ(gpu.gpu.device_threads.value, 2.0);
}

TEST(ProfileLoader, CpuDeviceChecks) {
  expect_error(replaced(cpu_device_profile_yaml(), "device: cpu", "device: tpu"), "device",
               "expected gpu or cpu, found 'tpu'");
  expect_error(replaced(cpu_device_profile_yaml(),
                        "  device_threads: {value: 4, kind: derived, source: the stream's OpenBLAS threads}\n", ""),
               "gpu.device_threads", "missing; expected a mapping {value: <a whole number >= 1>");
  expect_error(replaced(cpu_device_profile_yaml(), "unified: true", "unified: false"), "host_memory.unified",
               "expected true with device: cpu");
  expect_error(replaced(cpu_device_profile_yaml(), "{value: 4, kind: derived, source: the stream's",
                        "{value: 9, kind: derived, source: the stream's"),
               "gpu.device_threads", "expected at most cpu.cores (8) with device: cpu, found 9");
  expect_error(replaced(cpu_device_profile_yaml(), "{value: 4, kind: derived, source: the stream's",
                        "{value: 0, kind: derived, source: the stream's"),
               "gpu.device_threads", "expected a whole number >= 1");
}

TEST(ProfileLoader, MissingFileIsAnInputErrorNamingIt) {
  try {
    load_profile("/nonexistent/dir/profile.yaml");
    ADD_FAILURE() << "loaded a missing file";
  } catch (const InputError& e) {
    EXPECT_EQ(e.source(), "/nonexistent/dir/profile.yaml");
    EXPECT_NE(std::string(e.what()).find("readable profile file"), std::string::npos);
  }
}

// Names and sources reach JSON (summary.json) and YAML output, which need UTF-8: a stray byte
// is named where it is read, not an internal error after a whole simulation.
TEST(ProfileLoader, TextMustBeUtf8) {
  expect_error(replaced(tiny_profile_yaml(), "name: tiny", "name: tiny\xff"), "name",
               "expected UTF-8 text, found an invalid byte sequence at byte 5");
  expect_error(replaced(tiny_profile_yaml(), "model: Tiny GPU", "model: Tiny \xc3GPU"), "gpu.model",
               "expected UTF-8 text, found an invalid byte sequence at byte 6");
  expect_error(replaced(tiny_profile_yaml(), "source: 50 of 100", "source: 50 of 100 \xef\xbf\xbf"),
               "gpu.gemm_efficiency.from_4096.source", "expected UTF-8 text");  // U+FFFF, a noncharacter
  expect_error(replaced(tiny_profile_yaml(), "name: tiny", "name: \xed\xa0\x80"), "name",
               "expected UTF-8 text");  // a surrogate
  const HardwareProfile p =
      parse_profile(replaced(tiny_profile_yaml(), "model: Tiny GPU", "model: Tiny GPU \xe2\x80\x94 \xf0\x9f\x9a\x80"),
                    "tiny.yaml");
  EXPECT_EQ(p.gpu.model, "Tiny GPU \xe2\x80\x94 \xf0\x9f\x9a\x80");
  EXPECT_EQ(parse_profile(profile_to_yaml(p), "tiny.yaml"), p);
}

TEST(ProfileLoader, RoundTripsThroughYaml) {
  HardwareProfile p = parse_profile(tiny_profile_yaml(), "tiny.yaml");
  p.description = "Two lines:\nthe second one.";
  p.gpu.memory_bandwidth.value = 2e12 / 3.0;  // no short decimal form
  p.gpu.memory_bandwidth.source = "a source: with a colon, and 'quotes'";
  p.cpu.gemm_flops_per_core.value = 123456789.123;
  p.node.nodes = 5;
  p.gpu.gemm_efficiency.below_1024.value = 1.0 / 3.0;
  p.cpu.task_latency.value = 1.5e-5;
  p.origin = "asteria calibrate on testhost";
  const std::string yaml = profile_to_yaml(p);
  EXPECT_NE(yaml.find("# origin: asteria calibrate on testhost"), std::string::npos);
  EXPECT_NE(yaml.find("2 ms"), std::string::npos) << yaml;   // units stay readable
  EXPECT_NE(yaml.find("1e-11 s"), std::string::npos) << yaml;
  const HardwareProfile back = parse_profile(yaml, p.origin);
  EXPECT_EQ(back, p) << yaml;
  EXPECT_EQ(back.gpu.memory_bandwidth.value, 2e12 / 3.0);
  EXPECT_EQ(back.description, p.description);
}

}  // namespace
}  // namespace asteria::hw

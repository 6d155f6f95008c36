#pragma once
// A small, valid profile with round numbers, as YAML text, for the loader tests; each error
// test breaks one line of it. A GPU device; cpu_device_profile_yaml() turns it into a CPU one.
#include <stdexcept>
#include <string>

namespace asteria::hw::testing {

inline std::string tiny_profile_yaml() {
  return R"(name: tiny
description: A small machine with round numbers.
gpu:
  model: Tiny GPU
  fp32_flops: {value: 10 TFLOP/s, kind: peak, source: test sheet}
  bf16_flops: {value: 100 TFLOP/s, kind: peak, source: test sheet}
  gemm_efficiency:
    below_256: {value: 0.125, kind: derived, source: small test run}
    below_1024: {value: 0.25, kind: derived, source: medium test run}
    below_4096: {value: 0.4, kind: derived, source: large test run}
    from_4096: {value: 0.5, kind: derived, source: 50 of 100}
  memory_bytes: {value: 16 GiB, kind: peak, source: test sheet}
  memory_bandwidth: {value: 2 TB/s, kind: measured, source: test run}
  launch_latency: {value: 5 us, kind: derived, source: assumed}
  eigh_seconds_per_n3: {value: 1e-11 s, kind: derived, source: assumed}
  qr_seconds_per_n3: {value: 2e-12 s, kind: derived, source: assumed}
cpu:
  model: Tiny CPU
  cores: {value: 8, kind: peak, source: test sheet}
  gemm_flops_per_core: {value: 50 GFLOP/s, kind: measured, source: test run}
  memory_bandwidth: {value: 100 GB/s, kind: measured, source: test run}
  eigh_seconds_per_n3: {value: 1e-10 s, kind: derived, source: assumed}
  qr_seconds_per_n3: {value: 5e-11 s, kind: derived, source: assumed}
  threads_per_worker: {value: 2, kind: derived, source: assumed}
  task_latency: {value: 20 us, kind: measured, source: test run}
host_memory:
  bytes: {value: 64 GB, kind: peak, source: test sheet}
  usable_fraction: {value: 0.9, kind: derived, source: assumed}
  unified: false
host_to_device:
  bandwidth: {value: 50 GB/s, kind: measured, source: test run}
  latency: {value: 10 us, kind: derived, source: assumed}
device_to_host:
  bandwidth: {value: 40 GB/s, kind: measured, source: test run}
  latency: {value: 10 us, kind: derived, source: assumed}
nvme:
  bytes: {value: 2 TB, kind: peak, source: test sheet}
  read_bandwidth: {value: 4 GiB/s, kind: measured, source: test run}
  write_bandwidth: {value: 2 GB/s, kind: measured, source: test run}
  latency: {value: 100 us, kind: derived, source: assumed}
node:
  units_per_node: {value: 4, kind: peak, source: test sheet}
  gpu_link:
    bandwidth: {value: 150 GB/s, kind: peak, source: test sheet}
    latency: {value: 3 us, kind: derived, source: assumed}
  nics_per_node: {value: 2, kind: peak, source: test sheet}
  nic:
    bandwidth: {value: 200 Gb/s, kind: peak, source: test sheet}
    latency: {value: 2 ms, kind: derived, source: assumed}
)";
}

// The tiny profile as a CPU device: its gpu section is 4 host threads, in unified memory.
inline std::string cpu_device_profile_yaml() {
  std::string text = tiny_profile_yaml();
  text.replace(text.find("gpu:\n"), 4, "device: cpu\ngpu:");
  text.replace(text.find("  qr_seconds_per_n3: {value: 2e-12 s"), 0,
               "  device_threads: {value: 4, kind: derived, source: the stream's OpenBLAS threads}\n");
  text.replace(text.find("unified: false"), 14, "unified: true");
  return text;
}

// `text` with the one occurrence of `from` replaced by `to` (throws if `from` is not there, so a
// test cannot silently break nothing).
inline std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  if (at == std::string::npos || text.find(from, at + 1) != std::string::npos) {
    throw std::logic_error("test fixture: '" + from + "' must occur exactly once");
  }
  return text.replace(at, from.size(), to);
}

}  // namespace asteria::hw::testing

#pragma once
// What the operating system says about the machine: name, cores, memory, CPU model.
#include <string>

namespace asteria::hw::calibrate {

struct HostInfo {
  std::string host;          // gethostname()
  std::string date;          // UTC date of the calibration, "2025-06-01"
  std::string cpu_model;     // /proc/cpuinfo "model name" (or what the architecture offers instead)
  int cores = 1;             // std::thread::hardware_concurrency (logical CPUs this process may see)
  double memory_bytes = 0.0;  // sysconf(_SC_PHYS_PAGES) x sysconf(_SC_PAGE_SIZE)
  // The BLAS kernels the CPU measurements ran: "OpenBLAS SkylakeX kernels (avx512) on ... (avx512),
  // OPENBLAS_CORETYPE=SkylakeX set by Asteria" (linalg::blas_kernels()).
  std::string blas;
};

HostInfo probe_host();

// The CPU model named in /proc/cpuinfo-formatted text: "model name", else "Model" or
// "CPU part" (Arm), else empty.
std::string cpu_model_from_cpuinfo(const std::string& cpuinfo_text);

}  // namespace asteria::hw::calibrate

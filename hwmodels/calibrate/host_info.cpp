#include "hwmodels/calibrate/host_info.hpp"
#include "core/linalg/blas_library.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <ctime>
#include <fstream>
#include <sstream>
#include <thread>

namespace asteria::hw::calibrate {
namespace {

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return {};
  const auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

std::string utc_date() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::array<char, 32> text{};
  std::strftime(text.data(), text.size(), "%Y-%m-%d", &utc);
  return text.data();
}

std::string host_name() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0 || name[0] == '\0') return "unknown-host";
  return name.data();
}

}  // namespace

std::string cpu_model_from_cpuinfo(const std::string& cpuinfo_text) {
  // x86 writes "model name"; some Arm kernels write "Model", others only "CPU part" codes.
  for (const char* key : {"model name", "Model", "CPU part"}) {
    std::istringstream lines(cpuinfo_text);
    for (std::string line; std::getline(lines, line);) {
      const auto colon = line.find(':');
      if (colon == std::string::npos || trimmed(line.substr(0, colon)) != key) continue;
      const std::string value = trimmed(line.substr(colon + 1));
      if (value.empty()) continue;
      return std::string(key) == "CPU part" ? "CPU part " + value : value;
    }
  }
  return {};
}

HostInfo probe_host() {
  HostInfo info;
  info.host = host_name();
  info.date = utc_date();
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::ostringstream text;
  text << cpuinfo.rdbuf();
  info.cpu_model = cpu_model_from_cpuinfo(text.str());
  if (info.cpu_model.empty()) info.cpu_model = "unknown CPU (no model in /proc/cpuinfo)";
  const linalg::BlasKernels blas = linalg::blas_kernels();
  info.blas = blas.describe() + (blas.fallback() ? " (a fallback)" : "") + ", " +
              (blas.forced.empty() ? std::string("chosen by the library") : "OPENBLAS_CORETYPE=" + blas.forced);
  info.cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page_size > 0) info.memory_bytes = static_cast<double>(pages) * static_cast<double>(page_size);
  return info;
}

}  // namespace asteria::hw::calibrate

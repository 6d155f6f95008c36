#include "core/linalg/blas_library.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <string>

#if defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#endif

extern "C" {
// OpenBLAS's own queries (cblas.h declares them only in some versions).
char* openblas_get_config(void);
char* openblas_get_corename(void);
}

namespace asteria::linalg {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// The value of the first "key : value" line of /proc/cpuinfo with this key.
std::string cpuinfo(std::string_view key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
    if (name != key) continue;
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    return value;
  }
  return {};
}

VectorClass processor_class() {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq"))
    return VectorClass::avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return VectorClass::avx2;
  if (__builtin_cpu_supports("avx")) return VectorClass::avx;
  return VectorClass::sse;
#elif defined(__aarch64__) && defined(__linux__)
#ifndef HWCAP_SVE
#define HWCAP_SVE (1 << 22)
#endif
  return (getauxval(AT_HWCAP) & HWCAP_SVE) != 0 ? VectorClass::sve : VectorClass::neon;
#else
  return VectorClass::unknown;
#endif
}

bool has_sve2() {
#if defined(__aarch64__) && defined(__linux__)
#ifndef HWCAP2_SVE2
#define HWCAP2_SVE2 (1 << 1)
#endif
  return (getauxval(AT_HWCAP2) & HWCAP2_SVE2) != 0;
#else
  return false;
#endif
}

}  // namespace

std::string_view to_string(VectorClass v) noexcept {
  switch (v) {
    case VectorClass::unknown: return "unknown";
    case VectorClass::sse: return "sse";
    case VectorClass::avx: return "avx";
    case VectorClass::avx2: return "avx2";
    case VectorClass::avx512: return "avx512";
    case VectorClass::neon: return "neon";
    case VectorClass::sve: return "sve";
  }
  return "unknown";
}

VectorClass kernel_class(std::string_view openblas_core) noexcept {
  // OpenBLAS's names for its x86-64 and AArch64 targets (TargetList.txt), by the widest vectors
  // their kernels use.
  struct Entry {
    const char* name;
    VectorClass cls;
  };
  static constexpr std::array<Entry, 38> kTable{{
      {"katmai", VectorClass::sse},        {"coppermine", VectorClass::sse}, {"northwood", VectorClass::sse},
      {"prescott", VectorClass::sse},      {"banias", VectorClass::sse},     {"core2", VectorClass::sse},
      {"penryn", VectorClass::sse},        {"dunnington", VectorClass::sse}, {"nehalem", VectorClass::sse},
      {"atom", VectorClass::sse},          {"athlon", VectorClass::sse},     {"opteron", VectorClass::sse},
      {"opteron_sse3", VectorClass::sse},  {"barcelona", VectorClass::sse},  {"bobcat", VectorClass::sse},
      {"nano", VectorClass::sse},          {"sandybridge", VectorClass::avx}, {"bulldozer", VectorClass::avx},
      {"piledriver", VectorClass::avx},    {"steamroller", VectorClass::avx}, {"haswell", VectorClass::avx2},
      {"zen", VectorClass::avx2},          {"excavator", VectorClass::avx2}, {"skylakex", VectorClass::avx512},
      {"cooperlake", VectorClass::avx512}, {"sapphirerapids", VectorClass::avx512}, {"armv8", VectorClass::unknown},
      {"cortexa53", VectorClass::neon},    {"cortexa55", VectorClass::neon}, {"cortexa57", VectorClass::neon},
      {"cortexa72", VectorClass::neon},    {"cortexa73", VectorClass::neon}, {"neoversen1", VectorClass::neon},
      {"thunderx2t99", VectorClass::neon}, {"falkor", VectorClass::neon},    {"neoversev1", VectorClass::sve},
      {"neoversen2", VectorClass::sve},    {"a64fx", VectorClass::sve},
  }};
  const std::string name = lower(openblas_core);
  for (const Entry& e : kTable)
    if (name == e.name) return e.cls;
  return VectorClass::unknown;
}

bool BlasKernels::fallback() const noexcept {
  // Generic ARMv8 (C loops) is a fallback on any AArch64 processor; elsewhere compare classes.
  if (lower(kernels) == "armv8") return cpu_class == VectorClass::neon || cpu_class == VectorClass::sve;
  if (kernel_class == VectorClass::unknown || cpu_class == VectorClass::unknown) return false;
  return static_cast<int>(kernel_class) < static_cast<int>(cpu_class);
}

std::string BlasKernels::better_kernels() const {
  switch (cpu_class) {
    case VectorClass::avx512: return "SkylakeX";
    case VectorClass::avx2: return "Haswell";
    case VectorClass::avx: return "Sandybridge";
    case VectorClass::sve: return has_sve2() ? "NEOVERSEN2" : "NEOVERSEV1";  // Neoverse V2 (Grace): 128-bit SVE2 as N2
    case VectorClass::neon: return "NEOVERSEN1";
    default: return {};
  }
}

std::string BlasKernels::describe() const {
  return "OpenBLAS " + kernels + " kernels (" + std::string(to_string(kernel_class)) + ") on " +
         (cpu.empty() ? std::string("this processor") : cpu) + " (" + std::string(to_string(cpu_class)) + ")";
}

BlasKernels blas_kernels() {
  BlasKernels k;
  const char* config = openblas_get_config();
  const char* core = openblas_get_corename();
  k.library = config != nullptr ? config : "";
  k.kernels = core != nullptr ? core : "";
  k.kernel_class = kernel_class(k.kernels);
  k.cpu_class = processor_class();
  k.selectable = k.library.find("DYNAMIC_ARCH") != std::string::npos;
  if (const char* forced = std::getenv("OPENBLAS_CORETYPE")) k.forced = forced;
#if defined(__aarch64__)
  const std::string implementer = cpuinfo("CPU implementer"), part = cpuinfo("CPU part");
  k.cpu = implementer.empty() ? "" : "implementer " + implementer + ", part " + part;
#else
  k.cpu = cpuinfo("model name");
#endif
  return k;
}

}  // namespace asteria::linalg

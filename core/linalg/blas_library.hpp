#pragma once
// Which kernels the BLAS library picked for this processor, and whether they are a fallback.
//
// Debian's OpenBLAS is built for many processors at once (DYNAMIC_ARCH) and picks its kernels at
// load time by CPU model. A model newer than the library (0.3.21 and Intel's Emerald Rapids,
// model 207; Arm's Neoverse V2, Grace) gets the oldest kernel set that is safe: Prescott (SSE3) on
// an AVX-512 processor, generic ARMv8 on an SVE one; GEMMs then run several times slower.
// OpenBLAS honours OPENBLAS_CORETYPE when it loads, so a program can fix the choice by setting it
// and starting again (core/real/blas_kernels_fix.hpp does this for Asteria's programs).
#include <optional>
#include <string>
#include <string_view>

namespace asteria::linalg {

// Vector instruction classes, narrowest first: what a kernel set uses, or what a processor runs.
enum class VectorClass { unknown, sse, avx, avx2, avx512, neon, sve };
std::string_view to_string(VectorClass v) noexcept;

struct BlasKernels {
  std::string library;   // "OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH ..." (the library's own config)
  std::string kernels;   // the kernel set in use: "SkylakeX", "Prescott", "neoversen2"...
  std::string cpu;       // the processor: /proc/cpuinfo's model name (x86) or implementer/part (Arm)
  VectorClass kernel_class = VectorClass::unknown;
  VectorClass cpu_class = VectorClass::unknown;
  bool selectable = false;  // the library picks kernels at load time (OPENBLAS_CORETYPE works)
  std::string forced;       // OPENBLAS_CORETYPE as the process found it (empty: unset)
  // The kernels are a fallback: of a narrower class than the processor runs.
  bool fallback() const noexcept;
  // The OPENBLAS_CORETYPE value that gives this processor's class (empty: none known).
  std::string better_kernels() const;
  // "OpenBLAS SkylakeX kernels (avx512) on Intel(R) Xeon(R) Processor (avx512)".
  std::string describe() const;
};

// The kernel set of a name OpenBLAS reports (case-insensitive); unknown for names it does not know.
VectorClass kernel_class(std::string_view openblas_core) noexcept;
// What this process's BLAS library uses, and on what.
BlasKernels blas_kernels();

}  // namespace asteria::linalg

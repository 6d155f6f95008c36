#include "core/real/blas_kernel_choice.hpp"

#include <unistd.h>

#include <cstdlib>
#include <string>

#include "core/common/error.hpp"
#include "core/linalg/blas_library.hpp"

namespace asteria::real {
namespace {

// Set (to the value chosen) in the environment of the restarted program: the choice was ours.
constexpr const char* kChosenMark = "ASTERIA_OPENBLAS_CORETYPE_SET";

bool chosen_by_us() {
  const char* forced = std::getenv("OPENBLAS_CORETYPE");
  const char* mark = std::getenv(kChosenMark);
  return forced != nullptr && mark != nullptr && std::string(forced) == mark;
}

}  // namespace

void select_blas_kernels(char** argv) noexcept {
  try {
    if (std::getenv("OPENBLAS_CORETYPE") != nullptr || std::getenv(kChosenMark) != nullptr) return;
    const linalg::BlasKernels k = linalg::blas_kernels();
    const std::string better = k.better_kernels();
    if (!k.fallback() || !k.selectable || better.empty()) return;
    if (setenv("OPENBLAS_CORETYPE", better.c_str(), 1) != 0 || setenv(kChosenMark, better.c_str(), 1) != 0) return;
    execv("/proc/self/exe", argv);
    // Still here: the restart failed; the environment stays marked so nothing loops.
  } catch (...) {
  }
}

std::string blas_kernels_chosen_by() {
  const char* forced = std::getenv("OPENBLAS_CORETYPE");
  if (forced == nullptr) return "chosen by the library";
  return std::string("OPENBLAS_CORETYPE=") + forced + (chosen_by_us() ? " set by Asteria" : " set by the user");
}

void require_cpu_blas_kernels(const std::string& what) {
  const linalg::BlasKernels k = linalg::blas_kernels();
  if (!k.fallback()) return;
  if (std::getenv("OPENBLAS_CORETYPE") != nullptr && !chosen_by_us()) return;  // the user's choice stands
  if (const char* allow = std::getenv("ASTERIA_ALLOW_BLAS_FALLBACK"); allow != nullptr && std::string(allow) == "1")
    return;
  const std::string better = k.better_kernels();
  throw InputError(what, "BLAS kernels",
                   k.describe() + ": a fallback that runs GEMMs and refreshes several times slower than this "
                                  "processor allows. " +
                       (k.selectable && !better.empty()
                            ? "Set OPENBLAS_CORETYPE=" + better + " (this OpenBLAS picks its kernels at load time)"
                            : std::string("Install an OpenBLAS built for this processor")) +
                       ", or set ASTERIA_ALLOW_BLAS_FALLBACK=1 to run anyway");
}

}  // namespace asteria::real

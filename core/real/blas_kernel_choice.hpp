#pragma once
// Making the BLAS library use the kernels this processor deserves (core/linalg/blas_library.hpp),
// for programs: OpenBLAS reads OPENBLAS_CORETYPE once, as it loads, so a program whose library
// picked a fallback sets it and starts itself again, first thing in main().
#include <string>

namespace asteria::real {

// When the BLAS library runs fallback kernels that OPENBLAS_CORETYPE can replace and nobody chose
// them (OPENBLAS_CORETYPE unset), sets it and executes this program again with the same
// arguments (once). Returns when nothing needs doing, or when the restart failed.
void select_blas_kernels(char** argv) noexcept;

// How the kernels in use came to be: "chosen by the library", "OPENBLAS_CORETYPE=X set by
// Asteria", "OPENBLAS_CORETYPE=X set by the user".
std::string blas_kernels_chosen_by();

// Throws InputError naming `what` and the remedies when the kernels are a fallback nobody chose
// (a library built for one processor, or a restart that failed): its GEMMs and refreshes would run
// several times slower than this processor allows. ASTERIA_ALLOW_BLAS_FALLBACK=1 lets it pass.
void require_cpu_blas_kernels(const std::string& what);

}  // namespace asteria::real

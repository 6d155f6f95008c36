#include <iostream>

#include "apps/asteria/verbs.hpp"
#include "core/real/blas_kernel_choice.hpp"

int main(int argc, char** argv) {
  // Before anything computes: a BLAS that picked fallback kernels restarts with better ones.
  asteria::real::select_blas_kernels(argv);
  asteria::cli::Args args(argv + 1, argv + argc);
  return asteria::cli::run(args, std::cout, std::cerr);
}

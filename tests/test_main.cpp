// The main of every GoogleTest program here: as `asteria` does, a BLAS library that picked
// fallback kernels for this processor is first made to load better ones (restarting the program
// once), so the tests run the BLAS the runtime runs.
#include <gtest/gtest.h>

#include "core/real/blas_kernel_choice.hpp"

int main(int argc, char** argv) {
  asteria::real::select_blas_kernels(argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

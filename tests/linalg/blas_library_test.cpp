// Which BLAS kernels run, and whether they are a fallback for this processor.
#include <gtest/gtest.h>

#include "core/linalg/blas_library.hpp"

namespace asteria::linalg {
namespace {

TEST(BlasKernels, OpenBlasKernelSetsAreClassedByTheirWidestVectors) {
  EXPECT_EQ(kernel_class("Prescott"), VectorClass::sse);
  EXPECT_EQ(kernel_class("Nehalem"), VectorClass::sse);
  EXPECT_EQ(kernel_class("Sandybridge"), VectorClass::avx);
  EXPECT_EQ(kernel_class("Haswell"), VectorClass::avx2);
  EXPECT_EQ(kernel_class("Zen"), VectorClass::avx2);
  EXPECT_EQ(kernel_class("SkylakeX"), VectorClass::avx512);
  EXPECT_EQ(kernel_class("COOPERLAKE"), VectorClass::avx512);
  EXPECT_EQ(kernel_class("neoversen1"), VectorClass::neon);
  EXPECT_EQ(kernel_class("NEOVERSEV1"), VectorClass::sve);
  EXPECT_EQ(kernel_class("some future core"), VectorClass::unknown);
}

TEST(BlasKernels, AFallbackIsANarrowerKernelSetThanTheProcessorRuns) {
  BlasKernels k;
  k.kernels = "Prescott";
  k.kernel_class = VectorClass::sse;
  k.cpu_class = VectorClass::avx512;
  EXPECT_TRUE(k.fallback());
  EXPECT_EQ(k.better_kernels(), "SkylakeX");
  k.cpu_class = VectorClass::avx2;
  EXPECT_TRUE(k.fallback());
  EXPECT_EQ(k.better_kernels(), "Haswell");
  k.kernels = "Haswell";
  k.kernel_class = VectorClass::avx2;
  EXPECT_FALSE(k.fallback());
  k.cpu_class = VectorClass::avx512;
  EXPECT_TRUE(k.fallback()) << "AVX2 kernels on an AVX-512 processor";
  k.kernels = "SkylakeX";
  k.kernel_class = VectorClass::avx512;
  EXPECT_FALSE(k.fallback());
  // Generic ARMv8 C loops on any AArch64 processor; an unknown set is not called a fallback.
  k.kernels = "armv8";
  k.kernel_class = VectorClass::unknown;
  k.cpu_class = VectorClass::sve;
  EXPECT_TRUE(k.fallback());
  k.kernels = "some future core";
  EXPECT_FALSE(k.fallback());
  EXPECT_NE(k.describe().find("some future core"), std::string::npos);
}

TEST(BlasKernels, ThisProcessRunsItsProcessorsKernelsWhereTheLibraryCanBeTold) {
  // The test main restarts a program whose OpenBLAS picked fallback kernels (as `asteria` does):
  // only a library that picks its kernels once, at build time, may still run a fallback here.
  const BlasKernels k = blas_kernels();
  EXPECT_FALSE(k.library.empty());
  EXPECT_FALSE(k.kernels.empty());
  if (k.fallback()) {
    EXPECT_FALSE(k.selectable) << k.describe() << " though " << k.library << " picks at load time";
  }
  RecordProperty("blas", k.describe());
}

}  // namespace
}  // namespace asteria::linalg

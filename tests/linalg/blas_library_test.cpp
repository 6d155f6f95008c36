// Which BLAS kernels run, and whether they are a fallback for this processor.
#include <gtest/gtest.h>

#include "core/linalg/blas_library.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <string_view>
#include <vector>

#include "core/real/blas_kernel_choice.hpp"

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

// The program run again without OPENBLAS_CORETYPE (a user's choice that this machine's environment
// may carry), so that the test main's own choice is what is checked; its exit status.
int rerun_without_user_coretype() {
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string_view(*e).starts_with("OPENBLAS_CORETYPE=")) continue;
    env_strings.emplace_back(*e);
  }
  std::vector<char*> env;
  for (std::string& s : env_strings) env.push_back(s.data());
  env.push_back(nullptr);
  std::string exe = "/proc/self/exe";
  std::string filter = "--gtest_filter=BlasKernels.ThisProcessRunsItsProcessorsKernelsWhereTheLibraryCanBeTold";
  std::vector<char*> args{exe.data(), filter.data(), nullptr};
  pid_t pid = 0;
  if (posix_spawn(&pid, exe.c_str(), nullptr, nullptr, args.data(), env.data()) != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(BlasKernels, ThisProcessRunsItsProcessorsKernelsWhereTheLibraryCanBeTold) {
  // The test main restarts a program whose OpenBLAS picked fallback kernels (as `asteria` does):
  // only a library that picks its kernels once, at build time, or a user's OPENBLAS_CORETYPE
  // may still run a fallback here.
  const BlasKernels k = blas_kernels();
  EXPECT_FALSE(k.library.empty());
  EXPECT_FALSE(k.kernels.empty());
  RecordProperty("blas", k.describe());
  if (!k.fallback() || !k.selectable) return;
  const std::string chosen_by = real::blas_kernels_chosen_by();
  ASSERT_NE(chosen_by.find("set by the user"), std::string::npos)
      << k.describe() << " though " << k.library << " picks at load time (" << chosen_by << ")";
  // The user's fallback stands; without it, the program must choose better kernels itself.
  EXPECT_EQ(rerun_without_user_coretype(), 0) << "run again without " << chosen_by;
}

}  // namespace
}  // namespace asteria::linalg

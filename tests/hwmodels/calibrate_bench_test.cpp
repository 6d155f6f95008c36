// The calibration's measurement helpers on small inputs: they run, return positive finite
// numbers, do the work they claim (the copy copies), and describe how they measured.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "core/common/error.hpp"
#include <sstream>

#include "hwmodels/calibrate/cpu_bench.hpp"
#include "hwmodels/calibrate/device_bench.hpp"
#include "hwmodels/calibrate/file_bench.hpp"
#include "hwmodels/calibrate/host_info.hpp"
#include "hwmodels/calibrate/latency_bench.hpp"
#include "hwmodels/calibrate/memory_bench.hpp"
#include "tests/io/temp_dir.hpp"

namespace asteria::hw::calibrate {
namespace {

bool positive_finite(double x) { return std::isfinite(x) && x > 0.0; }

std::vector<std::byte> pattern(std::size_t bytes) {
  std::vector<std::byte> data(bytes);
  for (std::size_t i = 0; i < bytes; ++i) data[i] = static_cast<std::byte>((i * 131u + 7u) & 0xffu);
  return data;
}

TEST(CalibrateBench, CopyBandwidthCopiesAndIsPositive) {
  const std::size_t bytes = std::size_t{8} << 20;
  for (const int threads : {1, 2, 3}) {  // 3 slices do not divide 8 MiB evenly
    const std::vector<std::byte> src = pattern(bytes);
    std::vector<std::byte> dst(bytes, std::byte{0});
    const Measured m = copy_bandwidth(dst, src, threads, 2);
    EXPECT_TRUE(positive_finite(m.value)) << m.value;
    EXPECT_TRUE(m.valid());
    EXPECT_TRUE(dst == src) << threads << " threads left the destination different from the source";
    EXPECT_NE(m.method.find("8 MiB"), std::string::npos) << m.method;
    EXPECT_NE(m.method.find(std::to_string(threads) + (threads == 1 ? " thread" : " threads")), std::string::npos)
        << m.method;
  }
}

TEST(CalibrateBench, CopyBandwidthRejectsMismatchedBuffers) {
  std::vector<std::byte> a(64), b(32), empty;
  EXPECT_THROW(copy_bandwidth(a, b, 1, 1), InputError);
  EXPECT_THROW(copy_bandwidth(empty, empty, 1, 1), InputError);
  EXPECT_THROW(copy_bandwidth(a, a, 0, 1), InputError);
}

TEST(CalibrateBench, SgemmRateIsPositiveAndNamesItsSize) {
  const Measured m = measure_sgemm({1, 0.005, 2, 256});
  EXPECT_TRUE(positive_finite(m.value));
  EXPECT_LT(m.value, 1e13);  // no CPU core does 10 TFLOP/s of SGEMM
  EXPECT_NE(m.method.find("1 thread"), std::string::npos) << m.method;
  EXPECT_NE(m.method.find("n="), std::string::npos) << m.method;
}

// One core beside busy others takes about as long or longer (a shared machine may give less or
// more); one core has nothing to measure.
TEST(CalibrateBench, CoreContentionIsARatioNearOrAboveOne) {
  const Measured m = measure_core_contention(128, 2, 2);
  EXPECT_TRUE(positive_finite(m.value));
  EXPECT_GT(m.value, 0.5);
  EXPECT_LT(m.value, 20.0);
  EXPECT_NE(m.method.find("1 other core running"), std::string::npos) << m.method;
  EXPECT_TRUE(measure_core_contention(128, 1, 2).method.empty());
}

TEST(CalibrateBench, EighTimingsGrowWithSizeAndFitTheLargerOnes) {
  const std::vector<std::int64_t> sizes{96, 32, 64};
  const CubicTimings t = measure_eigh(sizes, 1);
  ASSERT_EQ(t.timings.size(), 3u);
  EXPECT_EQ(t.timings[0].n, 32);  // sorted
  EXPECT_EQ(t.timings[2].n, 96);
  for (const TimedSize& s : t.timings) EXPECT_TRUE(positive_finite(s.seconds));
  EXPECT_EQ(t.fit.points, 2u);  // n = 64 and 96
  EXPECT_TRUE(positive_finite(t.fit.c));
  EXPECT_NE(t.method.find("ssyevd"), std::string::npos);
  EXPECT_NE(t.method.find("n = 64, 96"), std::string::npos) << t.method;
}

TEST(CalibrateBench, QrTimingsArePositive) {
  const std::vector<std::int64_t> sizes{32, 64};
  const CubicTimings t = measure_qr(sizes, 1);
  ASSERT_EQ(t.timings.size(), 2u);
  EXPECT_TRUE(t.valid());
  EXPECT_NE(t.method.find("sgeqrf + sorgqr"), std::string::npos);
}

TEST(CalibrateBench, SgemmAtOneSizeKeepsTheSizeAndBatchesSmallProducts) {
  const SizedRate small = measure_sgemm_at(32, 1, 2);
  EXPECT_EQ(small.n, 32);
  EXPECT_TRUE(small.rate.valid());
  EXPECT_LT(small.rate.value, 1e13);
  // 2 x 32³ = 65536 FLOP: ceil(2e8 / 65536) = 3052 products per timed run.
  EXPECT_NE(small.rate.method.find("runs of 3052 products"), std::string::npos) << small.rate.method;
  EXPECT_DOUBLE_EQ(small.seconds_per_product(), 65536.0 / small.rate.value);
  EXPECT_THROW(measure_sgemm_at(0, 1, 1), InputError);
  EXPECT_THROW(measure_sgemm_at(32, 0, 1), InputError);
}

TEST(CalibrateBench, FactorizationsRunOnTheThreadsAsked) {
  const std::vector<std::int64_t> sizes{32, 64};
  const CubicTimings t = measure_eigh(sizes, 1, 2);
  EXPECT_TRUE(t.valid());
  // OpenBLAS may cap the count at what it was built for; the method names what it ran on.
  EXPECT_TRUE(t.method.find("2 BLAS threads") != std::string::npos ||
              t.method.find("1 BLAS thread") != std::string::npos)
      << t.method;
}

TEST(CalibrateBench, FixedCostsPerCallArePositiveAndSmall) {
  const Measured task = measure_task_latency(5);
  EXPECT_TRUE(task.valid());
  EXPECT_LT(task.value, 0.1);  // a hand-off takes microseconds, not a tenth of a second
  EXPECT_NE(task.method.find("worker thread"), std::string::npos) << task.method;
  const Measured call = measure_call_latency(1, 100, 2);
  EXPECT_TRUE(call.valid());
  EXPECT_LT(call.value, 0.01);
  EXPECT_NE(call.method.find("8x8x8"), std::string::npos) << call.method;
  const Measured copy = measure_copy_latency(64, 1000, 2);
  EXPECT_TRUE(copy.valid());
  EXPECT_LT(copy.value, 1e-3);
  EXPECT_THROW(measure_task_latency(0), InputError);
  EXPECT_THROW(measure_call_latency(1, 0, 1), InputError);
  EXPECT_THROW(measure_copy_latency(0, 1, 1), InputError);
}

// Through the real backend's own device stream: a finite positive time, far below a second.
TEST(CalibrateBench, WakeLatencyOfTheIdleDeviceStreamIsPositive) {
  const Measured wake = measure_wake_latency(5);
  EXPECT_TRUE(wake.valid()) << wake.value;
  EXPECT_GT(wake.value, 0.0);
  EXPECT_LT(wake.value, 1.0);
  EXPECT_NE(wake.method.find("median of 5 submissions to an idle device stream"), std::string::npos) << wake.method;
  EXPECT_THROW(measure_wake_latency(0), InputError);
}

TEST(CalibrateBench, CpuDeviceMeasuresEveryFigureOfItsStream) {
  CpuDevicePlan plan;
  plan.threads = 1;
  plan.sgemm = {1, 0.005, 2, 256};
  plan.class_sizes = {32, 64, 96, 128};
  plan.gemm_repeats = 2;
  plan.solver_sizes = {32, 48, 64};
  plan.solver_repeats = 1;
  plan.memcpy_bytes = std::size_t{4} << 20;
  plan.memcpy_repeats = 2;
  plan.calls = 50;
  plan.wake_samples = 5;
  std::ostringstream progress;
  const CpuDeviceMeasurements d = measure_cpu_device(plan, progress);
  ASSERT_TRUE(d.measured());
  EXPECT_EQ(d.threads, 1);
  EXPECT_TRUE(d.sgemm_sized.valid());
  for (std::size_t i = 0; i < d.sgemm_by_class.size(); ++i) {
    EXPECT_EQ(d.sgemm_by_class[i].n, plan.class_sizes[i]);
    EXPECT_TRUE(d.sgemm_by_class[i].rate.valid());
    EXPECT_LE(d.sgemm_by_class[i].rate.value, d.peak_flops());
  }
  EXPECT_TRUE(d.memory_bandwidth.valid());
  EXPECT_TRUE(d.call_latency.valid());
  EXPECT_TRUE(d.copy_latency.valid());
  EXPECT_TRUE(d.wake_latency.valid());
  EXPECT_TRUE(d.eigh.valid());
  EXPECT_TRUE(d.qr.valid());
  EXPECT_NE(progress.str().find("CPU device"), std::string::npos) << progress.str();
  plan.threads = 0;
  EXPECT_THROW(measure_cpu_device(plan, progress), InputError);
}

TEST(CalibrateBench, FileBandwidthWritesReadsAndCleansUp) {
  asteria::testing::TempDir dir;
  const FileIo io = measure_file_io(dir.path(), {std::size_t{3} << 20, std::size_t{1} << 20, 8});
  EXPECT_TRUE(positive_finite(io.write.value));
  EXPECT_TRUE(positive_finite(io.read.value));
  EXPECT_NE(io.write.method.find("3 MiB"), std::string::npos) << io.write.method;
  EXPECT_NE(io.write.method.find("fsync"), std::string::npos);
  EXPECT_FALSE(io.file_system.empty());
  EXPECT_EQ(io.file_system, file_system_of(dir.path()));
  EXPECT_NE(io.read.method.find(io.file_system), std::string::npos) << io.read.method;
  // The latency needs O_DIRECT (else the page cache answers); without it, it is not measured.
  EXPECT_EQ(io.read_latency.valid(), io.direct);
  EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "the benchmark file was left behind";
}

TEST(CalibrateBench, FileSmallerThanARequestIsWrittenWhole) {
  asteria::testing::TempDir dir;
  // 5000 bytes round up to two 4 KiB pages, written in one 8 KiB request.
  const FileIo io = measure_file_io(dir.path(), {5000, std::size_t{8} << 20, 4});
  EXPECT_TRUE(positive_finite(io.write.value));
  EXPECT_NE(io.write.method.find("of 8192 B in 8192 B requests"), std::string::npos) << io.write.method;
  EXPECT_THROW(measure_file_io(dir.path(), {0, std::size_t{1} << 20, 4}), InputError);
}

TEST(CalibrateBench, ScratchDirectoryNeedsAWritableDirectory) {
  asteria::testing::TempDir dir;
  const std::filesystem::path file = dir.path() / "plain-file";
  std::ofstream(file) << "not a directory";
  try {
    const ScratchDirectory scratch(file, "--scratch");
    FAIL() << "a regular file was accepted as a scratch directory";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(file.string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--scratch"), std::string::npos) << e.what();
  }
  std::filesystem::path made;
  {
    const ScratchDirectory scratch(dir.path(), "--scratch");
    made = scratch.path();
    EXPECT_TRUE(std::filesystem::is_directory(made));
    EXPECT_EQ(made.parent_path(), dir.path());
    std::ofstream(made / "leftover") << "x";
  }
  EXPECT_FALSE(std::filesystem::exists(made)) << "the scratch directory outlived its owner";
}

TEST(CalibrateBench, CpuModelComesFromCpuinfo) {
  EXPECT_EQ(cpu_model_from_cpuinfo("processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) "
                                   "Platinum 8368 CPU @ 2.40GHz\nflags\t\t: fpu\n"),
            "Intel(R) Xeon(R) Platinum 8368 CPU @ 2.40GHz");
  EXPECT_EQ(cpu_model_from_cpuinfo("processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd4f\n"), "CPU part 0xd4f");
  EXPECT_EQ(cpu_model_from_cpuinfo("processor\t: 0\n"), "");
}

TEST(CalibrateBench, HostInfoMatchesTheOperatingSystem) {
  const HostInfo host = probe_host();
  EXPECT_EQ(host.cores, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  EXPECT_GT(host.memory_bytes, 64.0 * 1024 * 1024);
  EXPECT_FALSE(host.host.empty());
  ASSERT_EQ(host.date.size(), 10u);  // YYYY-MM-DD
  EXPECT_EQ(host.date[4], '-');
  EXPECT_FALSE(host.cpu_model.empty());
}

}  // namespace
}  // namespace asteria::hw::calibrate

// `asteria calibrate --quick` run in-process: the profile it writes loads, measured fields say
// so, unmeasured ones say where they come from, and bad options fail naming themselves.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include "hwmodels/calibrate/calibration.hpp"
#include "hwmodels/calibrate/gpu_bench.hpp"
#include "hwmodels/profile_loader.hpp"
#include "tests/common/cli_harness.hpp"
#include "tests/io/temp_dir.hpp"

namespace asteria::hw::calibrate {
namespace {

using asteria::testing::run_cli;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// One quick calibration shared by the tests that read its profile (it takes a few seconds).
class CalibrateVerb : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::make_unique<asteria::testing::TempDir>();
    out_ = dir_->path() / "x.yaml";
    run_ = std::make_unique<asteria::testing::CliOutcome>(
        run_cli({"calibrate", "--quick", "--out", out_.string(), "--scratch", dir_->path().string()}));
  }
  static void TearDownTestSuite() {
    run_.reset();
    dir_.reset();
  }

  static std::unique_ptr<asteria::testing::TempDir> dir_;
  static std::filesystem::path out_;
  static std::unique_ptr<asteria::testing::CliOutcome> run_;
};

std::unique_ptr<asteria::testing::TempDir> CalibrateVerb::dir_;
std::filesystem::path CalibrateVerb::out_;
std::unique_ptr<asteria::testing::CliOutcome> CalibrateVerb::run_;

void expect_measured_positive(const Quantity& q, const char* field) {
  EXPECT_EQ(q.provenance, Provenance::measured) << field << ": " << q.source;
  EXPECT_GT(q.value, 0.0) << field;
  EXPECT_EQ(q.source.rfind("measured on ", 0), 0u) << field << ": " << q.source;
}

TEST_F(CalibrateVerb, WritesAProfileThatLoads) {
  ASSERT_EQ(run_->code, 0) << run_->err;
  const HardwareProfile p = load_profile(out_);
  EXPECT_EQ(p.name, "x");  // --out's stem
  EXPECT_TRUE(contains(read_text(out_), "# origin: asteria calibrate on ")) << read_text(out_);
  EXPECT_TRUE(contains(run_->out, "CPU SGEMM, 1 thread")) << run_->out;
  EXPECT_TRUE(contains(run_->out, "wrote " + out_.string())) << run_->out;
  // The scratch directory is cleaned up: only the profile is left.
  for (const auto& entry : std::filesystem::directory_iterator(dir_->path()))
    EXPECT_EQ(entry.path(), out_) << "left behind: " << entry.path();
}

TEST_F(CalibrateVerb, MeasuredFieldsAreMarkedMeasuredAndPositive) {
  ASSERT_EQ(run_->code, 0) << run_->err;
  const HardwareProfile p = load_profile(out_);
  expect_measured_positive(p.cpu.cores, "cpu.cores");
  EXPECT_EQ(p.cpu.cores.value, double(std::max(1u, std::thread::hardware_concurrency())));
  expect_measured_positive(p.cpu.gemm_flops_per_core, "cpu.gemm_flops_per_core");
  expect_measured_positive(p.cpu.memory_bandwidth, "cpu.memory_bandwidth");
  expect_measured_positive(p.cpu.eigh_seconds_per_n3, "cpu.eigh_seconds_per_n3");
  expect_measured_positive(p.cpu.qr_seconds_per_n3, "cpu.qr_seconds_per_n3");
  expect_measured_positive(p.host_memory.bytes, "host_memory.bytes");
  expect_measured_positive(p.nvme.read_bandwidth, "nvme.read_bandwidth");
  expect_measured_positive(p.nvme.write_bandwidth, "nvme.write_bandwidth");
  EXPECT_TRUE(contains(p.cpu.gemm_flops_per_core.source, "cblas_sgemm")) << p.cpu.gemm_flops_per_core.source;
  EXPECT_TRUE(contains(p.cpu.eigh_seconds_per_n3.source, "ssyevd")) << p.cpu.eigh_seconds_per_n3.source;
  EXPECT_TRUE(contains(p.nvme.read_bandwidth.source, dir_->path().string())) << p.nvme.read_bandwidth.source;
}

TEST_F(CalibrateVerb, UnmeasuredFieldsComeFromTheBaseAndSaySo) {
  ASSERT_EQ(run_->code, 0) << run_->err;
  const HardwareProfile p = load_profile(out_);
  const HardwareProfile base = load_profile(find_profile("h100-pcie-host"));
  EXPECT_EQ(p.node.units_per_node.value, base.node.units_per_node.value);
  EXPECT_EQ(p.node.units_per_node.source.rfind("not measured: copied from h100-pcie-host", 0), 0u);
  EXPECT_EQ(p.gpu.fp32_flops.value, base.gpu.fp32_flops.value);  // a peak: never measured
  EXPECT_TRUE(contains(p.gpu.fp32_flops.source, "not measured")) << p.gpu.fp32_flops.source;

  if (probe_gpu().count == 0) {
    // No device: the whole GPU section and the host links are the base's, saying so.
    EXPECT_TRUE(contains(run_->out, "GPU: not measured")) << run_->out;
    for (const Quantity* q : {&p.gpu.memory_bandwidth, &p.gpu.eigh_seconds_per_n3, &p.gpu.launch_latency,
                              &p.host_to_device.bandwidth, &p.device_to_host.bandwidth}) {
      EXPECT_EQ(q->source.rfind("not measured", 0), 0u) << q->source;
      EXPECT_TRUE(contains(q->source, "h100-pcie-host")) << q->source;
    }
    EXPECT_EQ(p.gpu.memory_bandwidth.value, base.gpu.memory_bandwidth.value);
  } else {
    expect_measured_positive(p.gpu.memory_bandwidth, "gpu.memory_bandwidth");
    expect_measured_positive(p.gpu.eigh_seconds_per_n3, "gpu.eigh_seconds_per_n3");
    expect_measured_positive(p.host_to_device.bandwidth, "host_to_device.bandwidth");
  }
}

TEST_F(CalibrateVerb, MeasuresTheTaskHandOff) {
  ASSERT_EQ(run_->code, 0) << run_->err;
  const HardwareProfile p = load_profile(out_);
  expect_measured_positive(p.cpu.task_latency, "cpu.task_latency");
  EXPECT_TRUE(contains(p.cpu.task_latency.source, "worker thread")) << p.cpu.task_latency.source;
  EXPECT_TRUE(contains(run_->out, "task hand-off")) << run_->out;
}

TEST(CalibrateVerbCpuDevice, WritesACpuDeviceProfileOfThisMachine) {
  asteria::testing::TempDir dir;
  const std::string out = dir.file("cpu.yaml");
  const auto run = run_cli({"calibrate", "--quick", "--device", "cpu", "--device-threads", "1", "--out", out,
                            "--scratch", dir.path().string()});
  ASSERT_EQ(run.code, 0) << run.err;
  const HardwareProfile p = load_profile(out);
  EXPECT_EQ(p.device, DeviceKind::cpu);
  EXPECT_EQ(p.gpu.device_threads.value, 1.0);
  EXPECT_TRUE(p.host_memory.unified);
  expect_measured_positive(p.gpu.fp32_flops, "gpu.fp32_flops");
  EXPECT_EQ(p.gpu.bf16_flops.value, p.gpu.fp32_flops.value);  // the CPU model computes fp32
  for (std::size_t i = 0; i < GemmEfficiency::kClasses; ++i) {
    const Quantity& q = p.gpu.gemm_efficiency.by_class(i);
    EXPECT_EQ(q.provenance, Provenance::derived) << q.source;
    EXPECT_TRUE(contains(q.source, "cblas_sgemm")) << q.source;
  }
  expect_measured_positive(p.gpu.memory_bandwidth, "gpu.memory_bandwidth");
  expect_measured_positive(p.gpu.launch_latency, "gpu.launch_latency");
  expect_measured_positive(p.gpu.wake_latency, "gpu.wake_latency");
  EXPECT_TRUE(contains(p.gpu.wake_latency.source, "idle device stream")) << p.gpu.wake_latency.source;
  expect_measured_positive(p.gpu.eigh_seconds_per_n3, "gpu.eigh_seconds_per_n3");
  expect_measured_positive(p.gpu.qr_seconds_per_n3, "gpu.qr_seconds_per_n3");
  expect_measured_positive(p.host_to_device.bandwidth, "host_to_device.bandwidth");
  expect_measured_positive(p.device_to_host.latency, "device_to_host.latency");
  expect_measured_positive(p.cpu.task_latency, "cpu.task_latency");
  EXPECT_LE(p.gpu.memory_bytes.value, p.host_memory.bytes.value * p.host_memory.usable_fraction.value);
  EXPECT_EQ(p.node.units_per_node.value, 1.0);
  EXPECT_EQ(p.node.nics_per_node.value, 0.0);
  EXPECT_TRUE(contains(run.out, "CPU device on 1 thread")) << run.out;
  EXPECT_FALSE(contains(run.out, "GPU 0 of")) << "a CPU-device profile looks for no GPU: " << run.out;
}

// A machine whose RAPL counter this process reads (a fake powercap tree whose package counts
// 50 W of wall time, kept by a thread): the profile's cpu_idle is measured from it.
TEST(CalibrateVerbPower, RaplCountersGiveTheCpuPower) {
  const asteria::testing::TempDir dir;
  const std::filesystem::path zone = dir.path() / "powercap" / "intel-rapl:0";
  std::filesystem::create_directories(zone);
  std::ofstream(zone / "name") << "package-0\n";
  std::ofstream(zone / "max_energy_range_uj") << "262143328850\n";
  const auto write_energy = [&](double microjoules) {
    const std::filesystem::path next = zone / "energy_uj.next";
    std::ofstream(next) << static_cast<long long>(microjoules) << "\n";
    std::filesystem::rename(next, zone / "energy_uj");  // whole, never half-written
  };
  write_energy(0.0);
  std::atomic<bool> done{false};
  std::thread counter([&] {
    const auto start = std::chrono::steady_clock::now();
    while (!done) {
      write_energy(50e6 * std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  });
  CalibrateOptions options;
  options.out = dir.path() / "p.yaml";
  options.effort = Effort::quick;
  options.powercap_root = dir.path() / "powercap";
  std::ostringstream out, progress;
  const CalibrateResult result = calibrate_to_file(options, out, progress);
  done = true;
  counter.join();
  const Quantity& idle = result.profile.power.cpu_idle;
  EXPECT_EQ(idle.provenance, Provenance::measured) << idle.source;
  EXPECT_NEAR(idle.value, 50.0, 5.0) << idle.source;  // the counter's rate, whatever the load
  EXPECT_TRUE(contains(idle.source, "RAPL package-0, at rest")) << idle.source;
  // The same rate with every core busy: no draw per busy core, never a negative one.
  EXPECT_GE(result.profile.power.cpu_core_busy.value, 0.0);
  EXPECT_TRUE(contains(progress.str(), "power at rest")) << progress.str();
}

TEST(CalibrateVerbErrors, DeviceOptionsAreChecked) {
  asteria::testing::TempDir dir;
  const auto unknown = run_cli({"calibrate", "--quick", "--device", "tpu", "--out", dir.file("x.yaml")});
  EXPECT_EQ(unknown.code, 1);
  EXPECT_TRUE(contains(unknown.err, "--device tpu")) << unknown.err;
  const auto without_cpu = run_cli({"calibrate", "--quick", "--device-threads", "2", "--out", dir.file("x.yaml")});
  EXPECT_EQ(without_cpu.code, 1);
  EXPECT_TRUE(contains(without_cpu.err, "only with --device cpu")) << without_cpu.err;
  const auto zero = run_cli({"calibrate", "--quick", "--device", "cpu", "--device-threads", "0", "--out",
                             dir.file("x.yaml")});
  EXPECT_EQ(zero.code, 1);
  EXPECT_TRUE(contains(zero.err, "--device-threads 0")) << zero.err;
  const int too_many = static_cast<int>(std::max(1u, std::thread::hardware_concurrency())) + 1;
  const auto many = run_cli({"calibrate", "--quick", "--device", "cpu", "--device-threads",
                             std::to_string(too_many), "--out", dir.file("x.yaml")});
  EXPECT_EQ(many.code, 1);
  EXPECT_TRUE(contains(many.err, "this machine's cores")) << many.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("x.yaml")));
}

TEST(CalibrateVerbErrors, AnUnknownBaseIsNamed) {
  asteria::testing::TempDir dir;
  const auto run = run_cli({"calibrate", "--quick", "--out", dir.file("x.yaml"), "--base", "no-such-machine"});
  EXPECT_EQ(run.code, 1);
  EXPECT_TRUE(contains(run.err, "--base no-such-machine")) << run.err;
  EXPECT_TRUE(contains(run.err, "gh200")) << "lists the shipped names: " << run.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("x.yaml")));
}

TEST(CalibrateVerbErrors, AnUnwritableScratchIsNamed) {
  asteria::testing::TempDir dir;
  const std::string not_a_directory = dir.file("plain-file");
  std::ofstream(not_a_directory) << "x";
  const auto run = run_cli({"calibrate", "--quick", "--out", dir.file("x.yaml"), "--scratch", not_a_directory});
  EXPECT_EQ(run.code, 1);
  EXPECT_TRUE(contains(run.err, "--scratch " + not_a_directory)) << run.err;
  EXPECT_TRUE(contains(run.err, "writable directory")) << run.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("x.yaml")));
}

TEST(CalibrateVerbErrors, OutMustBeInAnExistingDirectory) {
  asteria::testing::TempDir dir;
  const std::string out = dir.file("missing/x.yaml");
  const auto run = run_cli({"calibrate", "--quick", "--out", out});
  EXPECT_EQ(run.code, 1);
  EXPECT_TRUE(contains(run.err, out + ": --out: a file in an existing directory")) << run.err;
}

TEST(CalibrateVerbErrors, UsageErrors) {
  EXPECT_EQ(run_cli({"calibrate"}).code, 2);  // --out is required
  asteria::testing::TempDir dir;
  const auto both = run_cli({"calibrate", "--quick", "--thorough", "--out", dir.file("x.yaml")});
  EXPECT_EQ(both.code, 1);
  EXPECT_TRUE(contains(both.err, "--quick, --thorough")) << both.err;
  const auto help = run_cli({"calibrate", "--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_TRUE(contains(help.out, "not measured: copied from <base>")) << help.out;
}

}  // namespace
}  // namespace asteria::hw::calibrate

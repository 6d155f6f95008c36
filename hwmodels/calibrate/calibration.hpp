#pragma once
// `asteria calibrate`: measure this machine, fill a hardware profile with the measurements
// (each field saying how it was measured), take what cannot be measured from a base profile,
// write the profile and prove it loads.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "hwmodels/calibrate/cpu_bench.hpp"
#include "hwmodels/calibrate/cubic_fit.hpp"
#include "hwmodels/calibrate/device_bench.hpp"
#include "hwmodels/calibrate/file_bench.hpp"
#include "hwmodels/calibrate/gpu_bench.hpp"
#include "hwmodels/calibrate/host_info.hpp"
#include "hwmodels/calibrate/measurement.hpp"
#include "hwmodels/calibrate/power_bench.hpp"
#include "hwmodels/profile.hpp"

namespace asteria::hw::calibrate {

enum class Effort {
  quick,     // small sizes: a few seconds (tests, CI); numbers are rough
  standard,  // the default: about half a minute on a small machine
  thorough,  // larger sizes (eigh up to n = 2048), more repetitions
};

struct CalibrationPlan {
  SgemmPlan sgemm;                       // threads is set per run (1, then all cores)
  std::vector<std::int64_t> cpu_sizes;   // n of the eigh and QR timings
  int cpu_repeats = 3;
  std::size_t memcpy_bytes = 0;
  int memcpy_repeats = 5;
  FileIoPlan file;
  GpuPlan gpu;
  int task_samples = 50;  // round trips for cpu.task_latency
  // The device stream on host cores (device: cpu); measured when cpu_device.threads > 0, and
  // then no GPU is looked for.
  CpuDevicePlan cpu_device;
  PowerPlan power;  // the power section, where the machine has energy counters
};

// The plan; `cpu_device_threads` > 0 asks for a CPU-device profile on that many threads.
CalibrationPlan plan_for(Effort effort, int cpu_device_threads = 0);

struct Measurements {
  HostInfo host;
  Measured sgemm_one_thread;   // FLOP/s
  Measured sgemm_all_threads;  // FLOP/s of all host.cores threads together
  Measured core_contention;    // time ratio of one core's SGEMM beside busy cores over alone
  CubicTimings eigh;           // one BLAS thread
  CubicTimings qr;             // one BLAS thread
  Measured memcpy_one_thread;  // bytes/s
  Measured memcpy_all_threads; // bytes/s
  Measured task_latency;       // s per task handed to a host worker
  Measured elementwise;        // s per flop of an elementwise kernel's arithmetic, 1 thread
  FileIo file;
  std::filesystem::path file_directory;  // the directory the file measurements ran in
  GpuMeasurements gpu;
  CpuDeviceMeasurements cpu_device;  // measured for a CPU-device profile; then gpu is not
  PowerMeasurements power;           // from RAPL and NVML where this process may read them
};

// Runs the plan; file measurements in `scratch` (a directory that is removed afterwards is
// fine), described as being in `scratch_label`. Progress lines go to `progress`.
Measurements measure_machine(const CalibrationPlan& plan, const std::filesystem::path& scratch,
                             const std::filesystem::path& scratch_label, std::ostream& progress);

// The profile: measured fields from `measured` (kind measured, source naming the measurement,
// the host and the date), the rest copied from `base` (source "not measured: copied from
// <base_label>: ..."). Without a GPU the whole GPU section and the host links are copied. With
// a measured CPU device the profile has device: cpu, its gpu section describing that stream.
HardwareProfile assemble_profile(const Measurements& measured, const HardwareProfile& base,
                                 const std::string& base_label, const std::string& name);

// The human-readable table of what was measured.
void print_summary(const Measurements& measured, const std::string& base_label, std::ostream& out);

// The shipped profile that fills what calibrate cannot measure when no --base is given. Without
// a GPU it is the stand-in for the GPU section too (the format requires one): every copied field
// says "not measured".
inline constexpr const char* kDefaultBase = "h100-pcie-host";

struct CalibrateOptions {
  std::filesystem::path out;                    // the profile to write
  std::string base = kDefaultBase;              // shipped name or path
  std::optional<std::filesystem::path> scratch; // default: a temporary directory beside `out`
  Effort effort = Effort::standard;
  std::optional<std::size_t> io_bytes;          // file size of the file measurements
  std::string name;                             // profile name; default: out's file name stem
  DeviceKind device = DeviceKind::gpu;          // cpu: a CPU-device profile of this machine
  std::optional<int> device_threads;            // with cpu: the stream's threads (default all cores)
  std::filesystem::path powercap_root = "/sys/class/powercap";  // RAPL's zones (tests: a fake tree)
};

struct CalibrateResult {
  Measurements measurements;
  HardwareProfile profile;  // as re-loaded from `out` (origin: the file)
};

// The whole verb: validates the options (InputError naming the option and value), measures,
// writes `out` atomically, re-loads it with load_profile, prints the summary on `out_stream`.
CalibrateResult calibrate_to_file(const CalibrateOptions& options, std::ostream& out_stream, std::ostream& progress);

}  // namespace asteria::hw::calibrate

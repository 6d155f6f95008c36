#include "hwmodels/calibrate/calibration.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <ostream>
#include <system_error>
#include <thread>

#include "core/common/error.hpp"
#include "core/io/atomic_file.hpp"
#include "hwmodels/calibrate/elementwise_bench.hpp"
#include "hwmodels/calibrate/latency_bench.hpp"
#include "hwmodels/calibrate/memory_bench.hpp"
#include "hwmodels/profile_loader.hpp"

namespace asteria::hw::calibrate {
namespace {

constexpr std::size_t MiB = std::size_t{1} << 20;
constexpr std::size_t GiB = std::size_t{1} << 30;

// The base profile: a shipped name or a file. An unknown one is an error naming --base.
HardwareProfile load_base(const std::string& base) {
  std::filesystem::path path;
  try {
    path = find_profile(base);
  } catch (const InputError&) {
    std::string names;
    for (const std::string& name : shipped_profile_names()) names += (names.empty() ? "" : ", ") + name;
    throw InputError("--base " + base, "base profile",
                     "expected an existing profile file or a shipped profile name (" + names + ")");
  }
  return load_profile(path);
}

std::filesystem::path directory_of(const std::filesystem::path& file) {
  return file.has_parent_path() ? file.parent_path() : std::filesystem::path(".");
}

}  // namespace

CalibrationPlan plan_for(Effort effort, int cpu_device_threads) {
  CalibrationPlan plan;
  switch (effort) {
    case Effort::quick:
      plan.sgemm = {1, 0.02, 3, 1024};
      plan.cpu_sizes = {128, 256, 384};
      plan.cpu_repeats = 3;
      plan.memcpy_bytes = 32 * MiB;
      plan.memcpy_repeats = 3;
      plan.file = {32 * MiB, 4 * MiB, 32};
      plan.gpu = {2048, 2, {256, 512, 1024}, 2, 64 * MiB, 256 * MiB, 3, 200, 50};
      break;
    case Effort::standard:
      plan.sgemm = {1, 0.2, 5, 4096};
      plan.cpu_sizes = {256, 512, 768, 1024};
      plan.cpu_repeats = 5;
      plan.memcpy_bytes = 256 * MiB;
      plan.memcpy_repeats = 5;
      plan.file = {GiB, 8 * MiB, 256};
      plan.gpu = {8192, 5, {512, 1024, 2048}, 3, 256 * MiB, GiB, 5, 1000, 200};
      break;
    case Effort::thorough:
      plan.sgemm = {1, 0.5, 7, 6144};
      plan.cpu_sizes = {256, 512, 1024, 1536, 2048};
      plan.cpu_repeats = 3;
      plan.memcpy_bytes = GiB;
      plan.memcpy_repeats = 7;
      plan.file = {GiB, 8 * MiB, 1024};
      plan.gpu = {8192, 10, {512, 1024, 2048, 4096}, 3, GiB, 4 * GiB, 7, 5000, 1000};
      break;
  }
  // One n per GEMM size class (< 256, < 1024, < 4096, >= 4096); --quick stays below 4096 to
  // keep to seconds, and the profile's source says so.
  plan.cpu_device.class_sizes = effort == Effort::quick      ? std::array<std::int64_t, 4>{128, 512, 1024, 2048}
                                : effort == Effort::standard ? std::array<std::int64_t, 4>{128, 512, 2048, 4096}
                                                             : std::array<std::int64_t, 4>{128, 512, 2048, 6144};
  plan.cpu_device.threads = cpu_device_threads;
  plan.cpu_device.sgemm = plan.sgemm;
  plan.cpu_device.gemm_repeats = effort == Effort::quick ? 2 : 3;
  plan.cpu_device.solver_sizes = plan.cpu_sizes;
  plan.cpu_device.solver_repeats = plan.cpu_repeats;
  plan.cpu_device.memcpy_bytes = plan.memcpy_bytes;
  plan.cpu_device.memcpy_repeats = plan.memcpy_repeats;
  plan.cpu_device.calls = effort == Effort::quick ? 200 : 2000;
  plan.task_samples = effort == Effort::quick ? 30 : 200;
  plan.power.idle_seconds = plan.power.busy_seconds = effort == Effort::quick ? 0.3 : effort == Effort::standard ? 1.0 : 2.0;
  return plan;
}

Measurements measure_machine(const CalibrationPlan& plan, const std::filesystem::path& scratch,
                             const std::filesystem::path& scratch_label, std::ostream& progress) {
  Measurements m;
  m.host = probe_host();
  auto say = [&](const std::string& what) { progress << "calibrate: " << what << '\n' << std::flush; };
  PowerMeter power(plan.power);
  if (power.has_cpu() || power.has_gpu()) {
    say("power at rest (the machine's energy counters)");
    const auto rest = [&] {
      std::this_thread::sleep_for(std::chrono::duration<double>(plan.power.idle_seconds));
    };
    m.power.gpu_idle = power.gpu_while([&] { m.power.cpu_idle = power.cpu_while(rest, "at rest"); }, "at rest");
  }

  say("CPU SGEMM, 1 thread and " + std::to_string(m.host.cores) + " threads");
  SgemmPlan sgemm = plan.sgemm;
  sgemm.threads = 1;
  m.sgemm_one_thread = measure_sgemm(sgemm);
  sgemm.threads = m.host.cores;
  m.sgemm_all_threads = measure_sgemm(sgemm);
  if (power.has_cpu()) {
    say("CPU power with every core running SGEMM");
    m.power.cpu_all_cores = power.cpu_while(
        [&] {
          const WallClock::time_point start = WallClock::now();
          while (seconds_between(start, WallClock::now()) < plan.power.busy_seconds) (void)measure_sgemm(sgemm);
        },
        "SGEMM on all " + std::to_string(m.host.cores) + " cores");
  }
  if (m.host.cores > 1) {
    say("CPU core contention: 1-thread SGEMM alone and beside " + std::to_string(m.host.cores - 1) + " busy cores");
    m.core_contention = measure_core_contention(512, m.host.cores, plan.sgemm.repeats);
  }

  say("CPU eigh (ssyevd) and QR (sgeqrf + sorgqr), 1 thread");
  m.eigh = measure_eigh(plan.cpu_sizes, plan.cpu_repeats);
  m.qr = measure_qr(plan.cpu_sizes, plan.cpu_repeats);

  say("memcpy bandwidth; task hand-off latency");
  m.memcpy_one_thread = measure_memcpy(plan.memcpy_bytes, 1, plan.memcpy_repeats);
  m.memcpy_all_threads = measure_memcpy(plan.memcpy_bytes, m.host.cores, plan.memcpy_repeats);
  m.task_latency = measure_task_latency(plan.task_samples);
  if (m.memcpy_one_thread.valid())
    m.elementwise = measure_elementwise_seconds_per_flop(plan.memcpy_bytes / sizeof(float) / 4, plan.memcpy_repeats,
                                                         m.memcpy_one_thread.value);

  say("file write and read bandwidth in " + scratch_label.string());
  m.file = measure_file_io(scratch, plan.file);
  m.file_directory = scratch_label;

  if (plan.cpu_device.threads > 0) {
    m.cpu_device = measure_cpu_device(plan.cpu_device, progress);
    m.gpu.presence.reason = "a CPU-device profile: no GPU looked for";
    return m;
  }
  const GpuPresence presence = probe_gpu();
  if (presence.count > 0) {
    // The GPUs' draw averaged over the benchmarks (GEMMs most of the time, copies, solvers).
    m.power.gpu_busy = power.gpu_while([&] { m.gpu = measure_gpu(plan.gpu, progress); }, "the GPU benchmarks on device 0");
  } else {
    say("GPU: not measured (" + presence.reason + ")");
    m.gpu.presence = presence;
  }
  return m;
}

CalibrateResult calibrate_to_file(const CalibrateOptions& options, std::ostream& out_stream, std::ostream& progress) {
  // Every input is checked before the measurements, which take a while.
  if (options.out.empty() || !options.out.has_filename())
    throw InputError("--out", "output file", "expected a file path, found '" + options.out.string() + "'");
  const std::filesystem::path out_dir = directory_of(options.out);
  std::error_code ec;
  if (!std::filesystem::is_directory(out_dir, ec))
    throw InputError("--out " + options.out.string(), "output file",
                     "expected a file in an existing directory (" + out_dir.string() + " is not one)");
  const HardwareProfile base = load_base(options.base);
  if (options.io_bytes && *options.io_bytes == 0)
    throw InputError("--io-bytes", "file size", "expected a size > 0");
  const std::string name = options.name.empty() ? options.out.stem().string() : options.name;
  if (name.empty()) throw InputError("--name", "profile name", "expected a non-empty name");
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  int device_threads = 0;
  if (options.device == DeviceKind::cpu) {
    device_threads = options.device_threads.value_or(cores);
    if (device_threads < 1 || device_threads > cores)
      throw InputError("--device-threads " + std::to_string(device_threads), "device threads",
                       "expected 1 to " + std::to_string(cores) + " (this machine's cores)");
  } else if (options.device_threads) {
    throw InputError("--device-threads", "device threads", "expected only with --device cpu");
  }

  const std::filesystem::path scratch_parent = options.scratch.value_or(out_dir);
  const ScratchDirectory scratch(scratch_parent, options.scratch ? "--scratch" : "--out's directory");

  CalibrationPlan plan = plan_for(options.effort, device_threads);
  plan.power.powercap_root = options.powercap_root;
  if (options.io_bytes) plan.file.bytes = *options.io_bytes;

  CalibrateResult result;
  result.measurements = measure_machine(plan, scratch.path(), scratch_parent, progress);
  const HardwareProfile profile = assemble_profile(result.measurements, base, options.base, name);

  // Validate before writing, so an invalid profile never replaces a file; then prove the file.
  const std::string text = profile_to_yaml(profile);
  parse_profile(text, options.out.string());
  io::write_file_atomically(options.out, text);
  result.profile = load_profile(options.out);

  print_summary(result.measurements, options.base, out_stream);
  out_stream << "wrote " << options.out.string() << " (profile '" << result.profile.name
             << "', loads as a valid profile)\n";
  return result;
}

}  // namespace asteria::hw::calibrate

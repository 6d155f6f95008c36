// asteria calibrate: measure this machine and write a hardware profile.
#include <ostream>
#include <string>

#include "apps/asteria/output_dir.hpp"
#include "apps/asteria/calibrate_from_trace.hpp"
#include "apps/asteria/options.hpp"
#include "core/run/option_values.hpp"
#include "apps/asteria/verbs.hpp"
#include "core/common/error.hpp"
#include "hwmodels/calibrate/calibration.hpp"
#include "core/real/blas_kernel_choice.hpp"

namespace asteria::cli {
namespace {

namespace cal = hw::calibrate;

constexpr std::string_view kAbout =
    "Measures this machine and writes a hardware profile (format: hwmodels/README.md):\n"
    "  CPU      OpenBLAS SGEMM FLOP/s on 1 thread and on all cores; LAPACK ssyevd (eigh) and sgeqrf+sorgqr\n"
    "           (QR) on 1 thread at several n, c of t = c·n³ fitted by least squares on the larger sizes;\n"
    "           memcpy bandwidth on 1 thread and all cores; the round trip of a task through a worker\n"
    "           thread (cpu.task_latency); core count and memory size from the OS\n"
    "  files    sequential write (fsync included) and read bandwidth, 4 KiB random-read latency, in --scratch\n"
    "           (O_DIRECT where the file system allows it): the NVMe tier's figures\n"
    "  GPU      (device 0, when CUDA finds one) cuBLAS SGEMM and BF16 GEMM, cuSOLVER syevd and QR c·n³,\n"
    "           BF16 GEMM at one size per GEMM size class, pinned host<->device bandwidth and latency, device\n"
    "           memory size and copy bandwidth, launch latency\n"
    "  --device cpu  instead of a GPU, the device stream on N host threads (--device-threads, default all\n"
    "           cores), as the real backend's CPU mode runs the model: SGEMM peak and one size per size class,\n"
    "           memcpy bandwidth, per-call overhead (launch latency), eigh and QR on N threads; host links are\n"
    "           one-thread memcpy; memory unified, the device's share all usable host memory; one unit, no NIC\n"
    "  power    where this process reads the machine's energy counters: the CPU packages' draw (RAPL) at\n"
    "           rest and with every core running SGEMM (power.cpu_idle, cpu_core_busy), the GPUs' (NVML) at\n"
    "           rest and over the GPU benchmarks (power.gpu_idle, gpu_busy); the rest of the section copied\n"
    "Every measured field is marked 'measured' and its source names the measurement, host and date. What cannot\n"
    "be measured (peaks, node layout, NIC, NVMe capacity, and with no GPU the whole GPU section and the host\n"
    "links) is copied from --base, each such source saying 'not measured: copied from <base>'. Without a GPU\n"
    "the default base h100-pcie-host stands in for the GPU section (the format requires one). With several\n"
    "GPUs, host figures (cores, memory, memory bandwidth) are divided among them: a profile describes one GPU\n"
    "with its share of the host. The profile is written atomically, then re-loaded to prove it valid.";

constexpr std::string_view kDetails =
    "Effort: --quick takes seconds (small sizes, rough numbers: tests, CI); the default about half a minute on\n"
    "a small machine; --thorough adds n = 1536, 2048 to the factorizations and repeats more.\n"
    "Sizes accept B, KB, MB, GB (powers of 1000) and KiB, MiB, GiB (powers of 1024): --io-bytes 4GiB.\n";

po::options_description calibrate_options() {
  po::options_description o("Options");
  o.add_options()
      ("out", po::value<std::string>()->required()->value_name("FILE"), "the profile to write (YAML)")
      ("overwrite", "replace an existing --out file (refused otherwise)")
      ("base", po::value<std::string>()->default_value(cal::kDefaultBase)->value_name("NAME|PATH"),
       "profile that supplies the fields not measured (a shipped name or a file)")
      ("scratch", po::value<std::string>()->value_name("DIR"),
       "directory for the file measurements (default: a temporary directory beside --out)")
      ("io-bytes", po::value<std::string>()->value_name("SIZE"), "file size for the file measurements "
       "(default 1GiB, 32MiB with --quick)")
      ("quick", "small sizes: a few seconds, rough numbers")
      ("thorough", "larger sizes and more repetitions")
      ("name", po::value<std::string>()->value_name("NAME"), "the profile's name (default: --out's file name stem)")
      ("device", po::value<std::string>()->default_value("gpu")->value_name("KIND"),
       "gpu: measure device 0 when CUDA finds one; cpu: a CPU-device profile (device: cpu)")
      ("device-threads", po::value<int>()->value_name("N"), "with --device cpu: the device stream's OpenBLAS "
       "threads (default: all cores)")
      ("from-trace", po::value<std::string>()->value_name("TRACE"),
       "instead of measuring: fit the --base profile's coefficients to a recorded run's native trace "
       "(trace.csv of asteria train/synth --trace) by least squares")
      ("force", "with --from-trace: fit a trace of fewer than 3 steps, and apply coefficients whose standard error "
       "exceeds half their value (otherwise refused, and kept at the base's)");
  return o;
}

cal::CalibrateOptions options_from(const po::variables_map& v) {
  cal::CalibrateOptions o;
  o.out = v["out"].as<std::string>();
  o.base = v["base"].as<std::string>();
  if (v.count("scratch") != 0) o.scratch = v["scratch"].as<std::string>();
  if (v.count("io-bytes") != 0) o.io_bytes = run::parse_size(v["io-bytes"].as<std::string>(), "--io-bytes");
  const bool quick = v.count("quick") != 0;
  const bool thorough = v.count("thorough") != 0;
  if (quick && thorough) throw InputError("--quick, --thorough", "effort", "expected at most one of the two");
  o.effort = quick ? cal::Effort::quick : thorough ? cal::Effort::thorough : cal::Effort::standard;
  if (v.count("name") != 0) o.name = v["name"].as<std::string>();
  const std::string device = v["device"].as<std::string>();
  if (device != "gpu" && device != "cpu")
    throw InputError("--device " + device, "device", "expected gpu or cpu");
  o.device = device == "cpu" ? hw::DeviceKind::cpu : hw::DeviceKind::gpu;
  if (v.count("device-threads") != 0) o.device_threads = v["device-threads"].as<int>();
  return o;
}

}  // namespace

int calibrate_main(const Args& args, std::ostream& out, std::ostream& err) {
  int exit_code = 0;
  const auto values = parse_verb_options({"calibrate", "--out FILE [options]", kAbout, kDetails},
                                         calibrate_options(), args, out, err, exit_code);
  if (!values) return exit_code;
  prepare_output_file((*values)["out"].as<std::string>(), values->count("overwrite") != 0, "calibrate");
  if (values->count("from-trace") != 0) {
    calibrate_from_trace((*values)["from-trace"].as<std::string>(), (*values)["base"].as<std::string>(),
                         (*values)["out"].as<std::string>(),
                         values->count("name") != 0 ? (*values)["name"].as<std::string>() : std::string(),
                         values->count("force") != 0, out);
    return 0;
  }
  real::require_cpu_blas_kernels("asteria calibrate");  // measures what the runtime will run
  cal::calibrate_to_file(options_from(*values), out, err);
  return 0;
}

}  // namespace asteria::cli

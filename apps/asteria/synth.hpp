#pragma once
// `asteria synth`: the synthetic step driver (core/runtime/driver/) on the real or the fake
// backend, one configuration or the side-by-side runtime comparison (--compare).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/optim/hyperparameters.hpp"
#include "core/platform/platform.hpp"
#include "core/real/device_model.hpp"
#include "core/runtime/driver/driver_options.hpp"
#include "core/runtime/driver/run_summary.hpp"
#include "core/runtime/driver/synthetic_model.hpp"

namespace asteria::real {
class WorkLog;
}

namespace asteria::cli {

enum class SynthBackend { real, fake };

struct SynthSettings {
  optim::OptimizerKind optimizer = optim::OptimizerKind::shampoo;
  optim::Hyperparameters hp = optim::default_hyperparameters(optim::OptimizerKind::shampoo);
  runtime::PlacementPolicy placement = runtime::PlacementPolicy::device;
  int lookahead = 2;
  int staleness = 0;
  runtime::PublishPolicy publish = runtime::PublishPolicy::deterministic;
  std::vector<std::pair<linalg::index, linalg::index>> shapes;  // one weight matrix per layer
  std::optional<double> layer_flops;   // forward + backward flops of one layer per step
  std::optional<double> step_seconds;  // modelled forward + backward seconds of a step
  int steps = 40;
  int warmup_steps = 2;
  // Extend the warm-up to the first publication of a refresh (runtime::first_publication_step),
  // unless the user chose the warm-up: measured steps are then steady state (updates use a
  // preconditioner; in emulated mode, warm-started refreshes start from a real basis).
  bool warmup_to_first_publication = true;
  runtime::NumericsMode mode = runtime::NumericsMode::emulated;
  SynthBackend backend = SynthBackend::real;
  int host_threads = 0;  // 0: all cores but one
  std::size_t device_budget = std::size_t{1} << 30;
  std::size_t host_budget = std::size_t{4} << 30;
  std::size_t nvme_budget = std::size_t{64} << 30;
  std::optional<std::filesystem::path> nvme_dir;
  real::DeviceModel device_model;   // paces the device stream (emulated kernels)
  // emulated: device work lasts its modelled time; cpu: its body runs on a core for as long as it
  // takes (asteria train's CPU model).
  real::DeviceMode device_mode = real::DeviceMode::emulated;
  bool record_trace = false;        // real backend: keep a WorkRecord per finished work (work_log())
  double fake_host_flops = 20e9;    // fake backend: refresh speed of one host worker
  runtime::GradientSpec gradients;
  bool progress = true;
};

// Throws InputError naming the option for settings out of their domain.
void validate(const SynthSettings& settings);

// The layers with their modelled costs (from --layer-flops or --step-seconds).
runtime::SyntheticModelSpec model_spec(const SynthSettings& settings);

// A platform built from the settings, with what it needs kept alive (the NVMe store).
class SynthPlatform {
 public:
  explicit SynthPlatform(const SynthSettings& settings);
  ~SynthPlatform();
  SynthPlatform(const SynthPlatform&) = delete;
  SynthPlatform& operator=(const SynthPlatform&) = delete;
  platform::Platform& get() noexcept { return *platform_; }
  int host_threads() const noexcept { return host_threads_; }
  // "real backend, emulated device kernels (...), 1 host worker thread, ..." for reports.
  const std::string& description() const noexcept { return description_; }
  // What every executor and copy engine ran, when: the real backend with record_trace only.
  real::WorkLog* work_log() const noexcept { return work_log_; }

 private:
  struct Nvme;
  std::unique_ptr<Nvme> nvme_;  // before the platform: outlives it
  std::unique_ptr<platform::Platform> platform_;
  int host_threads_ = 1;
  std::string description_;
  real::WorkLog* work_log_ = nullptr;  // in *platform_
};

struct SynthRun {
  std::string name;  // "shampoo async S=5"
  SynthSettings settings;
  std::string platform;  // SynthPlatform::description()
  std::size_t state_bytes = 0;
  std::size_t blocks = 0;
  std::vector<runtime::StepRecord> records;
  runtime::RunSummary summary;
  std::int64_t refresh_failures = 0;
};

// Runs one configuration. Progress on `progress` once it has run for more than a second.
SynthRun run_synth(const SynthSettings& settings, const std::string& name, std::ostream& progress);

// Output files.
std::string steps_csv_header(bool with_config);
std::string steps_csv_rows(const SynthRun& run, bool with_config);
std::string steps_csv_rows(const std::string& name, std::span<const runtime::StepRecord> records, bool with_config);
std::string synth_summary_json(const SynthRun& run);
// Creates `dir` if missing; throws InputError naming it otherwise.
void ensure_directory(const std::filesystem::path& dir);

// --compare: AdamW, then Shampoo and SOAP with synchronous, S = 1 and S = 5 refreshes.
struct CompareResult {
  SynthSettings base;
  double refresh_ratio_target = 3.0;
  double shampoo_refresh_s = 0.0;  // one refresh of every block, measured at startup
  double soap_refresh_s = 0.0;
  double step_compute_s = 0.0;  // modelled forward + backward time of a step
  bool step_given = false;      // --step-seconds or --layer-flops chose it
  std::vector<SynthRun> runs;
};
// `hyperparameters` gives each optimizer's settings (defaults plus the user's overrides).
CompareResult run_compare(const SynthSettings& base, double refresh_ratio,
                          const std::function<optim::Hyperparameters(optim::OptimizerKind)>& hyperparameters,
                          std::ostream& out, std::ostream& progress);
void print_compare(const CompareResult& result, std::ostream& out);
void write_compare(const CompareResult& result, const std::filesystem::path& dir);

}  // namespace asteria::cli

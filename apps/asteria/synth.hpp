#pragma once
// `asteria synth`: the runtime on a synthetic training loop, on a real clock (the real backend:
// threads, emulated or CPU device kernels, real refreshes) or on the one-thread fake backend
// (--time simulated), one configuration or the side-by-side comparison (--compare).
// The stack is either --shape/--layers/--rows/--cols matrices with costs from --step-seconds or
// --layer-flops, or the weights of a transformer model config (--model), as `asteria sim` runs it.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "apps/asteria/run_platform.hpp"
#include "apps/asteria/run_report.hpp"
#include "apps/asteria/run_config_options.hpp"
#include "core/platform/platform.hpp"
#include "core/real/device_model.hpp"
#include "core/runtime/driver/synthetic_model.hpp"

namespace asteria::cli {

// The stack's shapes: --shape's list, or --layers matrices of --rows x --cols (defaults 8 of
// 512 x 512); none with --model.
std::vector<std::pair<linalg::index, linalg::index>> synth_shapes(const RunConfig& spec);
// The roofline device that paces device work without --hw.
real::DeviceModel synth_device_model(const RunConfig& spec);

// Throws InputError naming the option for settings out of their domain or given together where
// they exclude each other (the spec's own validate() included).
void validate_synth(const RunConfig& settings);

// The layers with their modelled costs: the --model's weights, or the --shape stack with costs
// from --layer-flops or --step-seconds.
runtime::SyntheticModelSpec model_spec(const RunConfig& settings);
// Modelled seconds of a device work on the settings' device (the --hw profile or the roofline).
std::function<platform::Seconds(const platform::Cost&)> device_seconds(const RunConfig& settings);

// The device time of the settings: the --hw profile's cost model, or the roofline device model.
DeviceTime device_time(const RunConfig& settings);

// Runs one configuration (the trace, with --trace, goes to spec.out, prepared by the caller).
// Progress on `progress` once it has run for more than a second.
RunReport run_synth(const RunConfig& settings, const std::string& name, std::ostream& progress);

// --compare: AdamW, then Shampoo and SOAP with synchronous, S = 1 and S = 5 refreshes.
struct CompareResult {
  RunConfig base;
  double refresh_ratio_target = 3.0;
  double shampoo_refresh_s = 0.0;  // one refresh of every block, measured at startup
  double soap_refresh_s = 0.0;
  double step_compute_s = 0.0;  // modelled forward + backward time of a step
  bool step_given = false;      // --step-seconds, --layer-flops or --model chose it
  std::vector<RunReport> runs;
};
// `hyperparameters` gives each optimizer's settings (defaults plus the user's overrides).
CompareResult run_compare(const RunConfig& base, double refresh_ratio,
                          const std::function<optim::Hyperparameters(optim::OptimizerKind)>& hyperparameters,
                          std::ostream& out, std::ostream& progress);
void print_compare(const CompareResult& result, std::ostream& out);
// table.csv, table.md, steps.csv (with a config column) and summary.json (one object per run).
void write_compare(const CompareResult& result, const std::filesystem::path& dir);

}  // namespace asteria::cli

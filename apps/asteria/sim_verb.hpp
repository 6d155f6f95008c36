#pragma once
// `asteria sim`: the runtime's step driver on the SimGrid platform (sim/) built from a hardware
// profile (hwmodels/), on a transformer workload (core/workload/).
#include <cstddef>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "core/optim/hyperparameters.hpp"
#include "core/runtime/driver/driver_options.hpp"
#include "core/runtime/driver/run_summary.hpp"
#include "core/runtime/store/store_errors.hpp"
#include "core/runtime/store/store_options.hpp"
#include "sim/recorder.hpp"
#include "traces/timeline.hpp"

namespace asteria::cli {

enum class SimDataMode { data_free, data_true };

struct SimSettings {
  std::string hw = "gh200";       // profile name or path
  std::string model = "tiny";     // model config name or path
  optim::OptimizerKind optimizer = optim::OptimizerKind::soap;
  optim::Hyperparameters hp = optim::default_hyperparameters(optim::OptimizerKind::soap);
  runtime::PlacementPolicy placement = runtime::PlacementPolicy::device;
  int lookahead = 2;
  int staleness = 0;
  int steps = 30;
  std::optional<int> warmup_steps;  // default: until the first refresh is published
  SimDataMode mode = SimDataMode::data_free;
  // GPUs and whole nodes simulated; units fill nodes of profile.units_per_node() in order. Either
  // or both may be given (both must agree); neither: one unit.
  std::optional<int> units;
  std::optional<int> nodes;
  int host_workers = 0;  // per unit; 0: the profile's default
  std::uint64_t seed = 1;
  bool progress = true;
  bool trace = true;
};

struct SimOutcome {
  SimSettings settings;
  std::string hw_name;
  std::string model_name;
  int units = 1;  // resolved from the settings and the profile
  int nodes = 1;  // ceil(units / units_per_node)
  std::size_t parameters = 0;
  std::size_t blocks = 0;       // per unit
  std::size_t state_bytes = 0;  // optimizer state per unit
  std::size_t model_device_bytes = 0;  // weights, gradients, activations kept on the device
  std::array<std::size_t, 3> capacity_bytes{};  // per tier, per unit, for optimizer state
  bool fits = true;
  std::vector<runtime::TierShortfall> shortfall;
  std::string fit_message;
  std::vector<runtime::StepRecord> records;  // unit 0
  runtime::RunSummary summary;               // unit 0
  double simulated_seconds = 0.0;
  double wall_seconds = 0.0;
  sim::ActivityCounts activities;
  traces::Timeline timeline;
};

struct UnitCount {
  int units = 1;
  int nodes = 1;
};

// Units and nodes from --units and --nodes on a profile of `units_per_node` GPUs per node:
// --nodes N alone is N whole nodes; --units U alone fills ceil(U / units_per_node) nodes; both
// must agree ((N-1)·units_per_node < U <= N·units_per_node). Throws InputError naming the option.
UnitCount resolve_unit_count(std::optional<int> units, std::optional<int> nodes, int units_per_node,
                             const std::string& hw_name);

// Throws InputError for settings out of their domain or for bad profile/model files.
SimOutcome run_sim(const SimSettings& settings, std::ostream& progress);

std::string sim_summary_json(const SimOutcome& outcome);
// Writes steps.csv (when the run fits), summary.json and trace.json (when enabled) into `dir`.
void write_sim(const SimOutcome& outcome, const std::filesystem::path& dir);
void print_sim(const SimOutcome& outcome, std::ostream& out);

std::string_view to_string(SimDataMode mode) noexcept;

}  // namespace asteria::cli

#pragma once
// `asteria sim`: the runtime's step driver on the SimGrid platform (sim/) built from a hardware
// profile (hwmodels/), on a transformer workload (core/workload/), with the shared run spec.
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>

#include "core/plan/step_plan.hpp"
#include "apps/asteria/run_report.hpp"
#include "apps/asteria/run_config_options.hpp"
#include "core/runtime/driver/synthetic_model.hpp"
#include "core/workload/model_memory.hpp"
#include "core/workload/workload_model.hpp"
#include "hwmodels/profile.hpp"
#include "sim/simulation_options.hpp"

namespace asteria::cli {

struct UnitCount {
  int units = 1;
  int nodes = 1;
};

// Units and nodes from --units and --nodes on a profile of `units_per_node` GPUs per node:
// --nodes N alone is N whole nodes; --units U alone fills ceil(U / units_per_node) nodes; both
// must agree ((N-1)·units_per_node < U <= N·units_per_node). Throws InputError naming the option.
UnitCount resolve_unit_count(std::optional<int> units, std::optional<int> nodes, int units_per_node,
                             const std::string& hw_name);

// Runs the simulation of `spec` (its machine: spec.sim; validated first; --out must have been
// prepared: the trace goes there). Throws InputError for settings out of their domain or bad
// profile/model files; a configuration that does not fit is a result (report.fits false), not an
// error.
RunReport run_sim(const RunConfig& spec, std::ostream& progress);

// What a simulation runs: the model's layers (with their device costs), its weights as the
// optimizer blocks them, and what the model itself keeps on the device. From a model config
// (run_sim) or from a recorded trace (replay).
struct SimWorkload {
  std::string name;
  std::size_t parameters = 0;
  workload::WorkloadModel weights;  // config name and weights: what optimizer_blocks reads
  runtime::SyntheticModelSpec stack;
  // What the model itself holds per tier (weights, gradients, activations); empty: derived from
  // `weights` and the run's schedule (workload/model_memory.hpp).
  std::optional<workload::ModelMemory> model_memory;
  // The optimizer state's own budgets (a recorded real run's --device-budget ...), capped by the
  // profile's; empty: the profile's budgets less the model's device bytes.
  std::optional<sim::TierBudgets> state_budgets;
  // Where host-placed optimizer ops are computed and charged (a replay: where the recorded run
  // computed them).
  plan::NumericsSite numerics_site = plan::NumericsSite::own_launch;
  // Metadata written into the trace beside the run's (a replay names what it replays).
  std::map<std::string, std::string> trace_metadata;
};

// The workload a model config describes (layers from core/workload), gradients seeded by `seed`.
// `batch` > 0: sequences per step and unit, replacing the config's micro_batch.
SimWorkload workload_from_config(const std::string& model, std::uint64_t seed, int batch = 0);

// Runs `workload` on `profile` under `spec` (validated first).
RunReport simulate(const RunConfig& spec, const hw::HardwareProfile& profile, const SimWorkload& workload,
                   std::ostream& progress);

}  // namespace asteria::cli

#pragma once
// What a simulation simulates: the hardware profile of one unit (a GPU with its CPU cores, host
// memory, host links and NVMe), how many units, how many refresh workers each unit runs, whether
// work bodies run, and the memory budget of each tier.
#include <cstddef>
#include <optional>
#include <string>

#include "core/platform/execution.hpp"
#include "hwmodels/cost_model.hpp"
#include "hwmodels/profile.hpp"
#include "hwmodels/unit_budgets.hpp"
#include "sim/collective/flow_schedule.hpp"
#include "sim/recorder.hpp"

namespace asteria::sim {

// The unit's budgets and default workers come from the profile (hwmodels/unit_budgets.hpp).
using hw::TierBudgets;
using hw::budgets_from;
using hw::default_host_workers;

struct SimulationOptions {
  hw::HardwareProfile profile;
  // GPUs simulated; each is one unit (one rank, one Platform). Units fill nodes in order,
  // profile.units_per_node() per node, so nodes = ceil(units / units_per_node); the profile's
  // node.nodes is not used.
  int units = 1;
  int host_workers_per_unit = 0;  // 0: default_host_workers(profile)
  // values or refresh (data-true): work bodies run and regions hold bytes; shapes (data-free):
  // bodies are skipped and regions are sizes only (host_address is null, copies move nothing).
  // Time comes from the model either way.
  platform::Numerics numerics = platform::Numerics::values;
  std::optional<TierBudgets> budgets;  // per unit; empty: budgets_from(profile)
  hw::Precision gemm_precision = hw::Precision::bf16;  // the training step's GEMM peak
  SinkForUnit activities;  // where each unit's activities are recorded (empty: nowhere)
  // How the ranks' collectives move their bytes (sim/collective/flow_schedule.hpp).
  // None: each collective runs the algorithm and protocol NCCL would pick for its size and group
  // (collective/collective_choice.hpp).
  std::optional<collective::Algorithm> collective_algorithm;

  // Shortcuts for simulations of many units (opt-in; README "Speed of the simulator").
  // Representative ranks: when 0 < simulated_units < units, only units 0 .. simulated_units-1
  // (whole nodes, data-free) have a platform and run a main; the others are mirrors, members of
  // every collective that run nothing (sim/comm/comm_hub.hpp). Exact, bit for bit, when every
  // rank runs the same work at the same times (tests/sim/representative_test.cpp); a split of a
  // group with mirrors throws. 0: every unit runs.
  int simulated_units = 0;
  // Approximate: a ring's steps run as one flow each (collective::RunFlowsOptions); the error
  // against the exact run is reported by bench/sim_scale.cpp.
  bool coalesce_ring_steps = false;
  // A model choice, not a shortcut: each group runs its collectives one at a time, in call order,
  // as NCCL runs a communicator's collectives on one stream and the MPI backend on its one
  // progress thread (the default). Off: a collective starts as soon as its members have called
  // it, concurrently with the group's earlier ones (they share links). Concurrent collectives
  // cost the simulator much more: thousands of flows share links at once (a sharded 7B step).
  bool serial_collectives = true;
  // Exact, on by default: a collective whose predicted time is exact (collective::Prediction)
  // and that starts while no other collective holds links of its nodes takes that time instead of
  // running its flows (ActivityCounts counts those, and any collective that then overlaps one).
  // Off: every collective runs its flows (a check; slow at scale).
  bool predicted_collectives = true;
  // Simulated actors the run may hold at once; 0: as many as the process can (max_simulated_actors).
  long long max_actors = 0;
  // Straggler injection: unit u's host workers compute host_slowdown[u] times slower (>= 1;
  // missing entries: 1). Memory traffic keeps its speed.
  std::vector<double> host_slowdown;
};

// The units that run: simulated_units when it is set and below units, otherwise units.
int running_units(const SimulationOptions& options);

// Units (mirrors included) whose SimGrid platform builds in reasonable time. SimGrid 3.32 checks
// every new link and host name against every zone (one per node) and scans every host when a
// zone is sealed, so the build grows as units^2 whatever runs: measured on a loaded 2-core
// machine, 8000 units in 46 s (2000 nodes of gh200-alps) and 53 s (1000 of a100-80gb), 12000 in
// 95 s and 113 s: about kPlatformSecondsPerUnitSquared x units^2. validate() refuses a platform
// whose estimate passes kPlatformBuildBudgetSeconds (a study of many runs pays it each time).
inline constexpr double kPlatformSecondsPerUnitSquared = 8.3e-7;
inline constexpr double kPlatformBuildBudgetSeconds = 120.0;
int max_platform_units();
// Throws InputError(source, field, ...) with the limit, and the options to change, for more than
// max_platform_units() units.
void check_platform_units(int units, const hw::HardwareProfile& profile, const std::string& source,
                          const std::string& field);

// Simulated actors a process can hold: SimGrid gives each its own stack mapping, and past
// vm.max_map_count it aborts (read from /proc, Linux's default otherwise). validate() refuses
// running units x (1 + kActorsPerUnit) beyond it; host workers past the first start as needed.
long long max_simulated_actors();
inline constexpr int kActorsPerUnit = 8;  // the unit's training loop, device stream, copy engines, ...

// Throws asteria::InputError (naming the profile, the field and what was expected) for options
// or profile values the simulated platform cannot be built from.
void validate(const SimulationOptions& options);

}  // namespace asteria::sim

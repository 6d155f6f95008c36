#pragma once
// `asteria sim`: the runtime's step driver on the SimGrid platform (sim/) built from a hardware
// profile (hwmodels/), on a transformer workload (core/workload/), with the shared run spec.
#include <iosfwd>
#include <optional>
#include <string>

#include "apps/asteria/run_report.hpp"
#include "apps/asteria/run_spec.hpp"

namespace asteria::cli {

struct SimSettings {
  RunSpec spec = default_run_spec(RunVerb::sim);
  // GPUs and whole nodes simulated; units fill nodes of profile.units_per_node() in order. Either
  // or both may be given (both must agree); neither: one unit.
  std::optional<int> units;
  std::optional<int> nodes;
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

// Runs the simulation (spec validated first; --out must have been prepared: the trace goes
// there). Throws InputError for settings out of their domain or bad profile/model files; a
// configuration that does not fit is a result (report.fits false), not an error.
RunReport run_sim(const SimSettings& settings, std::ostream& progress);

}  // namespace asteria::cli

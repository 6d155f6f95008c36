// Shortcuts for simulations of many GPUs, on whole `asteria sim` runs (cli::simulate) of 16
// data-parallel units (4 gh200-alps nodes): representative ranks (SimulationOptions::
// simulated_units) give every step time bit for bit equal to the full run's when every rank runs
// the same work; coalesced ring steps (approximate) stay close. Each run is a child process.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <sstream>
#include <string>
#include <vector>

#include "apps/asteria/sim_verb.hpp"
#include "hwmodels/profile_loader.hpp"
#include "sim/child_process.hpp"

namespace asteria::sim {
namespace {

struct Shortcuts {
  std::optional<int> simulated_nodes;
  bool coalesce_ring_steps = false;
};

struct StepTimes {
  std::vector<double> step_s;     // unit 0's, every step (warm-up included)
  std::vector<double> compute_s;
  double moved_bytes = 0.0;       // between tiers, over every step
  double simulated_units = 0.0;
};

// A 16-unit run of the tiny model with SOAP, tiered state that does not fit the device (it moves
// every step), S = 1 and refreshes replicated on every rank (so every rank runs the same work).
StepTimes run_sixteen_units(const Shortcuts& shortcuts) {
  const ChildOutcome outcome = run_in_child_process([&](ChildReport& report) {
    cli::RunConfig spec = cli::default_run_config(cli::RunVerb::sim);
    spec.hw = "gh200-alps";
    spec.model = "tiny";
    spec.optimizer = optim::OptimizerKind::soap;
    spec.hp = optim::default_hyperparameters(spec.optimizer);
    spec.placement = runtime::PlacementPolicy::tiered;
    spec.staleness = 1;
    spec.share_refreshes = false;
    spec.steps = 4;
    spec.numerics = platform::Numerics::shapes;
    spec.progress = false;
    spec.sim.units = 16;
    spec.sim.simulated_nodes = shortcuts.simulated_nodes;
    spec.sim.coalesce_ring_steps = shortcuts.coalesce_ring_steps;
    const hw::HardwareProfile profile = hw::load_profile(hw::find_profile("gh200-alps"));
    cli::SimWorkload workload = cli::workload_from_config("tiny", spec.seed);
    workload.state_budgets = TierBudgets{std::size_t{1} << 20, std::size_t{1} << 30, std::size_t{1} << 30, 0};
    std::ostringstream progress;
    const cli::RunReport r = cli::simulate(spec, profile, workload, progress);
    if (!r.fits) throw std::runtime_error("does not fit: " + r.fit_message);
    std::string text;
    char hex[64];
    for (const runtime::StepRecord& s : r.records) {
      std::snprintf(hex, sizeof hex, "step %a %a\n", s.step_time_s, s.compute_s);
      text += hex;
    }
    for (const auto& [key, value] : r.extra)
      if (key == "simulated_units") text += "simulated_units " + std::to_string(value.get<double>()) + "\n";
    text += "moved " + std::to_string(r.summary.bytes_moved.total()) + "\n";
    report.write(text);
  });
  if (!outcome.succeeded()) throw std::runtime_error("the run failed: " + outcome.describe());
  StepTimes times;
  std::istringstream in(outcome.report);
  for (std::string key; in >> key;) {
    std::string a, b;
    if (key == "step") {
      in >> a >> b;
      times.step_s.push_back(std::strtod(a.c_str(), nullptr));
      times.compute_s.push_back(std::strtod(b.c_str(), nullptr));
    } else if (key == "moved") {
      in >> times.moved_bytes;
    } else if (key == "simulated_units") {
      in >> times.simulated_units;
    }
  }
  return times;
}

// The ranks are alike, so by default (no simulated_nodes) the first node's stand for all; with 1
// or 2 nodes asked for, the same: each equals the run of every node (4 asked for) bit for bit.
TEST(RepresentativeRanks, SixteenUnitRunEqualsTheFullRunBitForBit) {
  const StepTimes full = run_sixteen_units({4, false});
  ASSERT_FALSE(full.step_s.empty());
  EXPECT_EQ(full.simulated_units, 16.0);
  EXPECT_GT(full.moved_bytes, 0.0) << "the state moves between tiers every step";
  for (const std::optional<int> nodes : {std::optional<int>{}, std::optional<int>{1}, std::optional<int>{2}}) {
    const StepTimes shortcut = run_sixteen_units({nodes, false});
    const int nodes_simulated = nodes.value_or(1);
    EXPECT_EQ(shortcut.simulated_units, 4.0 * nodes_simulated);
    ASSERT_EQ(shortcut.step_s.size(), full.step_s.size());
    for (std::size_t i = 0; i < full.step_s.size(); ++i) {
      EXPECT_EQ(shortcut.step_s[i], full.step_s[i])
          << "step " << i + 1 << ", " << nodes_simulated << " node(s) simulated";
      EXPECT_EQ(shortcut.compute_s[i], full.compute_s[i]) << "step " << i + 1;
    }
  }
}

TEST(RepresentativeRanks, CoalescedRingStepsStayCloseToTheFullRun) {
  const StepTimes full = run_sixteen_units({4, false});
  const StepTimes coalesced = run_sixteen_units({1, true});
  ASSERT_EQ(coalesced.step_s.size(), full.step_s.size());
  for (std::size_t i = 0; i < full.step_s.size(); ++i)
    EXPECT_NEAR(coalesced.step_s[i], full.step_s[i], 0.05 * full.step_s[i]) << "step " << i + 1;
}

}  // namespace
}  // namespace asteria::sim

// `asteria sim --nodes/--units`: how whole nodes and GPU counts resolve against a profile's units
// per node, what summary.json and the header report, the errors for counts that disagree, and a
// study grid with a `nodes` axis handing its value to the run; the energy summary.json reports
// from the profile's power.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "apps/asteria/sim_verb.hpp"
#include "apps/asteria/study_spec.hpp"
#include "core/common/error.hpp"
#include "hwmodels/profile_loader.hpp"
#include "sim/child_process.hpp"
#include "tests/apps/child_cli.hpp"
#include "tests/common/cli_harness.hpp"
#include "tests/io/temp_dir.hpp"

namespace asteria::cli {
namespace {

using testing::CliOutcome;
using testing::TempDir;

CliOutcome run_cli(const Args& args) { return testing::run_cli_in_child(args); }

nlohmann::json read_json(const std::filesystem::path& file) {
  std::ifstream in(file);
  return nlohmann::json::parse(in);
}

// A short data-free run of the toy model; gh200-alps has 4 units (GPUs) per node.
Args tiny_sim(const std::filesystem::path& out, const std::vector<std::string>& counts) {
  Args args = {"sim", "--hw", "gh200-alps", "--model", "tiny", "--steps", "2", "--no-progress",
               "--out", out.string()};
  args.insert(args.end(), counts.begin(), counts.end());
  return args;
}

// The InputError of resolve_unit_count, or a test failure when it does not throw.
InputError unit_count_error(std::optional<int> units, std::optional<int> nodes, int per_node) {
  try {
    resolve_unit_count(units, nodes, per_node, "box");
  } catch (const InputError& e) {
    return e;
  }
  ADD_FAILURE() << "expected an InputError";
  return InputError("", "", "");
}

TEST(SimUnitCount, NodesAloneAreWholeNodes) {
  const UnitCount c = resolve_unit_count(std::nullopt, 3, 4, "box");
  EXPECT_EQ(c.units, 12);
  EXPECT_EQ(c.nodes, 3);
  const UnitCount one_per_node = resolve_unit_count(std::nullopt, 5, 1, "box");
  EXPECT_EQ(one_per_node.units, 5);
  EXPECT_EQ(one_per_node.nodes, 5);
}

TEST(SimUnitCount, UnitsAloneFillNodesInOrder) {
  EXPECT_EQ(resolve_unit_count(std::nullopt, std::nullopt, 4, "box").units, 1);  // the default: one GPU
  EXPECT_EQ(resolve_unit_count(std::nullopt, std::nullopt, 4, "box").nodes, 1);
  EXPECT_EQ(resolve_unit_count(4, std::nullopt, 4, "box").nodes, 1);
  EXPECT_EQ(resolve_unit_count(5, std::nullopt, 4, "box").nodes, 2);  // a partly filled second node
  EXPECT_EQ(resolve_unit_count(8, std::nullopt, 4, "box").nodes, 2);
  EXPECT_EQ(resolve_unit_count(9, std::nullopt, 4, "box").nodes, 3);
}

TEST(SimUnitCount, BothGivenMustAgree) {
  // --nodes 2 of 4 units per node holds 5 to 8 units: both ends are accepted.
  EXPECT_EQ(resolve_unit_count(5, 2, 4, "box").units, 5);
  EXPECT_EQ(resolve_unit_count(5, 2, 4, "box").nodes, 2);
  EXPECT_EQ(resolve_unit_count(8, 2, 4, "box").units, 8);
  for (const int units : {4, 9, 1}) {
    SCOPED_TRACE(units);
    const InputError e = unit_count_error(units, 2, 4);
    EXPECT_EQ(e.field(), "--nodes");
    const std::string message = e.what();
    EXPECT_NE(message.find("--units " + std::to_string(units)), std::string::npos) << message;
    EXPECT_NE(message.find("5 to 8 units"), std::string::npos) << message;
  }
}

TEST(SimUnitCount, CountsBelowOneAreRejected) {
  EXPECT_EQ(unit_count_error(std::nullopt, 0, 4).field(), "--nodes");
  EXPECT_EQ(unit_count_error(0, std::nullopt, 4).field(), "--units");
  EXPECT_EQ(unit_count_error(-3, 1, 4).field(), "--units");
  // nodes x units per node past an int is an error, not an overflow.
  EXPECT_EQ(unit_count_error(std::nullopt, 1 << 30, 4).field(), "--nodes");
}

TEST(SimVerbNodes, TwoNodesOfAlpsAreEightUnits) {
  const TempDir dir;
  const auto run = run_cli(tiny_sim(dir.path() / "nodes", {"--nodes", "2"}));
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.out.find("8 x gh200-alps (2 nodes)"), std::string::npos) << run.out;
  const nlohmann::json summary = read_json(dir.path() / "nodes" / "summary.json");
  EXPECT_EQ(summary.at("units"), 8);
  EXPECT_EQ(summary.at("nodes"), 2);

  // The same simulation as --units 8, and larger than one unit's.
  ASSERT_EQ(run_cli(tiny_sim(dir.path() / "units8", {"--units", "8"})).code, 0);
  ASSERT_EQ(run_cli(tiny_sim(dir.path() / "units1", {"--units", "1"})).code, 0);
  const nlohmann::json eight = read_json(dir.path() / "units8" / "summary.json");
  const nlohmann::json one = read_json(dir.path() / "units1" / "summary.json");
  EXPECT_EQ(eight.at("nodes"), 2);
  EXPECT_EQ(summary.at("activities"), eight.at("activities"));
  EXPECT_GT(summary.at("activities").get<long long>(), one.at("activities").get<long long>());
}

// Host placement moves every gradient down and every new weight up in each step: steps.csv and
// summary.json count those transfers with the store's moves (they once reported 0 bytes while the
// trace showed them crossing the link).
TEST(SimVerbMoves, HostPlacementCountsTheGradientsAndWeightsItMoves) {
  const TempDir dir;
  Args args = tiny_sim(dir.path() / "host", {"--placement", "host", "--optimizer", "adamw"});
  const auto run = run_cli(args);
  ASSERT_EQ(run.code, 0) << run.err;
  const nlohmann::json summary = read_json(dir.path() / "host" / "summary.json");
  const double gradient_bytes = 4.0 * summary.at("parameters").get<double>();  // fp32
  const double steps = summary.at("steps").get<double>() + summary.at("warmup_steps").get<double>();
  EXPECT_EQ(summary.at("moved_device_host_bytes").get<double>(), steps * gradient_bytes) << summary.dump();
  EXPECT_EQ(summary.at("moved_host_device_bytes").get<double>(), steps * gradient_bytes) << summary.dump();
  // State on the device: nothing crosses.
  const auto device = run_cli(tiny_sim(dir.path() / "device", {"--placement", "device", "--optimizer", "adamw"}));
  ASSERT_EQ(device.code, 0) << device.err;
  EXPECT_EQ(read_json(dir.path() / "device" / "summary.json").at("moved_device_host_bytes"), 0);
}

TEST(SimVerbNodes, UnitsAloneReportTheNodesTheyFill) {
  const TempDir dir;
  const auto run = run_cli(tiny_sim(dir.path(), {"--units", "5"}));
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.out.find("5 x gh200-alps (2 nodes)"), std::string::npos) << run.out;
  const nlohmann::json summary = read_json(dir.path() / "summary.json");
  EXPECT_EQ(summary.at("units"), 5);
  EXPECT_EQ(summary.at("nodes"), 2);
  // The default: one GPU on one node.
  const auto single = run_cli(tiny_sim(dir.path(), {"--overwrite"}));
  ASSERT_EQ(single.code, 0) << single.err;
  EXPECT_NE(single.out.find("1 x gh200-alps (1 node)"), std::string::npos) << single.out;
  EXPECT_EQ(read_json(dir.path() / "summary.json").at("nodes"), 1);
}

TEST(SimVerbNodes, DisagreeingCountsAreAnErrorNamingBoth) {
  const TempDir dir;
  const auto run = run_cli(tiny_sim(dir.path(), {"--nodes", "2", "--units", "3"}));
  EXPECT_EQ(run.code, 1);
  EXPECT_NE(run.err.find("--nodes"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("--units 3"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("5 to 8"), std::string::npos) << run.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "summary.json"));

  const auto zero = run_cli(tiny_sim(dir.path(), {"--nodes", "0"}));
  EXPECT_EQ(zero.code, 1);
  EXPECT_NE(zero.err.find("--nodes: expected an integer >= 1"), std::string::npos) << zero.err;
}

TEST(SimVerbNodes, HelpDescribesNodes) {
  const auto run = run_cli({"sim", "--help"});
  EXPECT_EQ(run.code, 0);
  EXPECT_NE(run.out.find("--nodes"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("gh200-480gb"), std::string::npos) << run.out;
}

// A study whose grid has a nodes axis: each run's sim command line carries --nodes, and running
// that command line gives whole nodes of the profile.
TEST(SimVerbNodes, StudyGridWithNodesRunsWholeNodes) {
  const std::string yaml =
      "name: nodes\n"
      "defaults:\n  steps: 2\n  numerics: shapes\n"
      "grid:\n"
      "  - hw: gh200-alps\n    model: tiny\n    optimizer: soap\n    placement: device\n    staleness: 0\n"
      "    nodes: [1, 3]\n";
  const study::StudySpec spec = study::parse_study(yaml, "nodes.yaml", "/studies");
  ASSERT_EQ(spec.points.size(), 2U);
  EXPECT_EQ(spec.points[0].slug, "gh200-alps_tiny_soap_device_s0_nodes1");
  EXPECT_EQ(spec.points[1].slug, "gh200-alps_tiny_soap_device_s0_nodes3");
  const TempDir dir;
  const std::vector<int> expected_units = {4, 12};
  for (std::size_t i = 0; i < spec.points.size(); ++i) {
    SCOPED_TRACE(spec.points[i].slug);
    const std::filesystem::path run_dir = dir.path() / spec.points[i].slug;
    Args args = study::sim_arguments(spec.points[i], run_dir);
    const auto run = run_cli(args);
    ASSERT_EQ(run.code, 0) << run.err;
    const nlohmann::json summary = read_json(run_dir / "summary.json");
    EXPECT_EQ(summary.at("units"), expected_units[i]);
    EXPECT_EQ(summary.at("nodes"), i == 0 ? 1 : 3);
  }
}

}  // namespace
}  // namespace asteria::cli

namespace asteria::cli {
namespace {

// The simulator takes the shared run options: opportunistic publication, values (data-true).
TEST(SimVerbRunSpec, PublishesOpportunisticallyAndRunsDataTrue) {
  const TempDir dir;
  for (const std::string numerics : {"shapes", "values"}) {
    SCOPED_TRACE(numerics);
    const std::filesystem::path out = dir.path() / numerics;
    const auto run = run_cli({"sim", "--hw", "gh200", "--model", "tiny", "--optimizer", "soap", "--staleness", "2",
                              "--publish", "opportunistic", "--precondition-frequency", "2", "--steps", "6",
                              "--numerics", numerics, "--no-progress", "--out", out.string()});
    ASSERT_EQ(run.code, 0) << run.err;
    const nlohmann::json summary = read_json(out / "summary.json");
    EXPECT_EQ(summary.at("publish"), "opportunistic");
    EXPECT_EQ(summary.at("numerics"), numerics);
    EXPECT_EQ(summary.at("time"), "simulated");
    EXPECT_LE(summary.at("max_staleness").get<int>(), 2);
    EXPECT_GT(summary.at("refreshes_published").get<int>(), 0);
    EXPECT_TRUE(std::filesystem::exists(out / "plan.txt"));
  }
  // Time other than simulated is not the simulator's, and is named.
  const auto wrong = run_cli({"sim", "--model", "tiny", "--time", "modelled", "--no-progress"});
  EXPECT_EQ(wrong.code, 1);
  EXPECT_NE(wrong.err.find("--time"), std::string::npos) << wrong.err;
}

}  // namespace
}  // namespace asteria::cli

namespace asteria::cli {
namespace {

// Inputs that used to run (or wrap around) silently are refused before any work, naming the option.
TEST(SimVerbInputs, HugeStalenessNegativeSeedAndAMistypedNvmeParentAreRefused) {
  const TempDir dir;
  const auto stale = run_cli({"sim", "--model", "tiny", "--staleness", "1000000", "--steps", "3", "--no-progress"});
  EXPECT_EQ(stale.code, 1);
  EXPECT_NE(stale.err.find("--staleness"), std::string::npos) << stale.err;
  EXPECT_NE(stale.err.find("step 1000002"), std::string::npos) << stale.err;
  // With an explicit warm-up it runs (what the message says to do).
  EXPECT_EQ(run_cli({"sim", "--model", "tiny", "--staleness", "1000000", "--warmup-steps", "1", "--steps", "1",
                     "--no-progress"})
                .code,
            0);
  const auto seed = run_cli({"sim", "--model", "tiny", "--seed", "-1", "--steps", "1", "--no-progress"});
  EXPECT_EQ(seed.code, 1);
  EXPECT_NE(seed.err.find("--seed: a whole number"), std::string::npos) << seed.err;
  const std::string missing = (dir.path() / "no" / "such" / "nvme").string();
  const auto nvme = run_cli({"synth", "--nvme-dir", missing, "--placement", "nvme", "--steps", "1", "--no-progress"});
  EXPECT_EQ(nvme.code, 1);
  EXPECT_NE(nvme.err.find("--nvme-dir"), std::string::npos) << nvme.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "no")) << "nothing may be created";
}

// More simulated actors than the process can map made SimGrid abort: refused, naming what to change.
// Host workers start as their work needs them, so many declared ones cost nothing (the actor
// budget itself: tests/sim/executor_test.cpp).
TEST(SimVerbInputs, ManyHostWorkersStartOnlyAsTheirWorkNeedsThem) {
  const auto run = run_cli({"sim", "--model", "tiny", "--host-workers", "100000", "--steps", "1", "--no-progress"});
  EXPECT_EQ(run.code, 0) << run.err;
}

// --nodes 100000 built a SimGrid platform for hours (its build grows as units^2, mirrors
// included): refused before any work, with or without representative ranks, naming --nodes and
// the limit; a platform within it still runs.
TEST(SimVerbInputs, APlatformTooLargeToBuildInReasonableTimeIsRefused) {
  const std::string most = std::to_string(sim::max_platform_units());
  for (const Args& args : {Args{"sim", "--model", "tiny", "--hw", "gh200-alps", "--nodes", "100000", "--steps", "1",
                                "--no-progress"},
                           Args{"sim", "--model", "tiny", "--hw", "gh200-alps", "--nodes", "100000",
                                "--simulated-nodes", "1", "--refresh-sharing", "replicated", "--steps", "1",
                                "--no-progress"}}) {
    const auto run = run_cli(args);
    EXPECT_EQ(run.code, 1) << run.out;
    EXPECT_NE(run.err.find("command line: --nodes: at most " + most + " units, mirrors included ("), std::string::npos)
        << run.err;
    EXPECT_NE(run.err.find("nodes of gh200-alps)"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("found 400000 units (100000 nodes"), std::string::npos) << run.err;
    EXPECT_NE(run.err.find("use fewer --nodes or --units"), std::string::npos) << run.err;
  }
  const auto within = run_cli({"sim", "--model", "tiny", "--hw", "gh200-alps", "--nodes", "64", "--simulated-nodes",
                               "1", "--refresh-sharing", "replicated", "--steps", "1", "--warmup-steps", "1",
                               "--no-progress"});
  EXPECT_EQ(within.code, 0) << within.err;
}

TEST(SimVerbEnergy, TheMeasuredStepsEnergyComesFromTheProfilesPowerAndTheResourcesBusyTime) {
  TempDir dir;
  // One node of four GH200 superchips; refreshes on the host workers (S = 1) keep cores busy.
  const auto run = run_cli(tiny_sim(dir.path() / "e", {"--units", "4", "--optimizer", "soap", "--staleness", "1", "--precondition-frequency", "1"}));
  ASSERT_EQ(run.code, 0) << run.err;
  const nlohmann::json s = read_json(dir.path() / "e" / "summary.json");
  const double step = s["mean_step_s"], total = s["energy_per_step_j"];
  const double parts = s["device_energy_per_step_j"].get<double>() + s["host_energy_per_step_j"].get<double>() +
                       s["memory_energy_per_step_j"].get<double>() + s["storage_energy_per_step_j"].get<double>() +
                       s["network_energy_per_step_j"].get<double>();
  EXPECT_NEAR(parts, total, 1e-9 * total);
  EXPECT_NEAR(s["mean_power_w"].get<double>() * step, total, 1e-9 * total);
  EXPECT_NEAR(s["energy_per_token_j"].get<double>() * s["tokens_per_step"].get<double>(), total, 1e-9 * total);
  // gh200-alps: per unit, the GPU draws 90 W idle and 600 W busy; the CPU 40 W and memory 30 W
  // always; the drive 5 W idle; a quarter of a node's four NICs each 15 W idle (one node: no
  // collective crosses them).
  const double units = 4;
  EXPECT_GE(s["device_energy_per_step_j"].get<double>(), units * 90 * step * (1 - 1e-9));
  EXPECT_LE(s["device_energy_per_step_j"].get<double>(), units * 600 * step * (1 + 1e-9));
  EXPECT_NEAR(s["memory_energy_per_step_j"].get<double>(), units * 30 * step, 1e-9 * total);
  EXPECT_NEAR(s["network_energy_per_step_j"].get<double>(), units * 15 * step, 1e-9 * total);
  EXPECT_GT(s["host_energy_per_step_j"].get<double>(), units * 40 * step);  // the workers' cores
}

TEST(SimVerbEnergy, RepresentativeRanksStandForTheOthersEnergy) {
  TempDir dir;
  ASSERT_EQ(run_cli(tiny_sim(dir.path() / "all", {"--nodes", "4", "--refresh-sharing", "replicated"})).code, 0);
  ASSERT_EQ(run_cli(tiny_sim(dir.path() / "some", {"--nodes", "4", "--simulated-nodes", "2", "--refresh-sharing", "replicated"})).code, 0);
  const double all = read_json(dir.path() / "all" / "summary.json")["energy_per_step_j"];
  const double some = read_json(dir.path() / "some" / "summary.json")["energy_per_step_j"];
  EXPECT_NEAR(some, all, 0.01 * all);  // the simulated half scaled to all 16 GPUs, not their idle added
}

TEST(SimVerbEnergy, AProfileWithoutPowerReportsNone) {
  TempDir dir;
  // gh200-alps with its power section cut off.
  std::ifstream in(hw::find_profile("gh200-alps"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  text = text.substr(0, text.find("\n# What each resource draws"));
  const std::filesystem::path profile = dir.path() / "no-power.yaml";
  std::ofstream(profile) << text << "\n";
  Args args = tiny_sim(dir.path() / "n", {});
  args[2] = profile.string();
  const auto run = run_cli(args);
  ASSERT_EQ(run.code, 0) << run.err;
  const nlohmann::json s = read_json(dir.path() / "n" / "summary.json");
  EXPECT_TRUE(s.contains("energy_per_step_j"));
  EXPECT_TRUE(s["energy_per_step_j"].is_null());
  EXPECT_TRUE(s["mean_power_w"].is_null());
}

}  // namespace
}  // namespace asteria::cli

// `asteria plan`: chooses a placement for the toy model, writes a plan file that reads back and
// that `asteria sim --placement-file` runs, checks its prediction against the simulator, and
// refuses plans and options that do not go together, naming the field or option.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "apps/asteria/options.hpp"
#include "apps/asteria/plan_file.hpp"
#include "apps/asteria/sim_verb.hpp"
#include "core/plan/share_groups.hpp"
#include "core/planner/step_model.hpp"
#include "apps/asteria/run_config_options.hpp"
#include "core/common/error.hpp"
#include "hwmodels/profile_loader.hpp"
#include "tests/apps/child_cli.hpp"
#include "tests/io/temp_dir.hpp"

namespace asteria::cli {
namespace {

using platform::Tier;
using planner::ChooseOptions;
using planner::ChosenPlan;
using planner::PlanMethod;
using planner::StepPrediction;
using planner::choose_plan;
using planner::parse_plan_method;
using planner::predict_step;
using testing::CliOutcome;
using testing::TempDir;

CliOutcome run_cli(const Args& args) { return testing::run_cli_in_child(args); }

Args plan_args(const std::string& out, std::vector<std::string> more = {}) {
  Args a = {"plan", "--hw", "gh200", "--model", "tiny", "--optimizer", "soap", "--out", out};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

// The number after `label` on the line that starts with it.
double number_after(const std::string& text, const std::string& label) {
  const std::regex pattern("(^|\n)" + label + " +([-+0-9.e]+)");
  std::smatch m;
  if (!std::regex_search(text, m, pattern)) {
    ADD_FAILURE() << "no '" << label << "' in:\n" << text;
    return NAN;
  }
  return std::stod(m[2].str());
}

TEST(PlanVerb, WritesAPlanThatReadsBackAndSimRunsAsPlanned) {
  TempDir dir;
  const std::string file = dir.file("tiny.plan.yaml");
  const CliOutcome made = run_cli(plan_args(file));
  ASSERT_EQ(made.code, 0) << made.err;
  for (const char* expected : {"method optimal", "device_compute", "host_compute", "issuer", "predicted step",
                               "all-device", "all-host", "interleaved:2", "wrote " })
    EXPECT_NE(made.out.find(expected), std::string::npos) << expected << " in:\n" << made.out;
  const PlanFile plan = read_plan_file(file);
  EXPECT_EQ(plan.model, "tiny");
  EXPECT_EQ(plan.optimizer, "soap");
  EXPECT_EQ(plan.hw, "gh200");
  EXPECT_EQ(plan.method, "optimal");
  ASSERT_TRUE(plan.predicted.has_value());
  EXPECT_GT(plan.predicted->step_s, 0.0);
  EXPECT_FALSE(plan.blocks.empty());

  // sim takes model, optimizer and hw from the plan, and says so.
  const CliOutcome sim = run_cli({"sim", "--placement-file", file, "--steps", "2", "--no-progress"});
  ASSERT_EQ(sim.code, 0) << sim.err;
  EXPECT_NE(sim.out.find("placement planned"), std::string::npos) << sim.out;
  EXPECT_NE(sim.out.find("tiny"), std::string::npos) << sim.out;
  EXPECT_EQ(sim.err.find("warning"), std::string::npos) << sim.err;

  // On another machine it runs as a what-if, and says so.
  const CliOutcome elsewhere =
      run_cli({"sim", "--placement-file", file, "--hw", "gb10", "--steps", "2", "--no-progress"});
  ASSERT_EQ(elsewhere.code, 0) << elsewhere.err;
  EXPECT_NE(elsewhere.err.find("warning: the plan file " + file + " was made for gh200; running it on gb10"),
            std::string::npos)
      << elsewhere.err;
}

TEST(PlanVerb, CheckSimulatesThePlanAndReportsTheGap) {
  TempDir dir;
  const CliOutcome run = run_cli(plan_args(dir.file("p.yaml"), {"--check"}));
  ASSERT_EQ(run.code, 0) << run.err;
  const double predicted = number_after(run.out, "predicted");
  const double simulated = number_after(run.out, "simulated \\(p50\\)");
  const double gap = number_after(run.out, "gap \\(predicted - simulated p50\\) / simulated p50:");
  ASSERT_TRUE(std::isfinite(predicted) && std::isfinite(simulated) && std::isfinite(gap)) << run.out;
  EXPECT_GT(predicted, 0.0);
  EXPECT_GT(simulated, 0.0);
  EXPECT_NEAR(gap, 100.0 * (predicted - simulated) / simulated, 0.5) << run.out;
  // The prediction is a lower bound of the busiest resources: the simulated step is no shorter
  // than about it, and for this toy model (launch latencies, dependent ops) within a factor 3.
  EXPECT_GT(simulated, 0.9 * predicted) << run.out;
  EXPECT_LT(simulated, 3.0 * predicted) << run.out;
}

// --search-schedule simulates every (micro-batches, defer fraction) candidate and keeps the
// fastest: the written plan carries the chosen pair, and its simulated time is the table's least.
TEST(PlanVerb, SearchScheduleKeepsTheFastestSimulatedCandidate) {
  TempDir dir;
  const std::string file = dir.file("search.yaml");
  const CliOutcome run =
      run_cli(plan_args(file, {"--schedule", "vertical", "--batch", "4", "--search-schedule", "--steps", "2"}));
  ASSERT_EQ(run.code, 0) << run.err;
  // Candidates: micro-batches 1, 2, 4 (divisors of 4) x defer 0, 0.1, 0.2, 0.3.
  const std::regex row("\n +([124]) +(0|0\\.[123]0?) +[0-9.e+-]+ +([0-9.e+-]+)");
  double least = INFINITY;
  int rows = 0;
  std::string best_m, best_alpha;
  for (auto it = std::sregex_iterator(run.out.begin(), run.out.end(), row); it != std::sregex_iterator(); ++it) {
    ++rows;
    const double simulated = std::stod((*it)[3].str());
    if (simulated < least) {
      least = simulated;
      best_m = (*it)[1].str();
      best_alpha = (*it)[2].str();
    }
  }
  EXPECT_EQ(rows, 12) << run.out;
  const PlanFile plan = read_plan_file(file);
  auto planned = [&](const std::string& name) {
    for (const auto& [n, value] : plan.settings)
      if (n == name) return value;
    return std::string();
  };
  EXPECT_EQ(planned("micro-batches"), best_m) << run.out;
  EXPECT_NEAR(std::stod(planned("defer-fraction")), std::stod(best_alpha), 1e-12) << run.out;
  EXPECT_NE(run.out.find("chosen: " + best_m + " micro-batches"), std::string::npos) << run.out;
}

TEST(PlanVerb, BaselineMethodsWriteTheirPlacements) {
  TempDir dir;
  const std::string file = dir.file("host.yaml");
  const CliOutcome run = run_cli(plan_args(file, {"--method", "all-host"}));
  ASSERT_EQ(run.code, 0) << run.err;
  const PlanFile plan = read_plan_file(file);
  EXPECT_EQ(plan.method, "all-host");
  for (const runtime::BlockPlacement& b : plan.blocks) {
    EXPECT_FALSE(b.update_on_device) << b.label;
    EXPECT_NE(b.home, Tier::device) << b.label;
  }
  const CliOutcome bad = run_cli(plan_args(file, {"--method", "interleaved:0"}));
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("--method"), std::string::npos) << bad.err;
  const CliOutcome placement = run_cli(plan_args(file, {"--placement", "host"}));
  EXPECT_EQ(placement.code, 1);
  EXPECT_NE(placement.err.find("--placement: not an option of plan"), std::string::npos) << placement.err;
}

TEST(PlanVerb, ThePlanProblemFollowsTheDriversBlocks) {
  RunConfig spec = default_run_config(RunVerb::sim);
  spec.hp.max_precond_dim = 2048;
  const hw::HardwareProfile profile = hw::load_profile(hw::find_profile("gh200"));
  const SimWorkload workload = workload_from_config("tiny", 1);
  const planner::StepModel m = planner::build_step_model(spec, profile, workload.weights, workload.stack.layers);
  ASSERT_FALSE(m.problem.blocks.empty());
  // Labels as the step driver writes them (TensorOptimizer's describe_block).
  EXPECT_NE(m.problem.blocks[0].label.find(" block 0 (rows 0:"), std::string::npos) << m.problem.blocks[0].label;
  EXPECT_GT(m.fixed_s[static_cast<std::size_t>(planner::Resource::device_compute)], 0.0);
  // Every method predicts at least the step's own device work.
  for (const char* method : {"optimal", "all-device", "all-host", "interleaved:3"}) {
    const ChosenPlan p = choose_plan(m, parse_plan_method(method, "--method"), {});
    ASSERT_EQ(p.assignment.size(), m.problem.blocks.size()) << method;
    EXPECT_GE(p.prediction.step_s, m.fixed_s[static_cast<std::size_t>(planner::Resource::device_compute)]) << method;
    EXPECT_EQ(p.prediction.step_s, predict_step(m, p.assignment).step_s) << method;
  }
  // The optimum is no slower than any baseline (the same model predicts all of them).
  const double optimal = choose_plan(m, {PlanMethod::Kind::optimal, 0}, {}).prediction.step_s;
  for (const char* method : {"all-device", "all-host", "interleaved:2"})
    EXPECT_LE(optimal, choose_plan(m, parse_plan_method(method, "--method"), {}).prediction.step_s * (1 + 1e-9))
        << method;
}

TEST(PlanVerb, ShardedRanksEachPlaceTheBlocksTheyOwnBesideTheirShareOfTheModel) {
  RunConfig spec = default_run_config(RunVerb::sim);
  spec.hp.max_precond_dim = 64;  // many blocks to share
  const hw::HardwareProfile profile = hw::load_profile(hw::find_profile("gh200"));
  const SimWorkload workload = workload_from_config("tiny", 1);
  const planner::StepModel whole = planner::build_step_model(spec, profile, workload.weights, workload.stack.layers);
  ASSERT_GE(whole.problem.blocks.size(), 6u);
  // Replicated ranks place alike: one model, every block.
  EXPECT_EQ(planner::build_rank_step_models(spec, profile, workload.weights, workload.stack.layers, 3).size(), 1u);

  spec.parallelism = plan::Parallelism::fsdp;
  const int ranks = 3;
  const std::vector<planner::StepModel> models =
      planner::build_rank_step_models(spec, profile, workload.weights, workload.stack.layers, ranks);
  ASSERT_EQ(models.size(), static_cast<std::size_t>(ranks));
  // The owners are the step driver's: its set-up's blocks, shared by state bytes and layer.
  std::vector<double> bytes;
  std::vector<int> layers;
  for (std::size_t i = 0; i < whole.problem.blocks.size(); ++i) {
    bytes.push_back(whole.problem.blocks[i].state_bytes);
    layers.push_back(whole.blocks[i].layer);
  }
  const std::vector<int> owners = plan::assign_block_owners(bytes, layers, ranks);
  std::vector<int> placed(whole.problem.blocks.size(), 0);
  double state = 0;
  for (const planner::StepModel& m : models) {
    EXPECT_EQ(m.all_blocks, whole.problem.blocks.size());
    ASSERT_EQ(m.block_index.size(), m.problem.blocks.size());
    for (std::size_t i = 0; i < m.block_index.size(); ++i) {
      const std::size_t b = m.block_index[i];
      ++placed[b];
      EXPECT_EQ(owners[b], m.share.rank) << m.problem.blocks[i].label;
      EXPECT_EQ(m.problem.blocks[i].label, whole.problem.blocks[b].label);
      state += m.problem.blocks[i].state_bytes;
    }
    // fsdp: each rank holds a share of the weights, less than the whole model's.
    EXPECT_LT(m.capacity.model[static_cast<std::size_t>(Tier::device)],
              whole.capacity.model[static_cast<std::size_t>(Tier::device)]);
    EXPECT_GT(m.problem.capacities.device, whole.problem.capacities.device);
  }
  for (std::size_t b = 0; b < placed.size(); ++b) EXPECT_EQ(placed[b], 1) << whole.problem.blocks[b].label;
  double whole_state = 0;
  for (const planner::BlockDemand& d : whole.problem.blocks) whole_state += d.state_bytes;
  EXPECT_DOUBLE_EQ(state, whole_state);
}

TEST(PlanVerb, ShardedPlansHoldEveryBlockAndTheSimulatorRunsThem) {
  TempDir dir;
  const std::string file = dir.file("fsdp.yaml");
  const CliOutcome made = run_cli(plan_args(file, {"--parallelism", "fsdp", "--units", "2", "--max-precond-dim", "64",
                                                   "--check", "--steps", "1"}));
  ASSERT_EQ(made.code, 0) << made.err;
  EXPECT_NE(made.out.find("data-parallel: 2 ranks, fsdp: each rank places the blocks it owns"), std::string::npos)
      << made.out;
  EXPECT_NE(made.out.find("simulated (p50)"), std::string::npos) << made.out;
  const std::string whole_file = dir.file("one.yaml");
  ASSERT_EQ(run_cli(plan_args(whole_file, {"--max-precond-dim", "64"})).code, 0);
  const PlanFile sharded = read_plan_file(file);
  const PlanFile whole = read_plan_file(whole_file);
  ASSERT_EQ(sharded.blocks.size(), whole.blocks.size());
  for (std::size_t b = 0; b < whole.blocks.size(); ++b) EXPECT_EQ(sharded.blocks[b].label, whole.blocks[b].label);
  // The plan holds for its parallelism and ranks: a run takes them, and refuses others.
  const auto setting = [&](const std::string& name) {
    for (const auto& [key, value] : sharded.settings)
      if (key == name) return value;
    return std::string("(none)");
  };
  EXPECT_EQ(setting("parallelism"), "fsdp");
  EXPECT_EQ(setting("units"), "2");
  const CliOutcome other = run_cli({"sim", "--placement-file", file, "--parallelism", "zero1", "--out", dir.file("o")});
  EXPECT_EQ(other.code, 1);
  EXPECT_NE(other.err.find("--parallelism: the plan file's value fsdp"), std::string::npos) << other.err;
  // Sharding among ranks needs ranks.
  const CliOutcome one = run_cli(plan_args(dir.file("x.yaml"), {"--parallelism", "zero2"}));
  EXPECT_EQ(one.code, 1);
  EXPECT_NE(one.err.find("--parallelism"), std::string::npos) << one.err;
  EXPECT_NE(one.err.find("--units or --nodes"), std::string::npos) << one.err;
}

// read_run_config over sim's options, as `asteria sim ARGS` reads them.
RunConfig sim_spec(const std::vector<std::string>& args) {
  po::variables_map v;
  po::store(po::command_line_parser(args).options(run_config_options(RunVerb::sim)).run(), v);
  po::notify(v);
  return read_run_config(RunVerb::sim, v);
}

TEST(PlacementFile, AppliesThePlansScheduleUnlessGivenOtherwise) {
  TempDir dir;
  const std::string file = dir.file("p.yaml");
  PlanFile p;
  p.hw = "a100-80gb";
  p.model = "tiny";
  p.optimizer = "shampoo";
  p.settings = {{"schedule", "vertical"},
                {"micro-batches", "2"},
                {"defer-fraction", "0.25"},
                {"weights-on", "host"},
                {"checkpoints-on", "host"},
                {"max-precond-dim", "512"}};
  p.blocks = {{"x block 0", Tier::host, false}};
  write_plan_file(file, p);

  const RunConfig s = sim_spec({"--placement-file", file});
  EXPECT_EQ(s.placement, runtime::PlacementPolicy::planned);
  ASSERT_EQ(s.planned_blocks.size(), 1u);
  EXPECT_EQ(s.planned_blocks[0].label, "x block 0");
  EXPECT_EQ(s.hw, "a100-80gb");
  EXPECT_EQ(s.model, "tiny");
  EXPECT_EQ(s.optimizer, optim::OptimizerKind::shampoo);
  EXPECT_EQ(s.schedule, plan::ScheduleOrder::vertical);
  EXPECT_EQ(s.micro_batches, 2);
  EXPECT_EQ(s.defer_fraction, 0.25);
  EXPECT_EQ(s.model_tiers.weights, Tier::host);
  EXPECT_EQ(s.model_tiers.checkpoints, Tier::host);
  EXPECT_TRUE(s.recompute_activations);  // implied by checkpoints off the device
  EXPECT_EQ(s.hp.max_precond_dim, 512);  // the blocks' shape the plan was made for
  const runtime::DriverOptions d = driver_options(s, 0, {});
  EXPECT_EQ(d.store.policy, runtime::PlacementPolicy::planned);
  ASSERT_EQ(d.planned_blocks.size(), 1u);
  EXPECT_EQ(d.schedule.micro_batches, 2);

  // The same values given again are fine; other values are refused, naming the option.
  EXPECT_NO_THROW(sim_spec({"--placement-file", file, "--micro-batches", "2", "--placement", "planned"}));
  const std::vector<std::pair<std::vector<std::string>, std::string>> conflicts = {
      {{"--micro-batches", "4"}, "--micro-batches"},
      {{"--schedule", "horizontal"}, "--schedule"},
      {{"--defer-fraction", "0.5"}, "--defer-fraction"},
      {{"--weights-on", "nvme"}, "--weights-on"},
      {{"--max-precond-dim", "1024"}, "--max-precond-dim"},
      {{"--model", "gpt-mini"}, "--model"},
      {{"--optimizer", "soap"}, "--optimizer"},
      {{"--placement", "device"}, "--placement"},
  };
  for (const auto& [extra, option] : conflicts) {
    std::vector<std::string> args = {"--placement-file", file};
    args.insert(args.end(), extra.begin(), extra.end());
    try {
      sim_spec(args);
      ADD_FAILURE() << option << " should conflict with the plan file";
    } catch (const InputError& e) {
      EXPECT_EQ(e.field(), option) << e.what();
    }
  }
  // planned without a file, and a file that is not a plan.
  RunConfig no_file = sim_spec({"--placement", "planned"});
  EXPECT_THROW(validate(no_file), InputError);
  std::ofstream(dir.file("bad.yaml")) << "format: asteria-plan 1\nmodel: tiny\n";
  try {
    sim_spec({"--placement-file", dir.file("bad.yaml")});
    ADD_FAILURE() << "a file without blocks should be refused";
  } catch (const InputError& e) {
    EXPECT_EQ(e.source(), dir.file("bad.yaml"));
    EXPECT_EQ(e.field(), "optimizer");
  }
}

TEST(PlacementFile, APlanRestingStateOnNvmeNeedsAnNvmeDirectoryOnTheRealBackend) {
  TempDir dir;
  const std::string file = dir.file("p.yaml");
  PlanFile p;
  p.model = "tiny";
  p.optimizer = "soap";
  p.blocks = {{"a block 0", Tier::host, false}, {"b block 0", Tier::nvme, true}};
  write_plan_file(file, p);
  po::variables_map v;
  po::store(po::command_line_parser(std::vector<std::string>{"--placement-file", file, "--time", "modelled"})
                .options(run_config_options(RunVerb::synth))
                .run(),
            v);
  const RunConfig s = read_run_config(RunVerb::synth, v);
  try {
    validate(s);
    ADD_FAILURE() << "NVMe blocks without --nvme-dir should be refused";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "--placement-file");
    EXPECT_NE(std::string(e.what()).find("blocks[1]"), std::string::npos) << e.what();
  }
}

TEST(PlacementFile, APlanForOtherBlocksIsRefusedNamingTheBlock) {
  TempDir dir;
  const std::string file = dir.file("p.yaml");
  ASSERT_EQ(run_cli(plan_args(file)).code, 0);
  PlanFile p = read_plan_file(file);
  p.blocks[1].label = "not a block";
  write_plan_file(file, p);
  const CliOutcome sim = run_cli({"sim", "--placement-file", file, "--steps", "1", "--no-progress"});
  EXPECT_EQ(sim.code, 1);
  EXPECT_NE(sim.err.find("blocks[1].label"), std::string::npos) << sim.err;
  EXPECT_NE(sim.err.find("not a block"), std::string::npos) << sim.err;
}

}  // namespace
}  // namespace asteria::cli

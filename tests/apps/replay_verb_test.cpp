// asteria replay: a recorded run rebuilt from its trace and predicted on the simulator.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>
#include <numeric>
#include <map>
#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <functional>
#include <stdexcept>
#include <string>

#include "apps/asteria/replay.hpp"
#include "core/common/error.hpp"
#include "tests/apps/child_cli.hpp"
#include "traces/native_trace.hpp"
#include "tests/common/cli_harness.hpp"
#include "tests/io/temp_dir.hpp"

namespace asteria::cli {
namespace {

using asteria::testing::lines_of;
using asteria::testing::run_cli;
using asteria::testing::run_cli_in_child;

nlohmann::json json_of(const std::filesystem::path& file) {
  std::ifstream in(file);
  return nlohmann::json::parse(in);
}

TEST(ReplayErrors, AreTheHandComputedOnes) {
  // Steps 2..4 recorded as 1.0, 2.0, 4.0 s (compute 0.5 s each); predicted 1.1, 1.8, 4.0 s
  // (compute 0.5, 0.5, 0.4 s); step 5 only predicted: left out.
  const std::vector<TracedStep> recorded = {{2, 1.0, 0.5, 0.5}, {3, 2.0, 0.5, 1.5}, {4, 4.0, 0.5, 3.5}};
  const std::vector<TracedStep> predicted = {{2, 1.1, 0.5, 0.6}, {3, 1.8, 0.5, 1.3}, {4, 4.0, 0.4, 3.6}, {5, 9.0, 0, 9}};
  const auto steps = compare_steps(recorded, predicted, "test");
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_NEAR(steps[0].step_error, 0.1, 1e-12);
  EXPECT_NEAR(steps[1].step_error, -0.1, 1e-12);
  EXPECT_NEAR(steps[2].step_error, 0.0, 1e-12);
  const ReplayErrors e = replay_errors(steps);
  EXPECT_NEAR(e.median_abs_step_error, 0.1, 1e-12);             // |errors| 0.1, 0.1, 0
  EXPECT_NEAR(e.p99_abs_step_error, 0.1, 1e-12);
  EXPECT_NEAR(e.mean_abs_step_error, 0.2 / 3.0, 1e-12);
  EXPECT_NEAR(e.total_step_error, 6.9 / 7.0 - 1.0, 1e-12);      // Σ predicted 6.9, Σ recorded 7.0
  EXPECT_NEAR(e.visible_optimizer_error, 5.5 / 5.5 - 1.0, 1e-12);  // visible 0.6+1.3+3.6 vs 0.5+1.5+3.5
  EXPECT_NEAR(e.visible_optimizer_error_of_step, 0.0, 1e-12);
  EXPECT_THROW(compare_steps(recorded, {{9, 1.0, 0.0, 1.0}}, "test"), InputError);
}

TEST(TracedSteps, ComputeIsTheForwardAndBackwardTimeOfTheStep) {
  traces::NativeTrace t;
  auto add = [&](std::string kind, std::int64_t step, double start, double end, int unit = 0) {
    traces::TraceRecord r;
    r.kind = std::move(kind);
    r.step = step;
    r.start_s = start;
    r.end_s = end;
    r.unit = unit;
    t.records.push_back(r);
  };
  add("step", 1, 0.0, 1.0);
  add("forward", 1, 0.0, 0.25);
  add("backward", 1, 0.25, 0.5);
  add("update", 1, 0.5, 0.75);
  add("step", 1, 0.0, 9.0, 1);  // another unit
  const auto steps = traced_steps(t);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_DOUBLE_EQ(steps[0].step_s, 1.0);
  EXPECT_DOUBLE_EQ(steps[0].compute_s, 0.5);
  EXPECT_DOUBLE_EQ(steps[0].visible_optimizer_s, 0.5);
}

// A simulated run replayed on the profile it ran on is predicted exactly: the replay rebuilds the
// same run (options, layers, costs, plan) from the trace alone.
TEST(ReplayVerb, ASimulatedRunReplaysToItself) {
  const testing::TempDir dir;
  const std::string recorded = (dir.path() / "recorded").string();
  ASSERT_EQ(run_cli_in_child({"sim", "--hw", "gh200", "--model", "tiny", "--optimizer", "soap", "--staleness", "1",
                     "--placement", "tiered", "--steps", "8", "--precondition-frequency", "3", "--trace", "--out",
                     recorded, "--no-progress"})
                .code,
            0);
  const std::string replay = (dir.path() / "replay").string();
  const auto r = run_cli_in_child({"replay", recorded + "/trace.csv", "--hw", "gh200", "--out", replay, "--no-progress"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json e = json_of(std::filesystem::path(replay) / "replay.json");
  EXPECT_EQ(e.at("steps"), 8);
  EXPECT_LT(e.at("median_abs_step_error").get<double>(), 1e-9);
  EXPECT_LT(e.at("p99_abs_step_error").get<double>(), 1e-9);
  EXPECT_NE(e.at("plan").get<std::string>().find("the same plan"), std::string::npos) << e.at("plan");
  EXPECT_EQ(lines_of(replay + "/replay.csv").size(), 9u);  // header and 8 steps
  // Both timelines in one Chrome trace.
  const nlohmann::json chrome = json_of(std::filesystem::path(replay) / "trace.json");
  bool recorded_seen = false, predicted_seen = false;
  for (const nlohmann::json& ev : chrome.at("traceEvents"))
    if (ev.at("ph") == "M" && ev.at("name") == "process_name") {
      const std::string name = ev.at("args").at("name");
      recorded_seen |= name == "recorded";
      predicted_seen |= name == "predicted";
    }
  EXPECT_TRUE(recorded_seen && predicted_seen);

  // Another machine: another prediction of the same plan.
  const std::string slower = (dir.path() / "slower").string();
  ASSERT_EQ(run_cli_in_child({"replay", recorded + "/trace.csv", "--hw", "h100-pcie-host", "--out", slower, "--no-progress"}).code, 0);
  const nlohmann::json other = json_of(std::filesystem::path(slower) / "replay.json");
  EXPECT_GT(std::abs(other.at("total_step_error").get<double>()), 1e-3);
  EXPECT_NE(other.at("plan").get<std::string>().find("the same plan"), std::string::npos);
  // What-if: another placement is another plan, and the replay says so.
  const std::string device = (dir.path() / "device").string();
  const auto w = run_cli_in_child({"replay", recorded + "/trace.csv", "--hw", "gh200", "--placement", "device", "--out", device,
                          "--no-progress"});
  ASSERT_EQ(w.code, 0) << w.err;
  EXPECT_NE(w.out.find("what-if"), std::string::npos);
  EXPECT_EQ(json_of(std::filesystem::path(device) / "replay.json").at("what_if"),
            nlohmann::json(std::vector<std::string>{"--placement", "device"}));
}

// A data-parallel rank's trace replays as the run it was: every rank, with its data-parallel
// settings (zero1: sharded state, replicated refreshes, the sync period) and its simulated
// machine's (concurrent collectives), not one rank without them.
TEST(ReplayVerb, ADataParallelRunReplaysWithItsRanksAndTheirSettings) {
  const testing::TempDir dir;
  const std::string recorded = (dir.path() / "recorded").string();
  const auto rec = run_cli_in_child({"sim", "--hw", "gh200", "--model", "tiny", "--optimizer", "soap", "--staleness", "2",
                                     "--units", "4", "--parallelism", "zero1", "--refresh-sharing", "replicated",
                                     "--sync-period", "2", "--concurrent-collectives", "--steps", "6",
                                     "--precondition-frequency", "3", "--trace", "--out", recorded, "--no-progress"});
  ASSERT_EQ(rec.code, 0) << rec.err;
  const std::string replay = (dir.path() / "replay").string();
  const auto r = run_cli_in_child({"replay", recorded + "/trace.csv", "--hw", "gh200", "--out", replay, "--no-progress"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json summary = json_of(std::filesystem::path(replay) / "summary.json");
  EXPECT_EQ(summary.at("units"), 4) << summary.dump();
  EXPECT_EQ(summary.at("setting_parallelism"), "zero1") << summary.dump();
  EXPECT_EQ(summary.at("setting_refresh_sharing"), "replicated") << summary.dump();
  EXPECT_EQ(summary.at("setting_sync_period"), "2") << summary.dump();
  // The simulated machine's own settings come back too (sim's, read with sim's options).
  EXPECT_EQ(summary.at("setting_concurrent_collectives"), "true") << summary.dump();
  EXPECT_EQ(summary.at("serial_collectives"), false) << summary.dump();
  const nlohmann::json e = json_of(std::filesystem::path(replay) / "replay.json");
  EXPECT_NE(e.at("plan").get<std::string>().find("the same plan"), std::string::npos) << e.at("plan");
  EXPECT_LT(e.at("median_abs_step_error").get<double>(), 1e-9);
}

// A real run's trace holds what a replay needs; the replay rebuilds its plan.
TEST(ReplayVerb, ARealTrainingRunIsReplayedWithItsOwnPlan) {
  const testing::TempDir dir;
  const std::string recorded = (dir.path() / "recorded").string();
  const auto t = run_cli({"train", "--model", "tiny", "--optimizer", "shampoo", "--steps", "3", "--host-workers", "1",
                          "--placement", "host", "--trace", "--out", recorded, "--no-progress"});
  ASSERT_EQ(t.code, 0) << t.err;
  const std::string replay = (dir.path() / "replay").string();
  const auto r = run_cli_in_child({"replay", recorded + "/trace.csv", "--hw", "h100-pcie-host", "--out", replay, "--no-progress"});
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json e = json_of(std::filesystem::path(replay) / "replay.json");
  EXPECT_EQ(e.at("steps"), 3);
  EXPECT_NE(e.at("plan").get<std::string>().find("the same plan"), std::string::npos) << e.at("plan");
  // Computing values, the real run computed its host-placed updates in the device launches of
  // their hooks; the trace says so and the replay charges them there too.
  const traces::NativeTrace real = traces::read_native_trace(std::filesystem::path(recorded) / "trace.csv");
  const traces::NativeTrace predicted = traces::read_native_trace(std::filesystem::path(replay) / "trace.csv");
  EXPECT_EQ(real.metadata.at("numerics_site"), "hook_launch");
  EXPECT_EQ(predicted.metadata.at("numerics_site"), "hook_launch");
  // The GPT model runs the whole forward and backward in the step's first backward op; the
  // replay charges the step's compute there too, the other forward and backward ops are markers.
  EXPECT_EQ(real.metadata.at("model_pass"), "whole_step");
  std::map<std::int64_t, std::vector<double>> compute_of_step;  // per step: each forward/backward op's seconds
  for (const traces::TraceRecord& rec : predicted.records)
    if (rec.kind == "forward" || rec.kind == "backward") compute_of_step[rec.step].push_back(rec.end_s - rec.start_s);
  ASSERT_FALSE(compute_of_step.empty());
  for (const auto& [step, seconds] : compute_of_step) {
    const double total = std::accumulate(seconds.begin(), seconds.end(), 0.0);
    EXPECT_GT(total, 0.0);
    EXPECT_EQ(std::count_if(seconds.begin(), seconds.end(), [&](double s) { return s > 1e-3 * total; }), 1)
        << "step " << step << ": one op carries the compute";
  }
  for (const traces::NativeTrace* trace : {&real, &predicted}) {
    int updates = 0;
    for (const traces::TraceRecord& rec : trace->records)
      if (rec.kind == "update") {
        ++updates;
        EXPECT_NE(rec.resource.find(" stream"), std::string::npos) << rec.resource << " " << rec.label;
      }
    EXPECT_GT(updates, 0);
  }
}

TEST(ReplayVerb, ATraceWithoutTheRunsMetadataIsRefusedByName) {
  const testing::TempDir dir;
  const auto file = dir.path() / "old.csv";
  std::ofstream(file) << "# asteria-trace 2\n# verb=train\n"
                      << "unit,step,op,launch,kind,layer,block,micro_batch,resource,start_s,end_s,bytes,flops,cost,deps,ok,label\n";
  const auto r = run_cli_in_child({"replay", file.string(), "--hw", "gh200", "--out", (dir.path() / "out").string()});
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("metadata"), std::string::npos) << r.err;
}

// Records of another model than the one the metadata lists are refused: the replay rebuilds the
// listed layers, and would time the records against the wrong ones.
TEST(ReplayVerb, RecordsOfAnotherModelThanTheMetadataListsAreRefused) {
  const testing::TempDir dir;
  const std::string recorded = (dir.path() / "recorded").string();
  ASSERT_EQ(run_cli_in_child({"sim", "--hw", "gh200", "--model", "tiny", "--steps", "2", "--trace", "--out", recorded,
                              "--no-progress"})
                .code,
            0);
  const traces::NativeTrace trace = traces::read_native_trace(std::filesystem::path(recorded) / "trace.csv");
  const std::size_t layers = std::stoul(trace.metadata.at("layers"));
  auto first_forward = [](traces::NativeTrace& t) -> traces::TraceRecord& {
    for (traces::TraceRecord& r : t.records)
      if (r.kind == "forward" && r.layer == 1) return r;
    throw std::logic_error("no forward record of layer 1");
  };
  struct Case {
    std::string name, expected;
    std::function<void(traces::TraceRecord&)> edit;
  };
  const std::vector<Case> cases = {
      {"relabelled", "label", [](traces::TraceRecord& r) { r.label = "forward layer7.attn.q"; }},
      {"out_of_range", "layer", [&](traces::TraceRecord& r) { r.layer = static_cast<std::int32_t>(layers); }},
  };
  for (const Case& c : cases) {
    traces::NativeTrace edited = trace;
    c.edit(first_forward(edited));
    const auto file = dir.path() / (c.name + ".csv");
    traces::write_native_trace(edited, file);
    const auto r = run_cli_in_child({"replay", file.string(), "--hw", "gh200", "--out",
                                     (dir.path() / ("out_" + c.name)).string(), "--no-progress"});
    EXPECT_NE(r.code, 0) << c.name;
    EXPECT_NE(r.err.find(file.string()), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("(forward): " + c.expected), std::string::npos) << r.err;
  }
  // The unedited trace replays (the check refuses only what differs).
  const auto ok = run_cli_in_child({"replay", recorded + "/trace.csv", "--hw", "gh200", "--out",
                                    (dir.path() / "out").string(), "--no-progress"});
  EXPECT_EQ(ok.code, 0) << ok.err;
}

}  // namespace
}  // namespace asteria::cli

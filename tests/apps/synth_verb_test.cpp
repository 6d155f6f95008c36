// `asteria synth` in process: the files of --out (well-formed, consistent with each other),
// --compare's table, tiered placement with an NVMe directory, and clear errors for bad options.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "apps/asteria/verbs.hpp"
#include "tests/common/cli_harness.hpp"
#include "tests/io/temp_dir.hpp"

namespace asteria::cli {
namespace {

using testing::TempDir;

using testing::lines_of;
using testing::run_cli;
using Outcome = testing::CliOutcome;

std::size_t column(const std::vector<std::string>& header, const std::string& name) {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return i;
  ADD_FAILURE() << "no column " << name;
  return 0;
}

Args small_fake_run(const std::string& out_dir) {
  return {"synth",   "--time", "simulated",       "--layers", "3",    "--rows",   "12",
          "--cols",  "10",        "--max-precond-dim", "8",    "--steps", "6",   "--warmup-steps",
          "2",       "--precondition-frequency", "2", "--step-seconds", "0.03", "--no-progress", "--out", out_dir};
}

TEST(SynthVerb, WritesAStepsCsvAndASummaryThatAgree) {
  TempDir dir;
  const std::string out_dir = dir.file("run");
  const Outcome r = run_cli(small_fake_run(out_dir));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("p50"), std::string::npos) << r.out;
  EXPECT_TRUE(r.err.empty()) << "--no-progress printed: " << r.err;

  const auto lines = lines_of(out_dir + "/steps.csv");
  ASSERT_EQ(lines.size(), 1u + 8u);  // header, 2 warm-up + 6 measured steps
  const auto header = testing::split_csv_line(lines[0]);
  for (const char* name : {"step", "step_time_s", "visible_optimizer_s", "refresh_backlog", "max_staleness",
                           "state_move_wait_s",
                           "resident_device_bytes", "resident_host_bytes", "resident_nvme_bytes",
                           "moved_device_host_bytes", "moved_host_device_bytes", "moved_host_nvme_bytes",
                           "moved_nvme_host_bytes"})
    column(header, name);
  double measured_time = 0.0;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const auto cells = testing::split_csv_line(lines[i]);
    ASSERT_EQ(cells.size(), header.size()) << lines[i];
    EXPECT_EQ(std::stoi(cells[column(header, "step")]), static_cast<int>(i));
    EXPECT_EQ(cells[column(header, "warmup")], i <= 2 ? "1" : "0");
    const double step_time = std::stod(cells[column(header, "step_time_s")]);
    EXPECT_GT(step_time, 0.0);
    EXPECT_NEAR(std::stod(cells[column(header, "visible_optimizer_s")]),
                step_time - std::stod(cells[column(header, "compute_s")]), 1e-8);
    if (i > 2) measured_time += step_time;
  }

  std::ifstream json_file(out_dir + "/summary.json");
  const nlohmann::json summary = nlohmann::json::parse(json_file);
  EXPECT_EQ(summary["verb"], "synth");
  EXPECT_EQ(summary["numerics"], "refresh");
  EXPECT_EQ(summary["time"], "simulated");
  EXPECT_EQ(summary["optimizer"], "shampoo");
  EXPECT_EQ(summary["steps"], 6);
  EXPECT_EQ(summary["warmup_steps"], 2);
  EXPECT_EQ(summary["parameters"], 3 * 12 * 10);
  EXPECT_NEAR(summary["total_step_s"].get<double>(), measured_time, 1e-9);
  const double p50 = summary["p50_step_s"].get<double>();
  const double p99 = summary["p99_step_s"].get<double>();
  EXPECT_LE(p50, p99);
  EXPECT_NEAR(summary["p99_over_p50"].get<double>(), p99 / p50, 1e-9);
  EXPECT_TRUE(summary["visible_optimizer_s"].is_number());
  EXPECT_GT(summary["refreshes_submitted"].get<int>(), 0);
  // Flat: no value of the summary is an object (the shortfall is a list of tiers).
  for (const auto& [key, value] : summary.items()) EXPECT_FALSE(value.is_object()) << key;
}

// With a profile that gives power, synth reports the measured steps' energy as sim does: its
// parts add up, the mean power is energy over time and at least the profile's idle draw (gb10:
// 10 W GPU + 12 W CPU + 9.5 W memory + NVMe and NIC at rest); without a profile, null.
TEST(SynthVerb, AProfileWithPowerGivesTheRunsEnergy) {
  TempDir dir;
  Args args = small_fake_run(dir.file("gb10"));
  args.insert(args.end(), {"--hw", "gb10"});
  ASSERT_EQ(run_cli(args).code, 0);
  std::ifstream in(dir.file("gb10") + "/summary.json");
  const nlohmann::json s = nlohmann::json::parse(in);
  const double energy = s.at("energy_per_step_j").get<double>();
  double parts = 0.0;
  for (const char* part : {"device", "host", "memory", "storage", "network"})
    parts += s.at(std::string(part) + "_energy_per_step_j").get<double>();
  EXPECT_NEAR(parts, energy, 1e-9 * energy);
  EXPECT_NEAR(s.at("mean_power_w").get<double>(), energy / s.at("mean_step_s").get<double>(), 1e-6 * energy);
  EXPECT_GE(s.at("mean_power_w").get<double>(), 10.0 + 12.0 + 9.5);
  ASSERT_EQ(run_cli(small_fake_run(dir.file("none"))).code, 0);
  std::ifstream none(dir.file("none") + "/summary.json");
  EXPECT_TRUE(nlohmann::json::parse(none).at("energy_per_step_j").is_null());
}

TEST(SynthVerb, CompareRunsEverySchemeAndTabulatesThem) {
  TempDir dir;
  const std::string out_dir = dir.file("compare");
  const Outcome r = run_cli({"synth", "--compare", "--time", "simulated", "--layers", "2", "--rows", "16", "--cols", "16",
                             "--steps", "6", "--warmup-steps", "1", "--precondition-frequency", "3",
                             "--fake-host-gflops", "0.01", "--no-progress", "--out", out_dir});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("refresh / step"), std::string::npos) << r.out;
  const auto table = lines_of(out_dir + "/table.csv");
  ASSERT_EQ(table.size(), 8u);  // header + AdamW + 3 Shampoo + 3 SOAP
  EXPECT_EQ(testing::split_csv_line(table[1])[0], "adamw");
  EXPECT_EQ(testing::split_csv_line(table[4])[0], "shampoo async S=5");
  EXPECT_DOUBLE_EQ(std::stod(testing::split_csv_line(table[1])[column(testing::split_csv_line(table[0]), "p50_over_adamw_p50")]), 1.0);
  std::ifstream json_file(out_dir + "/summary.json");
  const nlohmann::json summary = nlohmann::json::parse(json_file);
  EXPECT_EQ(summary["runs"].size(), 7u);
  // The step was sized from the measured refresh: refresh / step = 3 for Shampoo.
  EXPECT_NEAR(summary["shampoo_full_refresh_s"].get<double>() / summary["step_compute_s"].get<double>(), 3.0, 1e-6);
  // Synchronous Shampoo spikes on its refresh steps (modelled time: deterministic).
  const nlohmann::json& sync = summary["runs"][1];
  EXPECT_EQ(sync["staleness"], 0);
  EXPECT_GT(sync["p99_over_p50"].get<double>(), 1.5);
  const auto steps = lines_of(out_dir + "/steps.csv");
  EXPECT_EQ(steps.size(), 1u + 7u * 7u);
}

// Three layers of 13824 B of state: the device holds one, the host one beside the 27648 B kept
// for the refresh jobs' buffers (48 KiB - 27 KiB = 21 KiB), NVMe the third.
TEST(SynthVerb, TieredPlacementWithAnNvmeDirectoryOnTheRealBackend) {
  TempDir dir;
  const Outcome r = run_cli({"synth", "--layers", "3", "--rows", "24", "--cols", "24", "--steps", "3",
                             "--warmup-steps", "1", "--step-seconds", "0.003", "--placement", "tiered",
                             "--device-budget", "20KiB", "--host-budget", "48KiB", "--nvme-dir", dir.file("nvme"),
                             "--host-workers", "1", "--no-progress", "--out", dir.file("out")});
  ASSERT_EQ(r.code, 0) << r.err;
  std::ifstream json_file(dir.file("out") + "/summary.json");
  const nlohmann::json summary = nlohmann::json::parse(json_file);
  EXPECT_LE(summary["peak_device_bytes"].get<std::size_t>(), 20u * 1024u);
  EXPECT_LE(summary["peak_host_bytes"].get<std::size_t>(), 48u * 1024u);
  EXPECT_GT(summary["moved_host_nvme_bytes"].get<std::size_t>() + summary["moved_device_nvme_bytes"].get<std::size_t>(),
            0u);
}

TEST(SynthVerb, BadOptionsAreClearErrors) {
  struct Bad {
    Args args;          // added to a small, valid fake-backend run that omits these options
    std::string names;  // the message must name this option
  };
  const std::vector<Bad> cases = {
      {{"--layers", "0"}, "--layers"},
      {{"--rows", "-3"}, "--rows"},
      {{"--numerics", "fast"}, "--numerics"},
      {{"--time", "later"}, "--time"},
      {{"--time", "measured", "--numerics", "refresh"}, "--numerics"},
      {{"--numerics", "shapes", "--time", "modelled"}, "--numerics"},
      {{"--model", "tiny", "--shape", "12x4"}, "--model"},
      {{"--trace-steps", "3:4"}, "--trace-steps"},
      {{"--trace", "--trace-steps", "5:2"}, "--trace-steps"},
      {{"--placement", "cloud"}, "--placement"},
      {{"--publish", "eager"}, "--publish"},
      {{"--optimizer", "sgd"}, "--optimizer"},
      {{"--shape", "12x"}, "--shape"},
      {{"--shape", "12x4", "--layers", "3"}, "--shape"},
      {{"--layer-flops", "1e9", "--step-seconds", "0.1"}, "--layer-flops"},
      {{"--steps", "0"}, "--steps"},
      {{"--staleness", "-1"}, "--staleness"},
      {{"--device-budget", "12 parsecs"}, "--device-budget"},
      {{"--time", "simulated", "--nvme-dir", "/tmp/x"}, "--nvme-dir"},
      {{"--time", "modelled", "--placement", "nvme"}, "--placement"},
      {{"--step-seconds", "1e-7"}, "--step-seconds"},
  };
  const Args base = {"--time", "simulated", "--rows", "8", "--cols", "8", "--steps", "2", "--warmup-steps", "0"};
  for (const Bad& c : cases) {
    SCOPED_TRACE(c.names);
    Args args = {"synth", "--no-progress"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    for (std::size_t i = 0; i < base.size(); i += 2)
      if (std::find(c.args.begin(), c.args.end(), base[i]) == c.args.end()) {
        args.push_back(base[i]);
        args.push_back(base[i + 1]);
      }
    const Outcome r = run_cli(args);
    EXPECT_EQ(r.code, 1) << r.err;  // 1: an Asteria error (2 would be a usage error, 3 an internal one)
    EXPECT_NE(r.err.find(c.names), std::string::npos) << r.err;
  }
  // Unknown options are usage errors (exit code 2).
  EXPECT_EQ(run_cli({"synth", "--bogus"}).code, 2);
  // State that cannot fit the device under device placement: a placement error naming the tier.
  const Outcome full = run_cli({"synth", "--time", "simulated", "--layers", "2", "--rows", "64", "--cols", "64",
                                "--device-budget", "1KiB", "--no-progress"});
  EXPECT_EQ(full.code, 1);
  EXPECT_NE(full.err.find("device"), std::string::npos) << full.err;
}

TEST(SynthVerb, HelpDescribesNumericsAndTime) {
  const Outcome r = run_cli({"synth", "--help"});
  EXPECT_EQ(r.code, 0);
  for (const char* word : {"--numerics", "--time", "modelled", "refresh", "--trace", "--overwrite"})
    EXPECT_NE(r.out.find(word), std::string::npos) << word;
  EXPECT_NE(r.out.find("--compare"), std::string::npos);
}

}  // namespace
}  // namespace asteria::cli

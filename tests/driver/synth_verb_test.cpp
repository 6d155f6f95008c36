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
  return {"synth",   "--backend", "fake",          "--layers", "3",    "--rows",   "12",
          "--cols",  "10",        "--max-precond-dim", "8",    "--steps", "6",   "--warmup-steps",
          "2",       "--precondition-frequency", "2", "--step-seconds", "0.03", "--quiet", "--out", out_dir};
}

TEST(SynthVerb, WritesAStepsCsvAndASummaryThatAgree) {
  TempDir dir;
  const std::string out_dir = dir.file("run");
  const Outcome r = run_cli(small_fake_run(out_dir));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("p50"), std::string::npos) << r.out;
  EXPECT_TRUE(r.err.empty()) << "--quiet printed: " << r.err;

  const auto lines = lines_of(out_dir + "/steps.csv");
  ASSERT_EQ(lines.size(), 1u + 8u);  // header, 2 warm-up + 6 measured steps
  const auto header = testing::split_csv_line(lines[0]);
  for (const char* name : {"step", "step_time_s", "visible_optimizer_s", "queue_depth", "max_staleness",
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
  EXPECT_EQ(summary["mode"], "emulated");
  EXPECT_EQ(summary["optimizer"], "shampoo");
  EXPECT_EQ(summary["steps"], 6);
  EXPECT_EQ(summary["warmup_steps"], 2);
  EXPECT_EQ(summary["layers"].size(), 3u);
  EXPECT_NEAR(summary["step_time_s"]["total"].get<double>(), measured_time, 1e-6);
  const double p50 = summary["step_time_s"]["p50"].get<double>();
  const double p99 = summary["step_time_s"]["p99"].get<double>();
  EXPECT_LE(p50, p99);
  EXPECT_NEAR(summary["step_time_s"]["p99_over_p50"].get<double>(), p99 / p50, 1e-9);
  EXPECT_TRUE(summary["visible_optimizer_s"].contains("mean"));
  EXPECT_GT(summary["totals"]["refreshes_submitted"].get<int>(), 0);
}

TEST(SynthVerb, CompareRunsEverySchemeAndTabulatesThem) {
  TempDir dir;
  const std::string out_dir = dir.file("compare");
  const Outcome r = run_cli({"synth", "--compare", "--backend", "fake", "--layers", "2", "--rows", "16", "--cols", "16",
                             "--steps", "6", "--warmup-steps", "1", "--precondition-frequency", "3",
                             "--fake-host-gflops", "0.01", "--quiet", "--out", out_dir});
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
  EXPECT_NEAR(summary["refresh_measurement"]["shampoo_ratio"].get<double>(), 3.0, 1e-6);
  // Synchronous Shampoo spikes on its refresh steps (modelled time: deterministic).
  const nlohmann::json& sync = summary["runs"][1];
  EXPECT_EQ(sync["staleness"], 0);
  EXPECT_GT(sync["step_time_s"]["p99_over_p50"].get<double>(), 1.5);
  const auto steps = lines_of(out_dir + "/steps.csv");
  EXPECT_EQ(steps.size(), 1u + 7u * 7u);
}

TEST(SynthVerb, TieredPlacementWithAnNvmeDirectoryOnTheRealBackend) {
  TempDir dir;
  const Outcome r = run_cli({"synth", "--layers", "3", "--rows", "24", "--cols", "24", "--steps", "3",
                             "--warmup-steps", "1", "--step-seconds", "0.003", "--placement", "tiered",
                             "--device-budget", "20KiB", "--host-budget", "20KiB", "--nvme-dir", dir.file("nvme"),
                             "--host-threads", "1", "--quiet", "--out", dir.file("out")});
  ASSERT_EQ(r.code, 0) << r.err;
  std::ifstream json_file(dir.file("out") + "/summary.json");
  const nlohmann::json summary = nlohmann::json::parse(json_file);
  EXPECT_LE(summary["peak_resident_bytes"]["device"].get<std::size_t>(), 20u * 1024u);
  EXPECT_LE(summary["peak_resident_bytes"]["host"].get<std::size_t>(), 20u * 1024u);
  EXPECT_GT(summary["bytes_moved"]["host->nvme"].get<std::size_t>() +
                summary["bytes_moved"]["device->nvme"].get<std::size_t>(),
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
      {{"--mode", "fast"}, "--mode"},
      {{"--placement", "cloud"}, "--placement"},
      {{"--publish", "eager"}, "--publish"},
      {{"--backend", "gpu"}, "--backend"},
      {{"--optimizer", "sgd"}, "--optimizer"},
      {{"--shape", "12x"}, "--shape"},
      {{"--shape", "12x4", "--layers", "3"}, "--shape"},
      {{"--layer-flops", "1e9", "--step-seconds", "0.1"}, "--layer-flops"},
      {{"--steps", "0"}, "--steps"},
      {{"--staleness", "-1"}, "--staleness"},
      {{"--device-budget", "12 parsecs"}, "--device-budget"},
      {{"--backend", "fake", "--nvme-dir", "/tmp/x"}, "--nvme-dir"},
      {{"--backend", "real", "--placement", "nvme"}, "--placement"},
      {{"--step-seconds", "1e-7"}, "--step-seconds"},
  };
  const Args base = {"--backend", "fake", "--rows", "8", "--cols", "8", "--steps", "2", "--warmup-steps", "0"};
  for (const Bad& c : cases) {
    SCOPED_TRACE(c.names);
    Args args = {"synth", "--quiet"};
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
  const Outcome full = run_cli({"synth", "--backend", "fake", "--layers", "2", "--rows", "64", "--cols", "64",
                                "--device-budget", "1KiB", "--quiet"});
  EXPECT_EQ(full.code, 1);
  EXPECT_NE(full.err.find("device"), std::string::npos) << full.err;
}

TEST(SynthVerb, HelpDescribesBothModes) {
  const Outcome r = run_cli({"synth", "--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("emulated"), std::string::npos);
  EXPECT_NE(r.out.find("--compare"), std::string::npos);
}

}  // namespace
}  // namespace asteria::cli

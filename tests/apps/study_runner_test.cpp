// `asteria study` end to end, with a stand-in for `asteria sim`: a shell script that records its
// arguments, writes a summary.json and steps.csv from them, fails for one model, and records how
// many runs were alive at once. The checks of every run's inputs before any starts. Also the
// child-process pool on its own.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "apps/asteria/study_process.hpp"
#include "apps/asteria/study_spec.hpp"
#include "apps/asteria/study_validation.hpp"
#include "core/common/error.hpp"
#include "tests/common/cli_harness.hpp"
#include "tests/io/temp_dir.hpp"
#include "tests/apps/study_stand_in.hpp"

namespace asteria::cli {
namespace {

using testing::lines_of;
using testing::run_cli;
using testing::split_csv_line;
using testing::TempDir;


// 2 x 2 points that fit, then one that does not fit and one whose run fails: 6 runs.
constexpr const char* kStudy =
    "name: standin\n"
    "defaults: {steps: 4, numerics: shapes, publish: opportunistic}\n"
    "grid:\n"
    "  - hw: [gb10]\n    model: [m1.yaml]\n    optimizer: [soap]\n    placement: [device, tiered]\n"
    "    staleness: [0, 2]\n"
    "  - hw: gb10\n    model: [big.yaml, crash.yaml]\n    optimizer: soap\n    placement: device\n"
    "    staleness: 1\n";

const std::vector<std::string> kSlugs = {
    "gb10_m1_soap_device_s0", "gb10_m1_soap_device_s2",  "gb10_m1_soap_tiered_s0",
    "gb10_m1_soap_tiered_s2", "gb10_big_soap_device_s1", "gb10_crash_soap_device_s1",
};

TEST(StudyVerb, RunsEveryPointInParallelReportsTheFailureAndTabulatesAll) {
  StudyFixture f(kStudy);
  write(f.sync / "overlap", "");
  const auto r = run_cli({"study", f.study.string(), "--out", f.out.string(), "--jobs", "2", "--asteria",
                          f.program.string(), "--no-plots"});
  EXPECT_EQ(r.code, 1) << r.err;  // one run failed

  // One progress line per finished run; the failure names its log.
  for (int k = 1; k <= 6; ++k)
    EXPECT_NE(r.err.find("[" + std::to_string(k) + "/6] "), std::string::npos) << r.err;
  const std::string failed_log = f.run_dir("gb10_crash_soap_device_s1") + "/log.txt";
  EXPECT_NE(r.err.find("gb10_crash_soap_device_s1: FAILED: exit code 1; log " + failed_log), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("gb10_big_soap_device_s1: does not fit: device 2.0 GiB short"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1 of 6 runs failed"), std::string::npos) << r.err;
  // The run's stdout and stderr went to its log.
  const std::string log = read_all(failed_log);
  EXPECT_NE(log.find("stand-in sim for crash"), std::string::npos) << log;
  EXPECT_NE(log.find("simulated failure: model crash"), std::string::npos) << log;

  // Parallel: the first two runs were alive together, and never more than two at once.
  EXPECT_EQ(read_all(f.run_dir(kSlugs[0]) + "/overlap.txt"), "yes\n");
  EXPECT_EQ(read_all(f.run_dir(kSlugs[1]) + "/overlap.txt"), "yes\n");
  for (const std::string& slug : kSlugs) {
    const int alive = std::stoi(read_all(f.run_dir(slug) + "/alive_at_start.txt"));
    EXPECT_GE(alive, 1) << slug;
    EXPECT_LE(alive, 2) << slug;
  }

  // The command line of a run: every setting, the run directory, no progress, and no trace
  // option (a run records no trace unless given --trace).
  EXPECT_EQ(read_all(f.run_dir(kSlugs[3]) + "/args.txt"),
            "sim --hw gb10 --model " + f.model_file("m1") +
                " --optimizer soap --placement tiered --staleness 2 --publish opportunistic --steps 4 "
                "--numerics shapes --out " + f.run_dir(kSlugs[3]) + " --no-progress\n");

  // The table: all six runs in the study's order.
  const std::vector<std::string> table = lines_of((f.out / "table.csv").string());
  ASSERT_EQ(table.size(), 7U);
  const std::vector<std::string> header = split_csv_line(table[0]);
  const auto column = [&](const std::string& name) {
    const auto it = std::find(header.begin(), header.end(), name);
    EXPECT_NE(it, header.end()) << name;
    return static_cast<std::size_t>(it - header.begin());
  };
  for (std::size_t i = 0; i < kSlugs.size(); ++i) {
    std::vector<std::string> row = split_csv_line(table[i + 1]);
    row.resize(header.size());
    EXPECT_EQ(row[column("config")], kSlugs[i]);
    EXPECT_EQ(row[column("run_dir")], "runs/" + kSlugs[i]);
    if (i < 4) {
      EXPECT_EQ(row[column("fits")], "true") << table[i + 1];
      EXPECT_EQ(row[column("p50_step_s")], "0.25");
      EXPECT_EQ(row[column("max_staleness")], row[column("staleness")]);
      EXPECT_EQ(row[column("peak_device_bytes")], "1073741824");
    }
  }
  const std::vector<std::string> big = split_csv_line(table[5]);
  EXPECT_EQ(big[column("fits")], "false");
  EXPECT_EQ(big[column("shortfall")], "device 2.0 GiB short");
  const std::vector<std::string> crashed = split_csv_line(table[6]);
  EXPECT_EQ(crashed[column("fits")], "false");
  EXPECT_EQ(crashed[column("shortfall")],
            "run failed: exit code 1 (log: runs/gb10_crash_soap_device_s1/log.txt)");

  // The Markdown table is written and printed; --no-plots is respected.
  const std::vector<std::string> md = lines_of((f.out / "table.md").string());
  ASSERT_EQ(md.size(), 8U);
  EXPECT_NE(r.out.find(md[0]), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| gb10_crash_soap_device_s1 |"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(f.out / "plots"));
  EXPECT_FALSE(std::filesystem::exists(f.out / "plots.log"));
  EXPECT_EQ(r.out.find("plot:"), std::string::npos) << r.out;
  EXPECT_EQ(read_all(f.out / "study.yaml"), kStudy);
}

TEST(StudyVerb, OneJobRunsOneAtATimeAndAllSucceed) {
  StudyFixture f(
      "name: serial\ngrid:\n  - hw: [gb10]\n    model: [m1.yaml]\n    optimizer: [soap]\n    placement: [device]\n"
      "    staleness: [0, 1, 2]\n");
  // A summary from an earlier study in the same directory: refused and left as it is, then
  // replaced with --overwrite; it must never pass for this study's.
  std::filesystem::create_directories(f.out / "runs/gb10_m1_soap_device_s0");
  write(f.out / "runs/gb10_m1_soap_device_s0/summary.json", "old");
  write(f.out / "runs/gb10_m1_soap_device_s0/log.txt", "old log");
  const Args args = {"study", f.study.string(), "--out", f.out.string(), "--jobs", "1", "--asteria",
                     f.program.string(), "--no-plots"};
  const auto refused = run_cli(args);
  EXPECT_EQ(refused.code, 1);
  EXPECT_NE(refused.err.find("--overwrite"), std::string::npos) << refused.err;
  EXPECT_EQ(read_all(f.out / "runs/gb10_m1_soap_device_s0/summary.json"), "old");
  EXPECT_TRUE(std::filesystem::is_empty(f.sync)) << "a refused study must start no run";

  Args overwrite = args;
  overwrite.push_back("--overwrite");
  const auto r = run_cli(overwrite);
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* slug : {"gb10_m1_soap_device_s0", "gb10_m1_soap_device_s1", "gb10_m1_soap_device_s2"})
    EXPECT_EQ(read_all(f.run_dir(slug) + "/alive_at_start.txt"), "1\n") << slug;
  EXPECT_NE(read_all(f.out / "runs/gb10_m1_soap_device_s0/log.txt"), "old log");
  EXPECT_EQ(lines_of((f.out / "table.csv").string()).size(), 4U);
}

TEST(StudyVerb, AUsersFileAmongTheRunsIsNeverRemoved) {
  StudyFixture f(
      "name: mine\ngrid:\n  - hw: [gb10]\n    model: [m1.yaml]\n    optimizer: [soap]\n    placement: [device]\n"
      "    staleness: [0]\n");
  std::filesystem::create_directories(f.out / "runs/gb10_m1_soap_device_s0");
  write(f.out / "runs/gb10_m1_soap_device_s0/notes.txt", "mine");
  const auto r = run_cli({"study", f.study.string(), "--out", f.out.string(), "--overwrite", "--asteria",
                          f.program.string(), "--no-plots"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("runs"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("did not write"), std::string::npos) << r.err;
  EXPECT_EQ(read_all(f.out / "runs/gb10_m1_soap_device_s0/notes.txt"), "mine");
  EXPECT_TRUE(std::filesystem::is_empty(f.sync));
}

TEST(StudyVerb, DryRunPrintsTheRunsAndRunsNothing) {
  StudyFixture f(kStudy);
  const auto r = run_cli({"study", f.study.string(), "--dry-run", "--asteria", f.program.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string first = f.program.string() + " sim --hw gb10 --model " + f.model_file("m1") +
                            " --optimizer soap --placement device --staleness 0 --publish opportunistic --steps 4 "
                            "--numerics shapes --out results/standin/runs/gb10_m1_soap_device_s0 --no-progress\n";
  EXPECT_NE(r.out.find("# study standin: 6 runs\n" + first), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("results/standin/runs/gb10_crash_soap_device_s1"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("--trace"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path("results/standin")));
  EXPECT_TRUE(std::filesystem::is_empty(f.sync));  // the stand-in never ran

  // With --traces every run gets --trace.
  const auto traced = run_cli({"study", f.study.string(), "--dry-run", "--traces", "--asteria", f.program.string()});
  ASSERT_EQ(traced.code, 0) << traced.err;
  EXPECT_NE(traced.out.find("--no-progress --trace\n"), std::string::npos) << traced.out;
  EXPECT_EQ(std::count(traced.out.begin(), traced.out.end(), '\n'), 7);  // the heading and six runs
}

TEST(StudyVerb, TracesAddTraceToEveryRun) {
  StudyFixture f(
      "name: traced\ngrid:\n  - hw: [gb10]\n    model: [m1.yaml]\n    optimizer: [soap]\n    placement: [device]\n"
      "    staleness: [0, 1]\n");
  const auto r = run_cli({"study", f.study.string(), "--out", f.out.string(), "--jobs", "1", "--asteria",
                          f.program.string(), "--no-plots", "--traces"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* slug : {"gb10_m1_soap_device_s0", "gb10_m1_soap_device_s1"}) {
    const std::string args = read_all(f.run_dir(slug) + "/args.txt");
    EXPECT_NE(args.find(" --out " + f.run_dir(slug) + " --no-progress --trace\n"), std::string::npos) << args;
    EXPECT_EQ(args.find("--no-trace"), std::string::npos) << args;
  }
}

TEST(StudyVerb, PlotsAreDrawnFromTheTable) {
  StudyFixture f(
      "name: plotted\ngrid:\n  - hw: [gb10]\n    model: [m1.yaml, big.yaml]\n    optimizer: [soap]\n"
      "    placement: [device]\n    staleness: [0, 1]\n");
  const auto r = run_cli({"study", f.study.string(), "--out", f.out.string(), "--jobs", "2", "--asteria",
                          f.program.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* name : {"step_breakdown.png", "tier_occupancy.png", "staleness_histogram.png"}) {
    const std::filesystem::path png = f.out / "plots" / name;
    EXPECT_TRUE(std::filesystem::is_regular_file(png)) << png << "\n" << read_all(f.out / "plots.log");
    EXPECT_NE(r.out.find("plot: " + png.string()), std::string::npos) << r.out;
  }
  EXPECT_EQ(r.err.find("plots failed"), std::string::npos) << r.err;
}

TEST(StudyVerb, BadInput) {
  StudyFixture f("name: bad\ngrid:\n  - hw: [gb10]\n    model: [m]\n    optimizer: [soap]\n"
                 "    placement: [gpu]\n    staleness: [0]\n");
  const auto invalid = run_cli({"study", f.study.string(), "--asteria", f.program.string()});
  EXPECT_EQ(invalid.code, 1);
  EXPECT_NE(invalid.err.find(f.study.string() + ": grid[0].placement[0]: expected device, host, tiered, nvme or planned, found 'gpu' (line 6)"),
            std::string::npos)
      << invalid.err;
  const auto missing = run_cli({"study", (f.dir.path() / "none.yaml").string()});
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("none.yaml: file:"), std::string::npos) << missing.err;
  EXPECT_EQ(run_cli({"study"}).code, 2);
  EXPECT_EQ(run_cli({"study", "a.yaml", "b.yaml"}).code, 2);

  StudyFixture good(
      "name: good\ngrid:\n  - {hw: gb10, model: m1.yaml, optimizer: soap, placement: host, staleness: 0}\n");
  const auto jobs = run_cli({"study", good.study.string(), "--jobs", "0", "--asteria", good.program.string()});
  EXPECT_EQ(jobs.code, 1);
  EXPECT_NE(jobs.err.find("--jobs"), std::string::npos) << jobs.err;
  const auto binary = run_cli({"study", good.study.string(), "--asteria", "/nonexistent/asteria"});
  EXPECT_EQ(binary.code, 1);
  EXPECT_NE(binary.err.find("--asteria: asteria: expected an executable file"), std::string::npos) << binary.err;

  // The launchers' and tasks' options, each named.
  const auto error_of = [&](Args extra) {
    Args args = {"study", good.study.string(), "--asteria", good.program.string(), "--out",
                 (good.dir.path() / "launch").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = run_cli(args);
    EXPECT_NE(r.code, 0);
    return r.err;
  };
  EXPECT_NE(error_of({"--gather", "--slurm"}).find("expected at most one of them"), std::string::npos);
  EXPECT_NE(error_of({"--sbatch-option=--time=1"}).find("--sbatch-option"), std::string::npos);
  EXPECT_NE(error_of({"--point", "5"}).find("--point: point: expected a point of the study, 0 to 0, found 5"),
            std::string::npos);
  EXPECT_NE(error_of({"--gather"}).find("--gather: expected a results directory this study prepared"),
            std::string::npos);
  EXPECT_NE(error_of({"--resume", "--overwrite"}).find("expected at most one of the two"), std::string::npos);
  EXPECT_TRUE(std::filesystem::is_empty(good.sync)) << "no run started";

  const auto help = run_cli({"study", "--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("usage: asteria study FILE.yaml"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("--dry-run"), std::string::npos) << help.out;
}

// The inputs of every run are checked before any starts: a problem launches nothing (not even
// under --dry-run) and names the study file, where the value was written and the loader's error.

// gb10 with gpu.memory_bandwidth spoiled, so that loading it fails on a known field.
std::string broken_profile() {
  const std::filesystem::path repo = std::filesystem::path(ASTERIA_TEST_DATA_DIR).parent_path().parent_path();
  std::string text = read_all(repo / "hwmodels/profiles/gb10.yaml");
  const std::string good = "    value: 218 GB/s\n";
  const std::size_t at = text.find(good);
  EXPECT_NE(at, std::string::npos) << "gb10.yaml changed: update broken_profile()";
  if (at != std::string::npos) text.replace(at, good.size(), "    value: fast\n");
  return text;
}

TEST(StudyChecks, ABrokenProfileLaunchesNothingAndNamesTheFileAndField) {
  StudyFixture f(
      "name: broken\n"
      "grid:\n"
      "  - hw: [gb10, box.yaml]\n"
      "    model: [m1.yaml]\n"
      "    optimizer: [soap, kl-shampoo]\n"
      "    placement: [device, host]\n"
      "    staleness: [0, 1]\n");
  const std::filesystem::path box = f.dir.path() / "box.yaml";
  write(box, broken_profile());
  for (const bool dry_run : {false, true}) {
    Args args{"study", f.study.string(), "--out", f.out.string(), "--asteria", f.program.string(), "--no-plots"};
    if (dry_run) args.emplace_back("--dry-run");
    const auto r = run_cli(args);
    EXPECT_EQ(r.code, 1) << r.err;
    // The study file and field, the line, then the loader's own file, field and expectation.
    const std::string expected = f.study.string() + ": grid[0].hw[1]: expected a hardware profile that loads (line 3): " +
                                 box.string() + ": gpu.memory_bandwidth: ";
    EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
    // Eight runs use the profile; it is reported once, and none of them is started.
    EXPECT_EQ(r.err.find("grid[0].hw[1]"), r.err.rfind("grid[0].hw[1]")) << r.err;
    EXPECT_EQ(r.err.find("FAILED"), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find(" sim "), std::string::npos) << r.out;
    EXPECT_TRUE(f.nothing_ran()) << (dry_run ? "--dry-run" : "run");
  }
}

TEST(StudyChecks, AMissingModelFileIsNamed) {
  StudyFixture f(
      "name: missing\n"
      "defaults:\n"
      "  model: absent.yaml\n"
      "grid:\n"
      "  - {hw: gb10, optimizer: soap, placement: device, staleness: 0}\n");
  const auto r = run_cli({"study", f.study.string(), "--out", f.out.string(), "--asteria", f.program.string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find(f.study.string() + ": defaults.model: expected a model config that loads (line 3): "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(f.model_file("absent") + ": expected a model file or one of the shipped models"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(f.nothing_ran());
}

TEST(StudyChecks, UnitsAndNodesMustAgreeWithTheProfile) {
  // gh200-alps: 4 units per node, so 2 nodes hold 5 to 8 units.
  StudyFixture f(
      "name: units\n"
      "grid:\n"
      "  - hw: gh200-alps\n"
      "    model: m1.yaml\n"
      "    optimizer: soap\n"
      "    placement: device\n"
      "    staleness: 0\n"
      "    units: [6, 9]\n"
      "    nodes: 2\n");
  const auto r = run_cli({"study", f.study.string(), "--out", f.out.string(), "--asteria", f.program.string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find(f.study.string() + ": grid[0].nodes: expected units and nodes that agree on profile "
                                          "gh200-alps (units grid[0].units[1], nodes grid[0].nodes) (line 9): "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("holds 5 to 8 units, found --units 9"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("units[0]"), std::string::npos) << r.err;  // 6 units on 2 nodes is fine
  EXPECT_TRUE(f.nothing_ran());
}

TEST(StudyChecks, AStragglerMustBeOneOfTheRunsUnits) {
  // gh200-alps: 4 units per node. Rank 3 exists on one node, rank 4 only on two.
  const std::string yaml =
      "name: slow\n"
      "grid:\n"
      "  - hw: gh200-alps\n"
      "    model: tiny\n"
      "    optimizer: soap\n"
      "    placement: device\n"
      "    staleness: 0\n"
      "    nodes: [1, 2]\n"
      "    straggler: ['3:2', '4:2']\n";
  const study::StudySpec spec = study::parse_study(yaml, "slow.yaml", "/studies");
  ASSERT_EQ(spec.points.size(), 4U);
  const std::vector<study::RunProblem> problems = study::run_input_problems(spec);
  ASSERT_EQ(problems.size(), 1U);
  EXPECT_EQ(problems[0].field, "grid[0].straggler[1]");
  EXPECT_EQ(problems[0].expectation,
            "expected a straggler rank below the run's 4 unit(s) (ranks 0-3 on gh200-alps), found rank 4 (line 9)");
}

TEST(StudyChecks, AnInvalidPreconditionFrequencyLaunchesNothing) {
  StudyFixture f(
      "name: freq\n"
      "defaults:\n"
      "  precondition_frequency: 0\n"
      "grid:\n"
      "  - {hw: gb10, model: m1.yaml, optimizer: soap, placement: device, staleness: 0}\n");
  const auto r = run_cli({"study", f.study.string(), "--out", f.out.string(), "--asteria", f.program.string()});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find(f.study.string() +
                       ": defaults.precondition_frequency: expected settings that asteria sim accepts together, with "
                       "optimizer soap (line 3): precondition_frequency: expected an integer >= 1"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(f.nothing_ran());
}

// Settings that exclude each other are found as asteria sim would find them, before any run.
TEST(StudyChecks, SettingsThatExcludeEachOtherAreFoundBeforeAnyRun) {
  const std::string yaml =
      "name: together\n"
      "grid:\n"
      "  - {hw: gb10, model: tiny, optimizer: soap, placement: device, staleness: 0,\n"
      "     parallelism: zero1, defer_fraction: [0, 0.25]}\n";
  const study::StudySpec spec = study::parse_study(yaml, "together.yaml", "/studies");
  const std::vector<study::RunProblem> problems = study::run_input_problems(spec);
  ASSERT_EQ(problems.size(), 1U);  // the run that defers
  EXPECT_EQ(problems[0].field, "grid[0].defer_fraction[1]");
  EXPECT_NE(problems[0].expectation.find("--defer-fraction: 0 with --parallelism zero1"), std::string::npos)
      << problems[0].expectation;
}

TEST(StudyChecks, TheHyperparametersARunWouldUseAreValidated) {
  // A point that carries a value the optimizer refuses is caught before any run, with the
  // optimizer's own check and the field where the value was written.
  const std::string yaml =
      "name: hp\n"
      "grid:\n"
      "  - {hw: gb10, model: tiny, optimizer: [soap, adamw], placement: device, staleness: 0,\n"
      "     precondition_frequency: 10}\n";
  study::StudySpec spec = study::parse_study(yaml, "hp.yaml", "/studies");
  EXPECT_TRUE(study::run_input_problems(spec).empty());
  for (study::StudyPoint& point : spec.points) point.values["precondition_frequency"] = "0";
  const std::vector<study::RunProblem> problems = study::run_input_problems(spec);
  ASSERT_EQ(problems.size(), 2U);  // one per optimizer
  EXPECT_EQ(problems[0].field, "grid[0].precondition_frequency");
  EXPECT_EQ(problems[0].expectation,
            "expected settings that asteria sim accepts together, with optimizer soap (line 4): "
            "precondition_frequency: expected an integer >= 1");
  EXPECT_NE(problems[1].expectation.find("with optimizer adamw"), std::string::npos) << problems[1].expectation;
  try {
    study::check_run_inputs(spec);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.source(), "hp.yaml");
    EXPECT_EQ(e.field(), "grid[0].precondition_frequency");
    EXPECT_NE(std::string(e.what()).find("\nhp.yaml: grid[0].precondition_frequency: expected settings that asteria "
                                         "sim accepts together, with optimizer adamw"),
              std::string::npos)
        << e.what();
  }
}

TEST(StudyChecks, EveryProblemIsListed) {
  StudyFixture f(
      "name: many\n"
      "grid:\n"
      "  - hw: [box.yaml, gb10, nowhere]\n"
      "    model: [m1.yaml, absent.yaml]\n"
      "    optimizer: soap\n"
      "    placement: device\n"
      "    staleness: 0\n");
  write(f.dir.path() / "box.yaml", broken_profile());
  const auto r = run_cli({"study", f.study.string(), "--out", f.out.string(), "--asteria", f.program.string()});
  EXPECT_EQ(r.code, 1);
  // In the order of the runs: the first problem is the error, each other follows on its own line.
  const std::string study = f.study.string();
  const std::size_t box = r.err.find("asteria study: error: " + study + ": grid[0].hw[0]: ");
  const std::size_t model = r.err.find("\n" + study + ": grid[0].model[1]: expected a model config that loads");
  const std::size_t name = r.err.find("\n" + study + ": grid[0].hw[2]: expected a hardware profile that loads");
  EXPECT_NE(box, std::string::npos) << r.err;
  EXPECT_NE(model, std::string::npos) << r.err;
  EXPECT_NE(name, std::string::npos) << r.err;
  EXPECT_LT(box, model);
  EXPECT_LT(model, name);
  EXPECT_NE(r.err.find("nowhere: profile: expected an existing profile file or a shipped profile name"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("(3 problems; no run was started)"), std::string::npos) << r.err;
  EXPECT_TRUE(f.nothing_ran());
}

// The process pool itself: exit codes, signals, programs that cannot start, the parallel limit.
TEST(StudyProcesses, ReportsHowEachJobEnded) {
  TempDir dir;
  const std::vector<study::Job> jobs = {
      {"/bin/sh", {"-c", "echo out; echo err >&2; exit 3"}, dir.path() / "a.log"},
      {"/bin/sh", {"-c", "kill -9 $$"}, dir.path() / "b.log"},
      {(dir.path() / "missing-program").string(), {}, dir.path() / "c.log"},
      {"sh", {"-c", "exit 0"}, dir.path() / "d.log"},  // found in PATH
  };
  std::vector<study::JobEnd> ends(jobs.size());
  std::vector<std::size_t> order;
  study::run_jobs(jobs, 2, [&](std::size_t i, const study::JobEnd& end) {
    ends[i] = end;
    order.push_back(i);
  });
  ASSERT_EQ(order.size(), 4U);
  EXPECT_EQ(ends[0].exit_code, 3);
  EXPECT_EQ(ends[0].describe(), "exit code 3");
  EXPECT_EQ(read_all(dir.path() / "a.log"), "out\nerr\n");
  EXPECT_EQ(ends[1].signal, 9);
  EXPECT_EQ(ends[1].describe(), "killed by signal 9");
  EXPECT_FALSE(ends[2].succeeded());
  EXPECT_NE(ends[2].describe().find("could not start"), std::string::npos) << ends[2].describe();
  EXPECT_TRUE(ends[3].succeeded()) << ends[3].describe();
}

TEST(StudyProcesses, AnExceptionFromTheCallbackStopsTheRest) {
  TempDir dir;
  const std::vector<study::Job> jobs = {
      {"/bin/sh", {"-c", "exit 0"}, dir.path() / "quick.log"},
      {"/bin/sh", {"-c", "exec sleep 30"}, dir.path() / "slow.log"},
  };
  // The slow job is terminated (not waited for 30 s) and reaped before the exception leaves.
  EXPECT_THROW(study::run_jobs(jobs, 2, [](std::size_t, const study::JobEnd&) { throw std::runtime_error("stop"); }),
               std::runtime_error);
}

}  // namespace
}  // namespace asteria::cli

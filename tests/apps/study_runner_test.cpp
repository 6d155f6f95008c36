// `asteria study` end to end, with a stand-in for `asteria sim`: a shell script that writes a
// summary.json and steps.csv from its arguments, fails for one model, and records how many runs
// were alive at once. Also the child-process pool on its own.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "apps/asteria/study_process.hpp"
#include "tests/common/cli_harness.hpp"
#include "tests/io/temp_dir.hpp"

namespace asteria::cli {
namespace {

using testing::lines_of;
using testing::run_cli;
using testing::split_csv_line;
using testing::TempDir;

std::string read_all(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write(const std::filesystem::path& file, const std::string& text) { std::ofstream(file) << text; }

// The stand-in `asteria`. Model "broken" fails with exit code 1; model "big" does not fit; every
// other run fits with p50 = 0.25 s and max staleness = its --staleness. With SYNC/overlap present
// each run waits (up to 5 s) until a second run has started: under --jobs 2 the first two runs
// must then overlap. SYNC/running-* counts the runs alive when each one starts.
std::string stand_in_script(const std::filesystem::path& sync) {
  return "#!/bin/sh\n"
         "sync='" + sync.string() + "'\n"
         "args=\"$*\"\n"
         "out=''; model=''; staleness=''\n"
         "while [ $# -gt 0 ]; do\n"
         "  case \"$1\" in\n"
         "    --out) out=\"$2\"; shift 2;;\n"
         "    --model) model=\"$2\"; shift 2;;\n"
         "    --staleness) staleness=\"$2\"; shift 2;;\n"
         "    *) shift;;\n"
         "  esac\n"
         "done\n"
         "touch \"$sync/running-$$\"\n"
         "ls \"$sync\" | grep -c '^running-' > \"$out/alive_at_start.txt\"\n"
         "echo \"$args\" > \"$out/args.txt\"\n"
         "echo \"stand-in sim for $model\"\n"
         "if [ -e \"$sync/overlap\" ]; then\n"
         "  touch \"$sync/started-$$\"\n"
         "  i=0\n"
         "  while [ \"$(ls \"$sync\" | grep -c '^started-')\" -lt 2 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done\n"
         "  if [ $i -lt 100 ]; then echo yes > \"$out/overlap.txt\"; else echo no > \"$out/overlap.txt\"; fi\n"
         "fi\n"
         "rm -f \"$sync/running-$$\"\n"
         "if [ \"$model\" = broken ]; then echo 'simulated failure: model broken' >&2; exit 1; fi\n"
         "if [ \"$model\" = big ]; then\n"
         "  echo '{\"verb\": \"sim\", \"fits\": false, \"shortfall\": [{\"tier\": \"device\", \"needed_bytes\": "
         "3221225472, \"free_bytes\": 1073741824, \"capacity_bytes\": 2147483648}]}' > \"$out/summary.json\"\n"
         "  exit 0\n"
         "fi\n"
         "printf 'step,warmup,step_time_s,compute_s,visible_optimizer_s,max_staleness,resident_device_bytes,"
         "resident_host_bytes,resident_nvme_bytes\\n0,1,0.3,0.2,0.1,0,100,0,0\\n1,0,0.25,0.2,0.05,%s,100,50,0\\n"
         "2,0,0.25,0.2,0.05,%s,100,50,0\\n' \"$staleness\" \"$staleness\" > \"$out/steps.csv\"\n"
         "echo \"{\\\"verb\\\": \\\"sim\\\", \\\"fits\\\": true, \\\"shortfall\\\": [], \\\"p50_step_s\\\": 0.25, "
         "\\\"p99_step_s\\\": 0.3, \\\"p99_over_p50\\\": 1.2, \\\"mean_step_s\\\": 0.26, \\\"compute_s\\\": 0.2, "
         "\\\"visible_optimizer_s\\\": 0.06, \\\"refresh_wait_s\\\": 0.04, \\\"state_move_wait_s\\\": 0.01, "
         "\\\"max_staleness\\\": $staleness, \\\"peak_device_bytes\\\": 1073741824, \\\"peak_host_bytes\\\": 0, "
         "\\\"peak_nvme_bytes\\\": 0}\" > \"$out/summary.json\"\n";
}

// A temp dir holding the stand-in binary, its SYNC dir and a study file.
struct StudyFixture {
  TempDir dir;
  std::filesystem::path sync = dir.path() / "sync";
  std::filesystem::path program = dir.path() / "fake-asteria";
  std::filesystem::path study = dir.path() / "study.yaml";
  std::filesystem::path out = dir.path() / "results";

  explicit StudyFixture(const std::string& study_text) {
    std::filesystem::create_directories(sync);
    write(program, stand_in_script(sync));
    ::chmod(program.c_str(), 0755);
    write(study, study_text);
  }
  std::string run_dir(const std::string& slug) const { return (out / "runs" / slug).string(); }
};

// 2 x 2 points that fit, then one that does not fit and one whose run fails: 6 runs.
constexpr const char* kStudy =
    "name: standin\n"
    "defaults: {steps: 4, mode: data-free}\n"
    "grid:\n"
    "  - hw: [gb10]\n    model: [m1]\n    optimizer: [soap]\n    placement: [device, tiered]\n"
    "    staleness: [0, 2]\n"
    "  - hw: gb10\n    model: [big, broken]\n    optimizer: soap\n    placement: device\n    staleness: 1\n";

const std::vector<std::string> kSlugs = {
    "gb10_m1_soap_device_s0", "gb10_m1_soap_device_s2",  "gb10_m1_soap_tiered_s0",
    "gb10_m1_soap_tiered_s2", "gb10_big_soap_device_s1", "gb10_broken_soap_device_s1",
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
  const std::string failed_log = f.run_dir("gb10_broken_soap_device_s1") + "/log.txt";
  EXPECT_NE(r.err.find("gb10_broken_soap_device_s1: FAILED: exit code 1; log " + failed_log), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("gb10_big_soap_device_s1: does not fit: device 2.0 GiB short"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1 of 6 runs failed"), std::string::npos) << r.err;
  // The run's stdout and stderr went to its log.
  const std::string log = read_all(failed_log);
  EXPECT_NE(log.find("stand-in sim for broken"), std::string::npos) << log;
  EXPECT_NE(log.find("simulated failure: model broken"), std::string::npos) << log;

  // Parallel: the first two runs were alive together, and never more than two at once.
  EXPECT_EQ(read_all(f.run_dir(kSlugs[0]) + "/overlap.txt"), "yes\n");
  EXPECT_EQ(read_all(f.run_dir(kSlugs[1]) + "/overlap.txt"), "yes\n");
  for (const std::string& slug : kSlugs) {
    const int alive = std::stoi(read_all(f.run_dir(slug) + "/alive_at_start.txt"));
    EXPECT_GE(alive, 1) << slug;
    EXPECT_LE(alive, 2) << slug;
  }

  // The command line of a run: every setting, the run directory, no progress, no trace.
  EXPECT_EQ(read_all(f.run_dir(kSlugs[3]) + "/args.txt"),
            "sim --hw gb10 --model m1 --optimizer soap --placement tiered --staleness 2 --steps 4 --mode data-free "
            "--out " + f.run_dir(kSlugs[3]) + " --no-progress --no-trace\n");

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
  const std::vector<std::string> broken = split_csv_line(table[6]);
  EXPECT_EQ(broken[column("fits")], "false");
  EXPECT_EQ(broken[column("shortfall")],
            "run failed: exit code 1 (log: runs/gb10_broken_soap_device_s1/log.txt)");

  // The Markdown table is written and printed; --no-plots is respected.
  const std::vector<std::string> md = lines_of((f.out / "table.md").string());
  ASSERT_EQ(md.size(), 8U);
  EXPECT_NE(r.out.find(md[0]), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| gb10_broken_soap_device_s1 |"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(f.out / "plots"));
  EXPECT_FALSE(std::filesystem::exists(f.out / "plots.log"));
  EXPECT_EQ(r.out.find("plot:"), std::string::npos) << r.out;
  EXPECT_EQ(read_all(f.out / "study.yaml"), kStudy);
}

TEST(StudyVerb, OneJobRunsOneAtATimeAndAllSucceed) {
  StudyFixture f(
      "name: serial\ngrid:\n  - hw: [gb10]\n    model: [m1]\n    optimizer: [soap]\n    placement: [device]\n"
      "    staleness: [0, 1, 2]\n");
  // A summary from an earlier study in the same directory must not survive.
  std::filesystem::create_directories(f.out / "runs/gb10_m1_soap_device_s0");
  write(f.out / "runs/gb10_m1_soap_device_s0/stale.txt", "old");
  const auto r = run_cli({"study", f.study.string(), "--out", f.out.string(), "--jobs", "1", "--asteria",
                          f.program.string(), "--no-plots"});
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* slug : {"gb10_m1_soap_device_s0", "gb10_m1_soap_device_s1", "gb10_m1_soap_device_s2"})
    EXPECT_EQ(read_all(f.run_dir(slug) + "/alive_at_start.txt"), "1\n") << slug;
  EXPECT_FALSE(std::filesystem::exists(f.out / "runs/gb10_m1_soap_device_s0/stale.txt"));
  EXPECT_EQ(lines_of((f.out / "table.csv").string()).size(), 4U);
}

TEST(StudyVerb, DryRunPrintsTheRunsAndRunsNothing) {
  StudyFixture f(kStudy);
  const auto r = run_cli({"study", f.study.string(), "--dry-run", "--asteria", f.program.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string first = f.program.string() +
                            " sim --hw gb10 --model m1 --optimizer soap --placement device --staleness 0 --steps 4 "
                            "--mode data-free --out results/standin/runs/gb10_m1_soap_device_s0 --no-progress "
                            "--no-trace\n";
  EXPECT_NE(r.out.find("# study standin: 6 runs\n" + first), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("results/standin/runs/gb10_broken_soap_device_s1"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path("results/standin")));
  EXPECT_TRUE(std::filesystem::is_empty(f.sync));  // the stand-in never ran
}

TEST(StudyVerb, PlotsAreDrawnFromTheTable) {
  StudyFixture f(
      "name: plotted\ngrid:\n  - hw: [gb10]\n    model: [m1, big]\n    optimizer: [soap]\n    placement: [device]\n"
      "    staleness: [0, 1]\n");
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
  EXPECT_NE(invalid.err.find(f.study.string() + ": grid[0].placement[0]: expected one of device, host, tiered, nvme"),
            std::string::npos)
      << invalid.err;
  const auto missing = run_cli({"study", (f.dir.path() / "none.yaml").string()});
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("none.yaml: file:"), std::string::npos) << missing.err;
  EXPECT_EQ(run_cli({"study"}).code, 2);
  EXPECT_EQ(run_cli({"study", "a.yaml", "b.yaml"}).code, 2);

  StudyFixture good("name: good\ngrid:\n  - {hw: gb10, model: m, optimizer: soap, placement: host, staleness: 0}\n");
  const auto jobs = run_cli({"study", good.study.string(), "--jobs", "0", "--asteria", good.program.string()});
  EXPECT_EQ(jobs.code, 1);
  EXPECT_NE(jobs.err.find("--jobs"), std::string::npos) << jobs.err;
  const auto binary = run_cli({"study", good.study.string(), "--asteria", "/nonexistent/asteria"});
  EXPECT_EQ(binary.code, 1);
  EXPECT_NE(binary.err.find("--asteria: asteria: expected an executable file"), std::string::npos) << binary.err;

  const auto help = run_cli({"study", "--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("usage: asteria study FILE.yaml"), std::string::npos) << help.out;
  EXPECT_NE(help.out.find("--dry-run"), std::string::npos) << help.out;
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

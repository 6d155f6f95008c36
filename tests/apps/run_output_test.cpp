// Output hygiene shared by synth, sim and train: --out is checked before any work (a file in its
// place, a directory that cannot be created, earlier results), --overwrite clears exactly the
// earlier run's files, and numbers reach the console and the files in full.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include <sys/stat.h>

#include "apps/asteria/output_dir.hpp"
#include "apps/asteria/run_report.hpp"
#include "core/common/error.hpp"
#include "core/common/number_text.hpp"
#include "core/io/atomic_file.hpp"
#include "tests/common/cli_harness.hpp"
#include "tests/io/temp_dir.hpp"

namespace asteria::cli {
namespace {

using testing::TempDir;

std::string read(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A run that would take a while if it started (the fake backend, many steps).
Args quick_synth(const std::filesystem::path& out) {
  return {"synth", "--time", "simulated", "--layers", "2", "--rows", "8", "--cols", "8", "--steps", "3",
          "--warmup-steps", "0", "--no-progress", "--out", out.string()};
}

TEST(RunOutput, AFileWhereTheDirectoryShouldBeIsRefusedBeforeAnyWork) {
  const TempDir dir;
  const std::filesystem::path file = dir.path() / "results";
  std::ofstream(file) << "precious";
  for (const char* verb : {"synth", "train"}) {
    SCOPED_TRACE(verb);
    // train would read its corpus first if --out were checked late: give it none that exists.
    const Args args = std::string(verb) == "synth"
                          ? quick_synth(file)
                          : Args{"train", "--data", (dir.path() / "no-corpus").string(), "--no-progress", "--out",
                                 file.string()};
    const auto r = testing::run_cli(args);
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.err.find(file.string() + ": --out"), std::string::npos) << r.err;
    EXPECT_EQ(read(file), "precious");
  }
}

TEST(RunOutput, ADirectoryThatCannotBeCreatedIsRefused) {
  // /proc refuses new entries, even to root.
  const auto r = testing::run_cli(quick_synth("/proc/asteria-cannot-exist/run"));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("--out"), std::string::npos) << r.err;
  EXPECT_THROW(prepare_output("/proc/asteria-cannot-exist", false, "sim"), InputError);
}

TEST(RunOutput, EarlierResultsAreRefusedUnlessOverwriteClearsExactlyThem) {
  const TempDir dir;
  const std::filesystem::path out = dir.path() / "run";
  ASSERT_EQ(testing::run_cli(quick_synth(out)).code, 0);
  // A file of the user's beside the results, and a stale trace of an older traced run.
  std::ofstream(out / "notes.txt") << "mine";
  std::ofstream(out / "trace.json") << "{}";
  const std::string summary = read(out / "summary.json");

  const auto again = testing::run_cli(quick_synth(out));
  EXPECT_EQ(again.code, 1);
  EXPECT_NE(again.err.find("--overwrite"), std::string::npos) << "the message says how to proceed: " << again.err;
  EXPECT_NE(again.err.find("summary.json"), std::string::npos) << again.err;
  EXPECT_EQ(read(out / "summary.json"), summary) << "a refused run must not touch the earlier results";

  Args overwrite = quick_synth(out);
  overwrite.push_back("--overwrite");
  ASSERT_EQ(testing::run_cli(overwrite).code, 0);
  EXPECT_FALSE(std::filesystem::exists(out / "trace.json")) << "a stale file of an earlier run was left behind";
  EXPECT_EQ(read(out / "notes.txt"), "mine");
  EXPECT_TRUE(std::filesystem::exists(out / "steps.csv"));
}

TEST(RunOutput, OverwriteNeverRemovesAUsersDirectoryUnderAnOutputsName) {
  const TempDir dir;
  const std::filesystem::path out = dir.path() / "run";
  ASSERT_EQ(testing::run_cli(quick_synth(out)).code, 0);
  std::filesystem::create_directories(out / "trace.json");
  std::ofstream(out / "trace.json" / "kept.txt") << "mine";
  Args args = quick_synth(out);
  args.insert(args.end(), {"--trace", "--overwrite"});
  const auto r = testing::run_cli(args);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("trace.json"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("a directory that asteria did not write"), std::string::npos) << r.err;
  EXPECT_EQ(read(out / "trace.json" / "kept.txt"), "mine");
  EXPECT_TRUE(std::filesystem::exists(out / "summary.json")) << "nothing is removed when the run is refused";
}

// train's outputs include its final parameters (checkpoint/): --overwrite replaces them, and a
// directory of the user's by that name is refused.
TEST(RunOutput, TrainsParametersAreReplacedByOverwriteButAUsersDirectoryIsNot) {
  const TempDir dir;
  const std::filesystem::path out = dir.path() / "run";
  const Args train = {"train", "--model", "tiny", "--steps", "1", "--max-corpus-bytes", "200KB", "--eval-sequences",
                      "2", "--blas-threads", "1", "--no-progress", "--out", out.string()};
  ASSERT_EQ(testing::run_cli(train).code, 0);
  ASSERT_TRUE(std::filesystem::exists(out / "checkpoint" / "manifest.json"));
  Args again = train;
  again.push_back("--overwrite");
  const auto replaced = testing::run_cli(again);
  EXPECT_EQ(replaced.code, 0) << replaced.err;
  std::ofstream(out / "checkpoint" / "notes.txt") << "mine";
  const auto refused = testing::run_cli(again);
  EXPECT_EQ(refused.code, 1);
  EXPECT_NE(refused.err.find("checkpoint"), std::string::npos) << refused.err;
  EXPECT_EQ(read(out / "checkpoint" / "notes.txt"), "mine");
}

TEST(RunOutput, ASingleOutputFileIsNeverADeviceAndIsReplacedOnlyWhenTold) {
  const TempDir dir;
  const std::filesystem::path pipe = dir.path() / "pipe";
  ASSERT_EQ(::mkfifo(pipe.c_str(), 0600), 0);
  const std::filesystem::path folder = dir.path() / "folder";
  std::filesystem::create_directories(folder);
  const std::filesystem::path file = dir.path() / "plan.yaml";
  std::ofstream(file) << "precious";
  for (bool overwrite : {false, true}) {
    SCOPED_TRACE(overwrite);
    for (const std::filesystem::path& target : {pipe, folder}) {
      EXPECT_THROW(prepare_output_file(target, overwrite, "plan"), InputError);
      EXPECT_THROW(io::write_file_atomically(target, "x"), InputError);
    }
  }
  EXPECT_EQ(std::filesystem::status(pipe).type(), std::filesystem::file_type::fifo);
  EXPECT_TRUE(std::filesystem::is_directory(folder));
  try {
    prepare_output_file(file, false, "plan");
    ADD_FAILURE() << "an existing file was accepted without --overwrite";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--overwrite"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(prepare_output_file(file, true, "plan"));
  EXPECT_EQ(read(file), "precious") << "preparing writes nothing";
  EXPECT_THROW(prepare_output_file(dir.path() / "missing" / "plan.yaml", true, "plan"), InputError);

  // The verbs that write one file refuse before any work, naming the file and the option.
  for (const Args& args : {Args{"plan", "--hw", "gh200", "--model", "tiny", "--optimizer", "soap", "--out", pipe.string()},
                           Args{"calibrate", "--quick", "--out", pipe.string()},
                           Args{"calibrate", "--from-trace", (dir.path() / "none.csv").string(), "--out", file.string()}}) {
    SCOPED_TRACE(args[0]);
    const auto r = testing::run_cli(args);
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.err.find(": --out: "), std::string::npos) << r.err;
  }
  EXPECT_EQ(std::filesystem::status(pipe).type(), std::filesystem::file_type::fifo);
  EXPECT_EQ(read(file), "precious");
}

TEST(RunOutput, AFileWrittenThroughALinkReplacesTheFileItNames) {
  const TempDir dir;
  const std::filesystem::path target = dir.path() / "real.yaml";
  std::ofstream(target) << "old";
  const std::filesystem::path link = dir.path() / "link.yaml";
  std::filesystem::create_symlink(target, link);
  io::write_file_atomically(link, "new");
  EXPECT_TRUE(std::filesystem::is_symlink(link)) << "the link stays a link";
  EXPECT_EQ(read(target), "new");
}

TEST(RunOutput, TraceFilesGoWithTheRunAndItsSummarySaysHowBig) {
  const TempDir dir;
  const std::filesystem::path out = dir.path() / "run";
  Args args = quick_synth(out);
  args.insert(args.end(), {"--trace", "--trace-steps", "2:3"});
  const auto r = testing::run_cli(args);
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json summary = nlohmann::json::parse(read(out / "summary.json"));
  EXPECT_EQ(summary.at("trace"), true);
  EXPECT_EQ(summary.at("trace_first_step"), 2);
  EXPECT_EQ(summary.at("trace_last_step"), 3);
  EXPECT_EQ(summary.at("trace_bytes").get<std::size_t>(), std::filesystem::file_size(out / "trace.csv"));
  EXPECT_EQ(summary.at("trace_chrome_bytes").get<std::size_t>(), std::filesystem::file_size(out / "trace.json"));
  EXPECT_GT(summary.at("trace_records").get<std::size_t>(), 0u);
}

// The bound holds for the files as written, not for an estimate of them; 0 is no bound to hold.
TEST(RunOutput, TheTraceBoundHoldsForEachFileAsWritten) {
  const TempDir dir;
  const std::filesystem::path out = dir.path() / "run";
  Args args = {"synth", "--time", "simulated", "--layers", "6", "--rows", "8", "--cols", "8", "--steps", "40",
               "--warmup-steps", "0", "--no-progress", "--out", out.string(), "--trace", "--trace-steps", "1:40",
               "--trace-max-bytes", "64KiB"};
  const auto r = testing::run_cli(args);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_LE(std::filesystem::file_size(out / "trace.csv"), 65536u);
  EXPECT_LE(std::filesystem::file_size(out / "trace.json"), 65536u);
  const nlohmann::json summary = nlohmann::json::parse(read(out / "summary.json"));
  EXPECT_GT(summary.at("trace_dropped_records").get<std::size_t>(), 0u) << summary.dump();
  for (const char* bound : {"0", "1KB"}) {
    Args small = quick_synth(dir.path() / bound);
    small.insert(small.end(), {"--trace", "--trace-max-bytes", bound});
    const auto refused = testing::run_cli(small);
    EXPECT_EQ(refused.code, 1);
    EXPECT_NE(refused.err.find("--trace-max-bytes: expected a size >= 64KiB"), std::string::npos) << refused.err;
  }
}

TEST(NumbersInFull, LargeAndSmallValuesKeepTheirMagnitude) {
  EXPECT_EQ(significant(145417.917, 4), "1.454e+05");
  EXPECT_EQ(significant(1.702157, 4), "1.702");
  EXPECT_EQ(significant(0.000212, 3), "0.000212");
  EXPECT_EQ(significant(2.12e-5, 3), "2.12e-05");
  EXPECT_EQ(significant(145.0, 3), "145");
  EXPECT_EQ(significant(1.7, 3), "1.70");
  EXPECT_EQ(std::stod(exact_number(261477.47812345678)), 261477.47812345678);  // shortest round trip
  EXPECT_EQ(std::stod(exact_number(0.1 + 0.2)), 0.1 + 0.2);
  EXPECT_EQ(exact_number(1e300), "1e+300");
}

TEST(NumbersInFull, TheReportPrintsHugeStepTimesInOrder) {
  RunReport report;
  report.spec = default_run_config(RunVerb::sim);
  report.model = "m";
  report.summary.steps = 30;
  report.summary.p50_step_s = 145417.917;
  report.summary.p99_step_s = 261477.478;
  report.summary.mean_step_s = 157159.616;
  report.summary.mean_visible_optimizer_s = 156511.486;
  report.summary.mean_compute_s = 648.13;
  std::ostringstream out;
  print_report(report, out);
  const std::string text = out.str();
  EXPECT_NE(text.find("p50 1.454e+05 s, p99 2.615e+05 s"), std::string::npos) << text;
  EXPECT_NE(text.find("visible optimizer time mean 1.565e+05 s"), std::string::npos) << text;
  // Every digit in the files.
  const nlohmann::ordered_json json = summary_json(report);
  EXPECT_EQ(json.at("p99_step_s").get<double>(), 261477.478);
}

}  // namespace
}  // namespace asteria::cli

// `asteria study --resume` with the stand-in sim (study_stand_in.hpp): an interrupted study, or
// one with failed runs, keeps its finished points and runs the rest.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "tests/apps/study_stand_in.hpp"
#include "tests/common/cli_harness.hpp"

namespace asteria::cli {
namespace {

using testing::lines_of;
using testing::run_cli;

// An interrupted study (a run without a summary) or one with failed runs goes on with --resume:
// the finished points are kept, the rest run again (their runs told --overwrite), and the table
// is the one a whole run writes. Only the same study file resumes.
TEST(StudyVerb, ResumeKeepsTheFinishedPointsAndRunsTheRest) {
  StudyFixture f(
      "name: resumed\ngrid:\n  - hw: [gb10]\n    model: [m1.yaml]\n    optimizer: [soap]\n    placement: [device]\n"
      "    staleness: [0, 1, 2]\n");
  const Args args = {"study", f.study.string(), "--out", f.out.string(), "--jobs", "1", "--asteria",
                     f.program.string(), "--no-plots"};
  ASSERT_EQ(run_cli(args).code, 0);
  const std::string whole = read_all(f.out / "table.csv");
  // Interrupted before s1 wrote its summary; s2's summary half-written; s0 finished.
  std::filesystem::remove(f.run_dir("gb10_m1_soap_device_s1") + "/summary.json");
  write(f.run_dir("gb10_m1_soap_device_s2") + "/summary.json", "{\"verb\": ");
  std::filesystem::remove(f.run_dir("gb10_m1_soap_device_s0") + "/alive_at_start.txt");
  std::filesystem::remove(f.out / "table.csv");

  Args resume = args;
  resume.push_back("--resume");
  const auto r = run_cli(resume);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("gb10_m1_soap_device_s0: kept from the earlier run"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(f.run_dir("gb10_m1_soap_device_s0") + "/alive_at_start.txt")) << "not run again";
  for (const char* slug : {"gb10_m1_soap_device_s1", "gb10_m1_soap_device_s2"}) {
    EXPECT_TRUE(std::filesystem::exists(f.run_dir(slug) + "/alive_at_start.txt")) << slug << " ran again";
    EXPECT_NE(read_all(f.run_dir(slug) + "/args.txt").find("--overwrite"), std::string::npos) << slug;
  }
  EXPECT_EQ(read_all(f.out / "table.csv"), whole);

  // Another study file in the same directory is refused; --resume and --overwrite exclude each other.
  write(f.study, read_all(f.study) + "# changed\n");
  const auto other = run_cli(resume);
  EXPECT_EQ(other.code, 1);
  EXPECT_NE(other.err.find("--resume"), std::string::npos) << other.err;
  Args both = resume;
  both.push_back("--overwrite");
  EXPECT_NE(run_cli(both).code, 0);
  // Nothing to resume: a new study.
  Args fresh = resume;
  fresh[3] = (f.dir.path() / "fresh").string();
  ASSERT_EQ(run_cli(fresh).code, 0);
  EXPECT_EQ(lines_of((f.dir.path() / "fresh/table.csv").string()).size(), 4U);
}

}  // namespace
}  // namespace asteria::cli

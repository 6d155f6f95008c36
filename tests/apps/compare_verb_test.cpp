// `asteria compare` and `asteria demo` in process: the table, the files of --out and their
// consistency, option errors, --help.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
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

TEST(CompareVerb, WritesATableAndFilesThatAgree) {
  TempDir dir;
  const std::string out_dir = dir.file("results");
  const Outcome r =
      run_cli({"compare", "--optimizers", "adamw", "--steps", "60", "--target-ratio", "0.5", "--out", out_dir});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("steps to target"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("adamw"), std::string::npos) << r.out;

  std::ifstream json_file(out_dir + "/summary.json");
  const nlohmann::json summary = nlohmann::json::parse(json_file);
  ASSERT_EQ(summary["optimizers"].size(), 1U);
  const nlohmann::json& adamw = summary["optimizers"][0];
  EXPECT_EQ(adamw["optimizer"], "adamw");
  EXPECT_EQ(adamw["outcome"], "completed");
  EXPECT_EQ(adamw["steps_run"], 60);
  EXPECT_EQ(summary["settings"]["dtype"], "float32");
  const double initial = summary["problem"]["initial_loss"];
  const double optimum = summary["problem"]["optimal_loss"];
  const double target = summary["problem"]["target_loss"];
  EXPECT_NEAR(target, optimum + 0.5 * (initial - optimum), 1e-12 * initial);

  // steps.csv: 61 rows (step 0 to 60); the first step at or below the target is the table's.
  const std::vector<std::string> steps = lines_of(out_dir + "/steps.csv");
  ASSERT_EQ(steps.size(), 62U);
  EXPECT_EQ(steps[0], "step,optimizer,loss");
  std::optional<int> first_hit;
  for (std::size_t i = 1; i < steps.size(); ++i) {
    const std::vector<std::string> cells = testing::split_csv_line(steps[i]);
    ASSERT_EQ(cells.size(), 3U) << steps[i];
    EXPECT_EQ(std::stoi(cells[0]), static_cast<int>(i) - 1);
    EXPECT_EQ(cells[1], "adamw");
    if (i == 1) {
      EXPECT_NEAR(std::stod(cells[2]), initial, 1e-9 * initial);
    }
    if (!first_hit && std::stod(cells[2]) <= target) first_hit = std::stoi(cells[0]);
  }
  ASSERT_TRUE(first_hit.has_value()) << "AdamW should halve the excess loss within 60 steps";
  EXPECT_EQ(adamw["steps_to_target"], *first_hit);
  EXPECT_NEAR(adamw["final_loss"].get<double>(), std::stod(testing::split_csv_line(steps.back())[2]), 1e-9 * initial);

  const std::vector<std::string> table = lines_of(out_dir + "/table.csv");
  ASSERT_EQ(table.size(), 2U);
  EXPECT_EQ(table[0], "optimizer,outcome,steps_to_target,final_loss,final_excess_ratio,wall_time_s,note");
  EXPECT_EQ(testing::split_csv_line(table[1])[0], "adamw");
  EXPECT_EQ(std::stoi(testing::split_csv_line(table[1])[2]), *first_hit);
  const std::vector<std::string> md = lines_of(out_dir + "/table.md");
  EXPECT_TRUE(std::any_of(md.begin(), md.end(), [](const std::string& l) { return l.rfind("| adamw |", 0) == 0; }));
}

TEST(CompareVerb, NotReachedIsReported) {
  const Outcome r = run_cli({"compare", "--optimizers", "adamw", "--steps", "3", "--dtype", "float64"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("not reached"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("float64"), std::string::npos) << r.out;
}

TEST(CompareVerb, BadOptionsAreErrors) {
  EXPECT_EQ(run_cli({"compare", "--dtype", "float16"}).code, 1);
  EXPECT_EQ(run_cli({"compare", "--steps", "0"}).code, 1);
  EXPECT_EQ(run_cli({"compare", "--target-ratio", "2"}).code, 1);
  const Outcome unknown = run_cli({"compare", "--optimizers", "adamw,sgd"});
  EXPECT_EQ(unknown.code, 1);
  EXPECT_NE(unknown.err.find("'sgd'"), std::string::npos) << unknown.err;
  EXPECT_EQ(run_cli({"compare", "--bogus"}).code, 2);
}

TEST(CompareVerb, OutThatIsAFileIsAnError) {
  TempDir dir;
  std::ofstream(dir.file("taken")) << "x";
  const Outcome r = run_cli({"compare", "--optimizers", "adamw", "--steps", "2", "--out", dir.file("taken")});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find(dir.file("taken")), std::string::npos) << r.err;
}

TEST(CompareVerb, HelpDescribesOptionsAndFiles) {
  const Outcome r = run_cli({"compare", "--help"});
  EXPECT_EQ(r.code, 0);
  for (const char* fragment : {"--steps", "--target-ratio", "--seed", "--dtype", "--out", "table.csv", "table.md",
                               "steps.csv", "summary.json", "cond(X)"})
    EXPECT_NE(r.out.find(fragment), std::string::npos) << "missing '" << fragment << "'";
}

TEST(DemoVerb, Help) {
  const Outcome r = run_cli({"demo", "--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("usage: asteria demo"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace asteria::cli

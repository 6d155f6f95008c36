// Time and energy to a target loss: loss curves read and matched to runs, the tokens to a loss
// interpolated, and the study table's columns worked by hand.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "apps/asteria/study_spec.hpp"
#include "apps/asteria/study_table.hpp"
#include "apps/asteria/study_validation.hpp"
#include "core/common/error.hpp"
#include "tests/io/temp_dir.hpp"

namespace asteria::cli::study {
namespace {

using testing::TempDir;

void write(const std::filesystem::path& file, const std::string& text) { std::ofstream(file) << text; }

const std::string kGrid =
    "name: t\ngrid:\n  - hw: [gb10]\n    model: [m]\n    optimizer: [soap, adamw, muon]\n    placement: [device]\n"
    "    staleness: [0, 5]\n";

StudySpec with_targets(const TempDir& dir, const std::string& targets) {
  write(dir.path() / "soap.csv", "tokens,loss\n0,5.0\n100,4.0\n300,3.0\n");
  write(dir.path() / "soap5.csv", "tokens,loss\n0,5.0\n200,4.0\n600,3.0\n");
  // asteria train's steps.csv: validation loss every 10 steps, blank in between.
  write(dir.path() / "adamw.csv", "step,loss,validation_loss\n1,5.1,\n10,4.4,4.5\n11,4.3,\n20,3.9,3.5\n");
  return parse_study(kGrid + targets, "t.yaml", dir.path());
}

const std::string kTargets =
    "targets:\n  losses: [4, 3.5]\n  curves:\n"
    "    - {optimizer: soap, file: soap.csv, source: soap at any S}\n"
    "    - {optimizer: soap, staleness: 5, file: soap5.csv, source: soap at S = 5}\n"
    "    - {optimizer: adamw, file: adamw.csv, loss_column: validation_loss, tokens_per_step: 10, source: train}\n";

TEST(StudyTargets, CurvesAreMatchedToRunsAndInterpolated) {
  TempDir dir;
  const StudySpec spec = with_targets(dir, kTargets);
  ASSERT_TRUE(spec.targets);
  EXPECT_EQ(spec.targets->losses, (std::vector<double>{4.0, 3.5}));
  const auto point = [&](const std::string& optimizer, int s) -> const StudyPoint& {
    for (const StudyPoint& p : spec.points)
      if (p.optimizer() == optimizer && p.staleness() == s) return p;
    throw std::logic_error("no such point");
  };
  EXPECT_EQ(curve_for(*spec.targets, point("soap", 0))->source, "soap at any S");
  EXPECT_EQ(curve_for(*spec.targets, point("soap", 5))->source, "soap at S = 5");  // its own S first
  EXPECT_EQ(curve_for(*spec.targets, point("adamw", 5))->source, "train");
  EXPECT_EQ(curve_for(*spec.targets, point("muon", 0)), nullptr);
  const LossCurve& soap = *curve_for(*spec.targets, point("soap", 0));
  EXPECT_DOUBLE_EQ(*tokens_to_reach(soap, 4.0), 100.0);   // a point exactly
  EXPECT_DOUBLE_EQ(*tokens_to_reach(soap, 3.5), 200.0);   // halfway from (100, 4.0) to (300, 3.0)
  EXPECT_DOUBLE_EQ(*tokens_to_reach(soap, 6.0), 0.0);     // reached from the start
  EXPECT_FALSE(tokens_to_reach(soap, 2.0));               // never
  // The steps.csv curve: steps 10 and 20 (the rows with a validation loss) at 10 tokens a step.
  const LossCurve& adamw = *curve_for(*spec.targets, point("adamw", 0));
  ASSERT_EQ(adamw.points.size(), 2u);
  EXPECT_DOUBLE_EQ(*tokens_to_reach(adamw, 4.0), 100.0 + 100.0 * 0.5 / 1.0);
}

TEST(StudyTargets, TheTableGivesTokensTimeAndEnergyToEachLoss) {
  TempDir dir;
  const StudySpec spec = with_targets(dir, kTargets);
  std::vector<RunResult> results(spec.points.size());
  for (RunResult& r : results) {
    r.fits = true;
    r.metrics[static_cast<std::size_t>(Metric::tokens_per_s)] = 50.0;
    r.metrics[static_cast<std::size_t>(Metric::energy_per_token_j)] = 2.0;
  }
  const std::string csv = table_csv(spec, results);
  const std::string header = csv.substr(0, csv.find('\n'));
  EXPECT_NE(header.find(",loss_curve,tokens_to_loss_4,time_to_loss_4_s,energy_to_loss_4_j,loss_reduction_per_kj_4,"
                        "tokens_to_loss_3.5,time_to_loss_3.5_s,energy_to_loss_3.5_j,loss_reduction_per_kj_3.5"),
            std::string::npos)
      << header;
  // soap at S = 0 reaches 4 at 100 tokens (2 s at 50 tokens/s, 200 J at 2 J a token: a loss drop
  // of 1 from its first point 5.0 over 0.2 kJ, 5 per kJ) and 3.5 at 200 (1.5 over 0.4 kJ).
  EXPECT_NE(csv.find(",soap at any S,100,2,200,5,200,4,400,3.75\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",soap at S = 5,200,4,400,2.5,400,8,800,1.875\n"), std::string::npos) << csv;
  // muon has no curve: empty cells.
  EXPECT_NE(csv.find("muon_device_s0,") , std::string::npos);
  EXPECT_NE(csv.find(",,,,,,,,,\n"), std::string::npos) << csv;
  const std::string md = table_markdown(spec, results);
  EXPECT_NE(md.find("| time to 4 (s) | time to 3.5 (s) |"), std::string::npos) << md;
  // loss_curves.csv: each curve point as the run sees it, at 50 tokens/s and 2 J a token.
  const std::string curves = loss_curves_csv(spec, results);
  EXPECT_EQ(curves.substr(0, curves.find('\n')), "config,kind,tokens,time_s,energy_j,loss");
  EXPECT_NE(curves.find("gb10_m_soap_device_s0,projected,0,0,0,5\ngb10_m_soap_device_s0,projected,100,2,200,4\n"
                        "gb10_m_soap_device_s0,projected,300,6,600,3\n"),
            std::string::npos)
      << curves;
  EXPECT_NE(curves.find("gb10_m_soap_device_s5,projected,600,12,1200,3\n"), std::string::npos) << curves;
  EXPECT_EQ(curves.find("muon"), std::string::npos) << "no curve, no rows";
}

// A run that trained (a data-true simulation with gradients: corpus) reaches each loss at its
// own simulated time: the seconds of every step up to the point, warm-up included.
TEST(StudyTargets, ARunThatTrainedUsesItsOwnCurveAndClock) {
  TempDir dir;
  const StudySpec spec = with_targets(dir, kTargets);
  const std::filesystem::path run = dir.path() / "run";
  std::filesystem::create_directories(run);
  write(run / "summary.json",
        R"({"fits": true, "optimizer": "soap", "gradients": "corpus", "tokens_per_step": 10, "p50_step_s": 1,)"
        R"( "p99_step_s": 1, "p99_over_p50": 1, "mean_step_s": 1, "compute_s": 1, "visible_optimizer_s": 0,)"
        R"( "exposed_communication_s": 0, "refresh_wait_s": 0, "state_move_wait_s": 0, "max_staleness": 0,)"
        R"( "peak_device_bytes": 0, "peak_host_bytes": 0, "peak_nvme_bytes": 0, "network_bytes": 0,)"
        R"( "tokens_per_s": 1000, "energy_per_token_j": 2})");
  // Steps of 0.5, 1.5, 1 and 2 s; validation 4.5 after step 2 (20 tokens, 2 s), 3.5 after step 4
  // (40 tokens, 5 s).
  write(run / "steps.csv",
        "step,warmup,step_time_s,loss,validation_loss\n1,1,0.5,5,\n2,0,1.5,4.6,4.5\n3,0,1,4,\n4,0,2,3.5,3.5\n");
  const RunResult result = read_run_result(run, "");
  ASSERT_FALSE(result.failed()) << result.failure;
  ASSERT_TRUE(result.own_curve);
  ASSERT_EQ(result.own_curve->points.size(), 2u);
  ASSERT_EQ(result.own_curve->seconds, (std::vector<double>{2.0, 5.0}));
  // 4 is halfway from 4.5 to 3.5: 20 + 0.5 x 20 = 30 tokens, 2 + 0.5 x 3 = 3.5 s (not
  // 30 / 1000 tokens/s: the run's own clock), 60 J at 2 J a token.
  std::vector<RunResult> results(spec.points.size(), result);
  const std::string csv = table_csv(spec, results);
  EXPECT_NE(csv.find(",\"this run's own validation loss (data-true simulation, gradients: corpus)\",30,3.5,60,"),
            std::string::npos)
      << csv;
  // 3.5 is the second point: 40 tokens at 5 s.
  EXPECT_NE(csv.find(",40,5,80,"), std::string::npos) << csv;
  EXPECT_NE(loss_curves_csv(spec, results).find("gb10_m_soap_device_s0,simulated,20,2,40,4.5\n"
                                                "gb10_m_soap_device_s0,simulated,40,5,80,3.5\n"),
            std::string::npos);
  // A training run whose steps.csv lacks the validation column is a failure naming it.
  write(run / "steps.csv", "step,warmup,step_time_s,loss\n1,0,1,5\n");
  const RunResult broken = read_run_result(run, "");
  EXPECT_TRUE(broken.failed());
  EXPECT_NE(broken.failure.find("steps.csv"), std::string::npos) << broken.failure;
  EXPECT_NE(broken.failure.find("validation_loss"), std::string::npos) << broken.failure;
}

// A run that would train needs data-true numerics: the study says so before running anything.
TEST(StudyTargets, TrainingWithoutValuesIsAProblemBeforeTheStudyRuns) {
  const StudySpec spec = parse_study(
      "name: t\ngrid:\n  - hw: [gb10]\n    model: [tiny]\n    optimizer: [adamw]\n    placement: [device]\n"
      "    staleness: [0]\n    numerics: [shapes, values]\n    gradients: [corpus]\n",
      "t.yaml", ".");
  const std::vector<RunProblem> problems = run_input_problems(spec);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].expectation.find("--numerics values"), std::string::npos) << problems[0].expectation;
}

TEST(StudyTargets, BadSectionsAndCurvesAreNamed) {
  TempDir dir;
  const auto error = [&](const std::string& targets) -> std::string {
    try {
      with_targets(dir, targets);
    } catch (const InputError& e) {
      return std::string(e.source()) + " | " + e.field() + " | " + e.what();
    }
    return "accepted";
  };
  EXPECT_NE(error("targets:\n  losses: []\n  curves: []\n").find("targets.losses"), std::string::npos);
  EXPECT_NE(error("targets:\n  losses: [-1]\n  curves: []\n").find("targets.losses[0]"), std::string::npos);
  EXPECT_NE(error("targets:\n  losses: [3]\n  curves:\n    - {optimizer: soap, file: soap.csv}\n")
                .find("targets.curves[0].source"),
            std::string::npos);
  EXPECT_NE(error("targets:\n  losses: [3]\n  curves:\n    - {optimizer: soap, file: nope.csv, source: x}\n")
                .find("nope.csv"),
            std::string::npos);
  EXPECT_NE(error("targets:\n  losses: [3]\n  colour: red\n").find("targets.colour"), std::string::npos);
  write(dir.path() / "bad.csv", "tokens,loss\n0,5\n10,x\n");
  EXPECT_NE(error("targets:\n  losses: [3]\n  curves:\n    - {optimizer: soap, file: bad.csv, source: x}\n")
                .find("bad.csv | row 3"),
            std::string::npos);
  write(dir.path() / "back.csv", "tokens,loss\n10,5\n5,4\n");
  EXPECT_NE(error("targets:\n  losses: [3]\n  curves:\n    - {optimizer: soap, file: back.csv, source: x}\n")
                .find("increasing"),
            std::string::npos);
  write(dir.path() / "steps.csv", "step,loss\n1,5\n");
  EXPECT_NE(error("targets:\n  losses: [3]\n  curves:\n    - {optimizer: soap, file: steps.csv, source: x}\n")
                .find("tokens_per_step"),
            std::string::npos);
}

}  // namespace
}  // namespace asteria::cli::study

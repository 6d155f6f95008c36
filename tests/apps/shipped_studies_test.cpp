// The shipped studies (experiments/studies/*.yaml) parse, expand to the documented runs, name
// shipped profiles and models, and pass the checks made before a study runs.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "apps/asteria/study_spec.hpp"
#include "apps/asteria/study_validation.hpp"

namespace asteria::cli::study {
namespace {

std::vector<std::string> slugs(const StudySpec& spec) {
  std::vector<std::string> out;
  for (const StudyPoint& p : spec.points) out.push_back(p.slug);
  return out;
}

std::filesystem::path repo_root() { return std::filesystem::path(ASTERIA_TEST_DATA_DIR).parent_path().parent_path(); }

void expect_shipped_inputs(const StudySpec& spec) {
  for (const StudyPoint& p : spec.points) {
    EXPECT_TRUE(std::filesystem::is_regular_file(repo_root() / "hwmodels/profiles" / (p.hw() + ".yaml"))) << p.hw();
    EXPECT_TRUE(std::filesystem::is_regular_file(repo_root() / "experiments/models" / (p.model() + ".yaml")))
        << p.model();
  }
  // Every profile and model loads, and the runs' settings pass the checks `asteria sim` makes.
  for (const RunProblem& problem : run_input_problems(spec)) ADD_FAILURE() << problem.field << ": " << problem.expectation;
}

TEST(ShippedStudies, DefaultStudy) {
  const StudySpec spec = load_study(repo_root() / "experiments/studies/default.yaml");
  EXPECT_EQ(spec.name, "default");
  // GB10: 2 optimizers x 4 placements at S = 1; GH200 (480 GB): SOAP tiered at S = 0, 1, 3, 5.
  const std::vector<std::string> expected = {
      "gb10_olmo-1b_soap_device_s1",         "gb10_olmo-1b_soap_host_s1",
      "gb10_olmo-1b_soap_tiered_s1",         "gb10_olmo-1b_soap_nvme_s1",
      "gb10_olmo-1b_kl-shampoo_device_s1",   "gb10_olmo-1b_kl-shampoo_host_s1",
      "gb10_olmo-1b_kl-shampoo_tiered_s1",   "gb10_olmo-1b_kl-shampoo_nvme_s1",
      "gh200-480gb_olmo2-7b_soap_tiered_s0", "gh200-480gb_olmo2-7b_soap_tiered_s1",
      "gh200-480gb_olmo2-7b_soap_tiered_s3", "gh200-480gb_olmo2-7b_soap_tiered_s5",
  };
  EXPECT_EQ(slugs(spec), expected);
  for (const StudyPoint& p : spec.points) {
    EXPECT_EQ(*p["steps"], "30");
    EXPECT_EQ(*p["precondition_frequency"], "10");
    EXPECT_EQ(*p["max_precond_dim"], "2048");
    EXPECT_EQ(*p["numerics"], "shapes");
  }
  expect_shipped_inputs(spec);
}

TEST(ShippedStudies, DistributedStudy) {
  const StudySpec spec = load_study(repo_root() / "experiments/studies/distributed.yaml");
  EXPECT_EQ(spec.name, "distributed");
  // Part 1: 7B, 2 optimizers x 2 node counts x 5 staleness bounds, zero1; part 2: 1B, owned
  // refreshes at sync periods 1 and 5 and replicated ones, S = 1 and 5; part 3: 7B SOAP with a
  // straggler at S = 0 and 5.
  ASSERT_EQ(spec.points.size(), 20U + 16U + 8U + 4U);
  EXPECT_EQ(spec.points[0].slug, "gh200-alps_olmo2-7b_soap_tiered_s0_nodes4_zero1");
  EXPECT_EQ(spec.points[9].slug, "gh200-alps_olmo2-7b_soap_tiered_s10_nodes16_zero1");
  EXPECT_EQ(spec.points[19].slug, "gh200-alps_olmo2-7b_kl-shampoo_tiered_s10_nodes16_zero1");
  EXPECT_EQ(spec.points[20].slug, "gh200-alps_olmo-1b_soap_tiered_s1_nodes4_k1");
  EXPECT_EQ(spec.points[21].slug, "gh200-alps_olmo-1b_soap_tiered_s1_nodes4_k3");
  EXPECT_EQ(spec.points[36].slug, "gh200-alps_olmo-1b_soap_tiered_s1_nodes4_replicated");
  EXPECT_EQ(spec.points[47].slug, "gh200-alps_olmo2-7b_soap_tiered_s5_nodes16_zero1_slow1x3");
  for (std::size_t i = 0; i < spec.points.size(); ++i) {
    const StudyPoint& p = spec.points[i];
    const bool replicated_state = i >= 20 && i < 44;
    EXPECT_EQ(p.hw(), "gh200-alps");
    EXPECT_EQ(p.model(), replicated_state ? "olmo-1b" : "olmo2-7b") << p.slug;
    EXPECT_EQ(p.placement(), "tiered");
    EXPECT_EQ(*p["precondition_frequency"], "10");
    EXPECT_EQ(*p["numerics"], "shapes");
    EXPECT_TRUE(*p["nodes"] == "4" || *p["nodes"] == "16") << p.slug;
    EXPECT_EQ(p["parallelism"].value_or("(not given)"), replicated_state ? "(not given)" : "zero1") << p.slug;
    EXPECT_EQ(p["refresh_sharing"].has_value(), replicated_state) << p.slug;
  }
  expect_shipped_inputs(spec);
}

TEST(ShippedStudies, DistributedDemoStudy) {
  const StudySpec spec = load_study(repo_root() / "experiments/studies/distributed-demo.yaml");
  EXPECT_EQ(spec.name, "distributed-demo");
  // 2 optimizers x S in {0, 1, 3, 5}; K = 3 at S = 5; replicated at S = 1; SOAP with a straggler
  // at S = 0 and 5: all on two nodes, fast enough for `asteria demo`.
  ASSERT_EQ(spec.points.size(), 8U + 2U + 2U + 2U);
  for (const StudyPoint& p : spec.points) {
    EXPECT_EQ(p.hw(), "gh200-alps");
    EXPECT_EQ(p.model(), "olmo-1b");
    EXPECT_EQ(*p["nodes"], "2") << p.slug;
    EXPECT_FALSE(p["parallelism"].has_value()) << p.slug;
  }
  EXPECT_EQ(spec.points[13].slug, "gh200-alps_olmo-1b_soap_tiered_s5_slow1x3");
  expect_shipped_inputs(spec);
}

TEST(ShippedStudies, SmokeStudy) {
  const StudySpec spec = load_study(repo_root() / "experiments/studies/smoke.yaml");
  EXPECT_EQ(spec.name, "smoke");
  ASSERT_EQ(spec.points.size(), 2U);
  EXPECT_EQ(spec.points[0].model(), "tiny");
  EXPECT_EQ(spec.points[0].staleness(), 0);
  EXPECT_EQ(spec.points[1].staleness(), 1);
  expect_shipped_inputs(spec);
}

// Every study shipped, whatever its name: it loads (with its targets' curve files) and its runs
// pass the checks `asteria sim` makes.
TEST(ShippedStudies, EveryStudyLoadsAndPassesTheRunChecks) {
  int studies = 0;
  for (const auto& entry : std::filesystem::directory_iterator(repo_root() / "experiments/studies")) {
    if (entry.path().extension() != ".yaml") continue;
    SCOPED_TRACE(entry.path().string());
    const StudySpec spec = load_study(entry.path());
    EXPECT_FALSE(spec.points.empty());
    for (const RunProblem& problem : run_input_problems(spec)) ADD_FAILURE() << problem.field << ": " << problem.expectation;
    ++studies;
  }
  EXPECT_GE(studies, 12);
}

// The projection check: every run that trains in the simulator has its data-free twin, the same
// settings but numerics and gradients, joined with a measured curve of its optimizer and S.
TEST(ShippedStudies, ProjectionCheckPairsEachTrainedRunWithItsProjection) {
  const StudySpec spec = load_study(repo_root() / "experiments/studies/projection-check.yaml");
  ASSERT_TRUE(spec.targets);
  int trained = 0;
  for (const StudyPoint& p : spec.points) {
    if (p["gradients"].value_or("synthetic") != "corpus") continue;
    ++trained;
    EXPECT_EQ(*p["numerics"], "values") << p.slug;
    int twins = 0;
    for (const StudyPoint& q : spec.points) {
      if (q["numerics"] != std::optional<std::string>("shapes") || q.hw() != p.hw() ||
          q.optimizer() != p.optimizer() || q.staleness() != p.staleness() || q["publish"] != p["publish"] ||
          q["units"] != p["units"])
        continue;
      ++twins;
      EXPECT_NE(curve_for(*spec.targets, q), nullptr) << q.slug;
    }
    EXPECT_EQ(twins, 1) << p.slug;
  }
  EXPECT_EQ(trained, 4);
}

}  // namespace
}  // namespace asteria::cli::study

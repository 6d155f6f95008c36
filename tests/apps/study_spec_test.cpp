// Study files: grid expansion (order, product sizes, union, defaults), run names, the sim
// command line of a run and every class of invalid input (the shipped studies:
// shipped_studies_test.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "apps/asteria/study_spec.hpp"
#include "apps/asteria/study_validation.hpp"
#include "core/common/error.hpp"

namespace asteria::cli::study {
namespace {

const std::filesystem::path kBase = "/studies";

StudySpec parse(const std::string& yaml) { return parse_study(yaml, "s.yaml", kBase); }

std::vector<std::string> slugs(const StudySpec& spec) {
  std::vector<std::string> out;
  for (const StudyPoint& p : spec.points) out.push_back(p.slug);
  return out;
}

// The InputError a study raises: its field and message.
struct Failure {
  std::string field;
  std::string message;
};

Failure failure_of(const std::string& yaml) {
  try {
    parse(yaml);
  } catch (const InputError& e) {
    EXPECT_EQ(e.source(), "s.yaml");
    return {e.field(), e.what()};
  }
  ADD_FAILURE() << "expected an InputError for:\n" << yaml;
  return {};
}

constexpr const char* kCore = "    hw: [gb10]\n    model: [m]\n    optimizer: [soap]\n";

TEST(StudySpec, ExpandsASubGridWithTheFirstAxisSlowest) {
  const StudySpec spec = parse(
      "name: order\n"
      "grid:\n"
      "  - placement: [device, host]\n"
      "    hw: [gb10, gh200]\n"
      "    staleness: [0, 3]\n"
      "    model: [m]\n"
      "    optimizer: [soap]\n");
  EXPECT_EQ(spec.name, "order");
  EXPECT_TRUE(spec.extra_axes.empty());
  // 2 x 2 x 2 x 1 x 1 = 8 points; staleness (written third among the multi-valued) varies fastest.
  const std::vector<std::string> expected = {
      "gb10_m_soap_device_s0",  "gb10_m_soap_device_s3",  "gh200_m_soap_device_s0",  "gh200_m_soap_device_s3",
      "gb10_m_soap_host_s0",    "gb10_m_soap_host_s3",    "gh200_m_soap_host_s0",    "gh200_m_soap_host_s3",
  };
  EXPECT_EQ(slugs(spec), expected);
  const StudyPoint& p = spec.points[5];
  EXPECT_EQ(p.hw(), "gb10");
  EXPECT_EQ(p.model(), "m");
  EXPECT_EQ(p.optimizer(), "soap");
  EXPECT_EQ(p.placement(), "host");
  EXPECT_EQ(p.staleness(), 3);
}

TEST(StudySpec, TheStudyIsTheUnionOfItsSubGridsInOrder) {
  const StudySpec spec = parse(std::string("name: union\ngrid:\n") +
                               "  - hw: [gb10]\n    model: [a, b, c]\n    optimizer: [soap, kl-shampoo]\n"
                               "    placement: [device]\n    staleness: [1]\n"
                               "  - hw: [gh200]\n    model: [a]\n    optimizer: [soap]\n"
                               "    placement: [tiered]\n    staleness: [0, 1, 5]\n");
  ASSERT_EQ(spec.points.size(), 3U * 2U + 3U);
  EXPECT_EQ(spec.points[0].slug, "gb10_a_soap_device_s1");
  EXPECT_EQ(spec.points[1].slug, "gb10_a_kl-shampoo_device_s1");
  EXPECT_EQ(spec.points[5].slug, "gb10_c_kl-shampoo_device_s1");
  EXPECT_EQ(spec.points[6].slug, "gh200_a_soap_tiered_s0");
  EXPECT_EQ(spec.points[8].slug, "gh200_a_soap_tiered_s5");
}

TEST(StudySpec, APointInTwoSubGridsRunsOnceAtItsFirstPlace) {
  const StudySpec spec = parse(std::string("name: dup\ngrid:\n") + "  -\n" + kCore +
                               "    placement: [device, host]\n    staleness: [1]\n" + "  -\n" + kCore +
                               "    placement: [host, nvme]\n    staleness: [1]\n");
  const std::vector<std::string> expected = {"gb10_m_soap_device_s1", "gb10_m_soap_host_s1", "gb10_m_soap_nvme_s1"};
  EXPECT_EQ(slugs(spec), expected);
}

TEST(StudySpec, DefaultsFillEveryPointAndADefaultKeyCanBeAnAxis) {
  const StudySpec spec = parse(std::string("name: axes\n") +
                               "defaults:\n  steps: 30\n  numerics: shapes\n  precondition_frequency: 10\n"
                               "  staleness: 1\n"
                               "grid:\n"
                               "  -\n" + kCore + "    placement: [device]\n    steps: [10, 20]\n"
                               "  -\n" + kCore + "    placement: [host]\n    staleness: [4]\n");
  ASSERT_EQ(spec.extra_axes, std::vector<std::string>{"steps"});
  ASSERT_EQ(spec.points.size(), 3U);
  EXPECT_EQ(spec.points[0].slug, "gb10_m_soap_device_s1_steps10");
  EXPECT_EQ(spec.points[1].slug, "gb10_m_soap_device_s1_steps20");
  EXPECT_EQ(spec.points[2].slug, "gb10_m_soap_host_s4_steps30");  // the default, shown since steps varies
  EXPECT_EQ(*spec.points[1]["steps"], "20");
  EXPECT_EQ(*spec.points[2]["steps"], "30");
  for (const StudyPoint& p : spec.points) {
    EXPECT_EQ(*p["numerics"], "shapes");
    EXPECT_EQ(*p["precondition_frequency"], "10");
    EXPECT_FALSE(p["units"].has_value());
  }
}

TEST(StudySpec, ValuesAreNormalizedAndAScalarIsAOnePointAxis) {
  const StudySpec spec = parse(
      "name: norm\n"
      "grid:\n"
      "  - hw: gb10\n    model: m\n    optimizer: [kl_shampoo]\n    placement: tiered\n    staleness: [007]\n");
  ASSERT_EQ(spec.points.size(), 1U);
  EXPECT_EQ(spec.points[0].optimizer(), "kl-shampoo");
  EXPECT_EQ(*spec.points[0]["staleness"], "7");
  EXPECT_EQ(spec.points[0].slug, "gb10_m_kl-shampoo_tiered_s7");
}

TEST(StudySpec, PathsResolveAgainstTheStudyDirectoryAndNameRunsByTheirStem) {
  const StudySpec spec = parse(
      "name: paths\n"
      "grid:\n"
      "  - hw: [profiles/my_box.yaml, /abs/other.yaml]\n    model: [../models/m.yaml]\n"
      "    optimizer: [soap]\n    placement: [device]\n    staleness: [0]\n");
  ASSERT_EQ(spec.points.size(), 2U);
  EXPECT_EQ(spec.points[0].hw(), "/studies/profiles/my_box.yaml");
  EXPECT_EQ(spec.points[0].model(), "/models/m.yaml");
  EXPECT_EQ(spec.points[1].hw(), "/abs/other.yaml");
  // '_' separates the parts of a slug, so it is replaced inside one.
  EXPECT_EQ(spec.points[0].slug, "my-box_m_soap_device_s0");
  EXPECT_EQ(spec.points[1].slug, "other_m_soap_device_s0");
}

TEST(StudySpec, PointsThatWouldShareADirectoryAreNumbered) {
  const StudySpec spec = parse(
      "name: stems\n"
      "grid:\n"
      "  - hw: [a/box.yaml, b/box.yaml]\n    model: [m]\n    optimizer: [soap]\n    placement: [device]\n"
      "    staleness: [0]\n");
  EXPECT_EQ(slugs(spec), (std::vector<std::string>{"box_m_soap_device_s0", "box_m_soap_device_s0-2"}));
}

TEST(StudySpec, SimArgumentsCarryEveryGivenSetting) {
  const StudySpec spec = parse(std::string("name: args\ndefaults:\n  steps: 30\n  max_precond_dim: 2048\n"
                                           "  warmup_steps: 0\n  units: 4\n  nodes: 2\n  numerics: values\n"
                                           "  publish: opportunistic\n") +
                               "grid:\n  -\n" + kCore + "    placement: [nvme]\n    staleness: [2]\n");
  // No trace option: the runner adds --trace when the study keeps traces.
  const std::vector<std::string> expected = {
      "sim",    "--hw",           "gb10", "--model",     "m",       "--optimizer",  "soap", "--placement",
      "nvme",   "--staleness",    "2",    "--publish",   "opportunistic", "--steps",  "30",   "--warmup-steps",
      "0",      "--numerics",     "values", "--max-precond-dim", "2048", "--units", "4",    "--nodes",
      "2",      "--out",          "/r/x", "--no-progress"};
  EXPECT_EQ(sim_arguments(spec.points[0], "/r/x"), expected);
}

TEST(StudySpec, NumericsAndPublishAreAxesWithReadableSlugs) {
  const StudySpec spec = parse(std::string("name: axes\ngrid:\n  -\n") + kCore +
                               "    placement: [device]\n    staleness: [1]\n"
                               "    numerics: [shapes, values]\n    publish: [deterministic, opportunistic]\n");
  EXPECT_EQ(spec.extra_axes, (std::vector<std::string>{"publish", "numerics"}));
  // Deterministic publishing is left out of the name; every other value is spelled out.
  EXPECT_EQ(slugs(spec), (std::vector<std::string>{
                             "gb10_m_soap_device_s1_shapes",
                             "gb10_m_soap_device_s1_opportunistic_shapes",
                             "gb10_m_soap_device_s1_values",
                             "gb10_m_soap_device_s1_opportunistic_values",
                         }));
  EXPECT_EQ(*spec.points[1]["publish"], "opportunistic");
  EXPECT_EQ(*spec.points[2]["numerics"], "values");
}

// The data-parallel settings: how refreshes are shared, the sync period, how the ranks share
// the model (parallelism, a valued setting) and an injected straggler.
TEST(StudySpec, DistributedSettingsAreNormalizedAndNamed) {
  const StudySpec spec = parse(std::string("name: dp\ndefaults:\n  nodes: 2\n  parallelism: zero1\n") +
                               "grid:\n  -\n" + kCore +
                               "    placement: [tiered]\n    staleness: [1]\n"
                               "    refresh_sharing: [owners, replicated]\n    sync_period: [001, 5]\n"
                               "  -\n" + kCore +
                               "    placement: [tiered]\n    staleness: [1]\n    parallelism: [ddp]\n"
                               "    straggler: ['03:2.50', \"1:3\", 0:1e1]\n");
  EXPECT_EQ(spec.extra_axes, (std::vector<std::string>{"refresh_sharing", "sync_period",
                                                   "parallelism", "straggler"}));
  // owners (asteria sim's default) is left out of the name, replicated spelled out; sync period k<K>;
  // parallelism shows its value (zero1) and ddp (the default) nothing; a straggler RANK:FACTOR is
  // slow<RANK>x<FACTOR>.
  EXPECT_EQ(slugs(spec), (std::vector<std::string>{
                             "gb10_m_soap_tiered_s1_k1_zero1",
                             "gb10_m_soap_tiered_s1_k5_zero1",
                             "gb10_m_soap_tiered_s1_replicated_k1_zero1",
                             "gb10_m_soap_tiered_s1_replicated_k5_zero1",
                             "gb10_m_soap_tiered_s1_slow3x2.5",
                             "gb10_m_soap_tiered_s1_slow1x3",
                             "gb10_m_soap_tiered_s1_slow0x10",
                         }));
  EXPECT_EQ(*spec.points[0]["refresh_sharing"], "owners");
  EXPECT_EQ(*spec.points[2]["refresh_sharing"], "replicated");
  EXPECT_EQ(*spec.points[0]["sync_period"], "1");
  EXPECT_EQ(*spec.points[0]["parallelism"], "zero1");
  EXPECT_EQ(*spec.points[4]["parallelism"], "ddp");
  EXPECT_FALSE(spec.points[4]["refresh_sharing"].has_value());
  EXPECT_EQ(*spec.points[4]["straggler"], "3:2.5");
  EXPECT_EQ(*spec.points[5]["straggler"], "1:3");
  EXPECT_EQ(*spec.points[6]["straggler"], "0:10");
}

TEST(StudySpec, SimArgumentsOfTheDistributedSettings) {
  const StudySpec spec = parse(std::string("name: dp\ndefaults:\n  nodes: 4\n") + "grid:\n  -\n" + kCore +
                               "    placement: [tiered]\n    staleness: [3]\n    refresh_sharing: [replicated]\n"
                               "    sync_period: [5]\n    parallelism: [zero1, ddp]\n    straggler: ['1:3']\n");
  ASSERT_EQ(spec.points.size(), 2U);
  // parallelism is a valued setting: its option and the value given, ddp included.
  const std::vector<std::string> head = {"sim",         "--hw",        "gb10",   "--model",     "m",
                                         "--optimizer", "soap",        "--placement", "tiered", "--staleness",
                                         "3",           "--nodes",     "4",      "--refresh-sharing", "replicated",
                                         "--sync-period", "5"};
  std::vector<std::string> sharded = head;
  sharded.insert(sharded.end(), {"--parallelism", "zero1", "--straggler", "1:3", "--out", "/r/x", "--no-progress"});
  std::vector<std::string> replicated = head;
  replicated.insert(replicated.end(), {"--parallelism", "ddp", "--straggler", "1:3", "--out", "/r/x", "--no-progress"});
  EXPECT_EQ(sim_arguments(spec.points[0], "/r/x"), sharded);
  EXPECT_EQ(sim_arguments(spec.points[1], "/r/x"), replicated);
}

// A switch (recompute_activations) takes YAML's booleans in any case; it is its bare option when
// true and nothing when false, and a run's name shows it (its name) only when true.
TEST(StudySpec, ASwitchIsItsBareOptionWhenTrueAndNothingWhenFalse) {
  const StudySpec spec = parse(std::string("name: sw\ndefaults:\n  recompute_activations: True\n") + "grid:\n  -\n" +
                               kCore + "    placement: [device]\n    staleness: [0]\n    micro_batches: [2]\n"
                               "  -\n" + kCore +
                               "    placement: [device]\n    staleness: [0]\n    recompute_activations: [FALSE]\n");
  ASSERT_EQ(spec.points.size(), 2U);
  EXPECT_EQ(spec.extra_axes, (std::vector<std::string>{"micro_batches", "recompute_activations"}));
  EXPECT_EQ(slugs(spec), (std::vector<std::string>{"gb10_m_soap_device_s0_mb2_recompute-activations",
                                                   "gb10_m_soap_device_s0"}));
  EXPECT_EQ(*spec.points[0]["recompute_activations"], "true");
  EXPECT_EQ(*spec.points[1]["recompute_activations"], "false");
  const std::vector<std::string> head = {"sim",  "--hw",        "gb10",   "--model",     "m", "--optimizer",
                                         "soap", "--placement", "device", "--staleness", "0"};
  std::vector<std::string> on = head;
  on.insert(on.end(), {"--micro-batches", "2", "--recompute-activations", "--out", "/r/x", "--no-progress"});
  std::vector<std::string> off = head;
  off.insert(off.end(), {"--out", "/r/x", "--no-progress"});
  EXPECT_EQ(sim_arguments(spec.points[0], "/r/x"), on);
  EXPECT_EQ(sim_arguments(spec.points[1], "/r/x"), off);
}

TEST(StudySpec, EveryValueRemembersWhereItWasWritten) {
  const StudySpec spec = parse(
      "name: origins\n"
      "defaults:\n"
      "  steps: 30\n"
      "grid:\n"
      "  - hw: [gb10, gh200]\n"
      "    model: m\n"
      "    optimizer: [soap]\n"
      "    placement: [device]\n"
      "    staleness: [0]\n");
  ASSERT_EQ(spec.points.size(), 2U);
  const StudyPoint& second = spec.points[1];
  EXPECT_EQ(second.origin("hw").field, "grid[0].hw[1]");
  EXPECT_EQ(second.origin("hw").line, 5);
  EXPECT_EQ(second.origin("model").field, "grid[0].model");
  EXPECT_EQ(second.origin("model").line, 6);
  EXPECT_EQ(second.origin("steps").field, "defaults.steps");
  EXPECT_EQ(second.origin("steps").line, 3);
  EXPECT_TRUE(second.origin("units").field.empty());
}

// Every setting of asteria sim is a study setting (the schema's list, not a table of the study's
// own): hyperparameters, the simulated machine's shortcuts, the seed. Each is checked by its own
// codec, named in the run's slug and passed to sim as its option.
TEST(StudySpec, EverySimSettingIsAStudySetting) {
  const StudySpec spec = parse(std::string("name: any\ngrid:\n  -\n") + kCore +
                               "    placement: [device]\n    staleness: [0]\n    lr: [0.001, 1e-2]\n"
                               "    coalesce_ring_steps: [true]\n    seed: [7]\n    root_method: [coupled-newton]\n");
  EXPECT_EQ(slugs(spec), (std::vector<std::string>{
                             "gb10_m_soap_device_s0_seed7_coalesce-ring-steps_lr0.001_coupled-newton",
                             "gb10_m_soap_device_s0_seed7_coalesce-ring-steps_lr0.01_coupled-newton"}));
  EXPECT_EQ(spec.extra_axes, (std::vector<std::string>{"seed", "coalesce_ring_steps", "lr", "root_method"}));
  const std::vector<std::string> args = sim_arguments(spec.points[1], "/r/x");
  for (const std::vector<std::string>& expected :
       {std::vector<std::string>{"--lr", "0.01"}, std::vector<std::string>{"--seed", "7"},
        std::vector<std::string>{"--coalesce-ring-steps"}, std::vector<std::string>{"--root-method", "coupled-newton"}}) {
    const auto at = std::search(args.begin(), args.end(), expected.begin(), expected.end());
    EXPECT_NE(at, args.end()) << expected.front();
  }
  const Failure bad = failure_of(std::string("name: any\ngrid:\n  -\n") + kCore +
                                 "    placement: [device]\n    staleness: [0]\n    lr: [fast]\n");
  EXPECT_EQ(bad.field, "grid[0].lr[0]");
  EXPECT_NE(bad.message.find("expected a finite number, found 'fast' (line 9)"), std::string::npos) << bad.message;
  // Output settings are the study's to decide, not a run setting.
  const Failure out = failure_of(std::string("name: any\ndefaults:\n  out: x\ngrid:\n  -\n") + kCore +
                                 "    placement: [device]\n    staleness: [0]\n");
  EXPECT_EQ(out.field, "defaults.out");
  EXPECT_NE(out.message.find("unknown setting"), std::string::npos) << out.message;
}

TEST(StudySpecErrors, YamlSyntaxNamesTheLine) {
  const Failure f = failure_of("name: bad\ngrid:\n  - hw: [gb10\n    model: m\n");
  EXPECT_EQ(f.field, "yaml");
  EXPECT_NE(f.message.find("syntax error at line"), std::string::npos) << f.message;
}

TEST(StudySpecErrors, TopLevelKeysAndName) {
  EXPECT_EQ(failure_of("- a\n- b\n").field, "yaml");
  const Failure unknown = failure_of(std::string("name: x\ngrdi: []\n"));
  EXPECT_EQ(unknown.field, "grdi");
  EXPECT_NE(unknown.message.find("unknown key"), std::string::npos) << unknown.message;
  EXPECT_NE(unknown.message.find("(line 2)"), std::string::npos) << unknown.message;
  EXPECT_EQ(failure_of(std::string("grid:\n  -\n") + kCore + "    placement: [device]\n    staleness: [0]\n").field,
            "name");
  const Failure slash = failure_of(std::string("name: a/b\ngrid:\n  -\n") + kCore +
                                   "    placement: [device]\n    staleness: [0]\n");
  EXPECT_EQ(slash.field, "name");
  EXPECT_NE(slash.message.find("found 'a/b'"), std::string::npos) << slash.message;
  EXPECT_EQ(failure_of("name: x\ndescription: [a]\ngrid: []\n").field, "description");
}

TEST(StudySpecErrors, GridShape) {
  EXPECT_EQ(failure_of("name: x\n").field, "grid");
  EXPECT_EQ(failure_of("name: x\ngrid: []\n").field, "grid");
  EXPECT_EQ(failure_of("name: x\ngrid: {hw: gb10}\n").field, "grid");
  const Failure scalar = failure_of("name: x\ngrid:\n  - gb10\n");
  EXPECT_EQ(scalar.field, "grid[0]");
  EXPECT_NE(scalar.message.find("expected a mapping"), std::string::npos) << scalar.message;
}

TEST(StudySpecErrors, UnknownAxisNamesItsSubGrid) {
  const Failure f = failure_of(std::string("name: x\ngrid:\n  -\n") + kCore +
                               "    placement: [device]\n    staleness: [0]\n  -\n" + kCore +
                               "    placement: [device]\n    staleness: [0]\n    colour: [red]\n");
  EXPECT_EQ(f.field, "grid[1].colour");
  EXPECT_NE(f.message.find("unknown setting"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("line 15"), std::string::npos) << f.message;
}

TEST(StudySpecErrors, EmptyListsAndWrongTypes) {
  const std::string head = std::string("name: x\ngrid:\n  -\n") + kCore;
  const Failure empty = failure_of(head + "    placement: []\n    staleness: [0]\n");
  EXPECT_EQ(empty.field, "grid[0].placement");
  EXPECT_NE(empty.message.find("non-empty list"), std::string::npos) << empty.message;
  const Failure mapping = failure_of(head + "    placement: [device, {a: 1}]\n    staleness: [0]\n");
  EXPECT_EQ(mapping.field, "grid[0].placement[1]");
  EXPECT_NE(mapping.message.find("found a mapping"), std::string::npos) << mapping.message;
  const Failure nested = failure_of(head + "    placement: [device]\n    staleness: [[1]]\n");
  EXPECT_EQ(nested.field, "grid[0].staleness[0]");
  const Failure word = failure_of(head + "    placement: [device]\n    staleness: [0, two]\n");
  EXPECT_EQ(word.field, "grid[0].staleness[1]");
  EXPECT_NE(word.message.find("expected an integer >= 0, found 'two'"), std::string::npos) << word.message;
  const Failure fraction = failure_of(head + "    placement: [device]\n    staleness: [1.5]\n");
  EXPECT_EQ(fraction.field, "grid[0].staleness[0]");
  const Failure nothing = failure_of(head + "    placement: [device]\n    staleness:\n");
  EXPECT_EQ(nothing.field, "grid[0].staleness");
  EXPECT_NE(nothing.message.find("found nothing"), std::string::npos) << nothing.message;
}

TEST(StudySpecErrors, UnknownOptimizerAndPlacementNames) {
  const Failure optimizer = failure_of(
      "name: x\ngrid:\n  - hw: [gb10]\n    model: [m]\n    optimizer: [soap, lion]\n"
      "    placement: [device]\n    staleness: [0]\n");
  EXPECT_EQ(optimizer.field, "grid[0].optimizer[1]");
  EXPECT_NE(optimizer.message.find("expected one of adamw, shampoo, soap, kl-shampoo, muon; found 'lion'"),
            std::string::npos)
      << optimizer.message;
  const Failure placement = failure_of(std::string("name: x\ngrid:\n  -\n") + kCore +
                                       "    placement: [device]\n    staleness: [0]\n  -\n" + kCore +
                                       "    placement: [device, host, gpu]\n    staleness: [0]\n");
  EXPECT_EQ(placement.field, "grid[1].placement[2]");
  EXPECT_NE(placement.message.find("found 'gpu' (line 13)"), std::string::npos) << placement.message;
}

TEST(StudySpecErrors, NegativeStalenessAndNonPositiveCounts) {
  const std::string head = std::string("name: x\ngrid:\n  -\n") + kCore + "    placement: [device]\n";
  const Failure negative = failure_of(head + "    staleness: [0, -1]\n");
  EXPECT_EQ(negative.field, "grid[0].staleness[1]");
  EXPECT_NE(negative.message.find("expected an integer >= 0, found '-1'"), std::string::npos) << negative.message;
  const Failure steps = failure_of(head + "    staleness: [0]\n    steps: [0]\n");
  EXPECT_EQ(steps.field, "grid[0].steps[0]");
  EXPECT_NE(steps.message.find("expected an integer >= 1, found '0'"), std::string::npos) << steps.message;
}

TEST(StudySpecErrors, MissingCoreAxis) {
  const Failure f = failure_of(std::string("name: x\ngrid:\n  -\n") + kCore + "    placement: [device]\n");
  EXPECT_EQ(f.field, "grid[0]");
  EXPECT_NE(f.message.find("missing axis 'staleness'"), std::string::npos) << f.message;
}

TEST(StudySpecErrors, Defaults) {
  const std::string grid = std::string("grid:\n  -\n") + kCore + "    placement: [device]\n    staleness: [0]\n";
  EXPECT_EQ(failure_of("name: x\ndefaults: [1]\n" + grid).field, "defaults");
  const Failure unknown = failure_of("name: x\ndefaults:\n  stepz: 3\n" + grid);
  EXPECT_EQ(unknown.field, "defaults.stepz");
  EXPECT_NE(unknown.message.find("unknown setting"), std::string::npos) << unknown.message;
  const Failure list = failure_of("name: x\ndefaults:\n  steps: [3, 4]\n" + grid);
  EXPECT_EQ(list.field, "defaults.steps");
  EXPECT_NE(list.message.find("single value"), std::string::npos) << list.message;
  const Failure numerics = failure_of("name: x\ndefaults:\n  numerics: exact\n" + grid);
  EXPECT_EQ(numerics.field, "defaults.numerics");
  EXPECT_NE(numerics.message.find("expected values, refresh or shapes, found 'exact'"), std::string::npos) << numerics.message;
  const Failure publish = failure_of("name: x\ndefaults:\n  publish: eager\n" + grid);
  EXPECT_EQ(publish.field, "defaults.publish");
  EXPECT_NE(publish.message.find("expected deterministic or opportunistic, found 'eager'"), std::string::npos)
      << publish.message;
}

TEST(StudySpecErrors, DistributedSettingValues) {
  const std::string head = std::string("name: x\ngrid:\n  -\n") + kCore + "    placement: [device]\n    staleness: [0]\n";
  const Failure sharing = failure_of(head + "    refresh_sharing: [owners, everyone]\n");
  EXPECT_EQ(sharing.field, "grid[0].refresh_sharing[1]");
  EXPECT_NE(sharing.message.find("expected owners or replicated, found 'everyone' (line 9)"), std::string::npos)
      << sharing.message;
  const Failure period = failure_of(head + "    sync_period: [0]\n");
  EXPECT_EQ(period.field, "grid[0].sync_period[0]");
  EXPECT_NE(period.message.find("expected an integer >= 1, found '0'"), std::string::npos) << period.message;
  const Failure parallelism = failure_of(head + "    parallelism: [zero1, true]\n");
  EXPECT_EQ(parallelism.field, "grid[0].parallelism[1]");
  EXPECT_NE(parallelism.message.find("expected ddp, zero1, zero2 or fsdp, found 'true' (line 9)"), std::string::npos)
      << parallelism.message;
  // A switch takes true or false only.
  const Failure flag = failure_of("name: x\ndefaults:\n  recompute_activations: 1\n" +
                                  head.substr(std::string("name: x\n").size()));
  EXPECT_EQ(flag.field, "defaults.recompute_activations");
  EXPECT_NE(flag.message.find("expected true or false, found '1' (line 3)"), std::string::npos) << flag.message;
  const Failure flag_list = failure_of(head + "    recompute_activations: [true, recompute]\n");
  EXPECT_EQ(flag_list.field, "grid[0].recompute_activations[1]");
  EXPECT_NE(flag_list.message.find("expected true or false, found 'recompute'"), std::string::npos)
      << flag_list.message;
  // RANK:FACTOR with a rank >= 0 and a factor in [1, 1000] (asteria sim's bounds).
  for (const char* bad : {"3", "'3:'", "':2'", "a:2", "'-1:2'", "'+1:2'", "'3:0.5'", "'3:1001'", "'3:x'",
                          "'3:2:1'", "'3:inf'", "'1.5:2'", "'3: 2'"}) {
    const Failure f = failure_of(head + "    straggler: [" + bad + "]\n");
    EXPECT_EQ(f.field, "grid[0].straggler[0]") << bad;
    EXPECT_NE(f.message.find("expected RANK:FACTOR (a rank >= 0 and a slowdown factor in [1, 1000]"),
              std::string::npos)
        << bad << ": " << f.message;
  }
}

TEST(StudySpecErrors, TheRetiredModeKeyPointsToNumerics) {
  const std::string grid = std::string("grid:\n  -\n") + kCore + "    placement: [device]\n    staleness: [0]\n";
  const Failure in_defaults = failure_of("name: x\ndefaults:\n  mode: data-free\n" + grid);
  EXPECT_EQ(in_defaults.field, "defaults.mode");
  EXPECT_NE(in_defaults.message.find("use numerics: shapes|values instead"), std::string::npos) << in_defaults.message;
  EXPECT_NE(in_defaults.message.find("(line 3)"), std::string::npos) << in_defaults.message;
  const Failure on_axis = failure_of("name: x\n" + grid + "    mode: [data-true]\n");
  EXPECT_EQ(on_axis.field, "grid[0].mode");
  EXPECT_NE(on_axis.message.find("use numerics: shapes|values instead"), std::string::npos) << on_axis.message;
}

TEST(StudySpecErrors, AnAxisGivenTwiceInOneSubGrid) {
  try {
    parse(std::string("name: x\ngrid:\n  -\n") + kCore + "    placement: [device]\n    staleness: [0]\n" +
          "    placement: [host]\n");
    FAIL() << "a repeated axis must be rejected";
  } catch (const InputError& e) {
    // yaml-cpp may reject the duplicate key itself; either way the field is named.
    EXPECT_NE(std::string(e.what()).find("placement"), std::string::npos) << e.what();
  }
}

// A few aliases of one list multiply into 10^8 runs from a few lines: refused before expanding
// them (which ran out of memory, after a duplicate search quadratic in the runs), naming the
// sub-grid.
TEST(StudySpecErrors, AGridOfTooManyRunsIsRefusedBeforeExpanding) {
  const std::string tens = "&n [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]";
  const Failure f = failure_of("name: x\ngrid:\n  - hw: [gb10]\n    model: [m]\n    optimizer: [soap]\n"
                               "    placement: [device]\n    staleness: " + tens + "\n    steps: *n\n"
                               "    warmup_steps: *n\n    units: *n\n    nodes: *n\n    batch: *n\n"
                               "    micro_batches: *n\n    sync_period: *n\n");
  EXPECT_EQ(f.field, "grid[0]");
  EXPECT_NE(f.message.find("expected a study of at most 10000 runs"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("found at least 100000"), std::string::npos) << f.message;
  // The bound counts every sub-grid: 100 runs fit, then a second sub-grid of 10^4 does not.
  const std::string hundred = std::string("  - hw: [gb10]\n    model: [m]\n    optimizer: [soap]\n") +
                              "    placement: [device]\n    staleness: " + tens + "\n    steps: *n\n";
  EXPECT_EQ(parse("name: x\ngrid:\n" + hundred).points.size(), 100U);
  const Failure second = failure_of("name: x\ngrid:\n" + hundred + "  - hw: [gb10]\n    model: [m]\n"
                                    "    optimizer: [soap]\n    placement: [device]\n    staleness: *n\n"
                                    "    steps: *n\n    units: *n\n    nodes: *n\n");
  EXPECT_EQ(second.field, "grid[1]");
  EXPECT_NE(second.message.find("found at least 10100"), std::string::npos) << second.message;
}

TEST(StudySpecErrors, AMissingFileIsNamed) {
  try {
    load_study("/nonexistent/study.yaml");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.source(), "/nonexistent/study.yaml");
    EXPECT_EQ(e.field(), "file");
  }
}

}  // namespace
}  // namespace asteria::cli::study

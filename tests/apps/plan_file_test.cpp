// Plan files (apps/asteria/plan_file.hpp): what the writer writes the reader reads back, field by
// field; a file that is not a plan names the file, the field and what was expected.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "apps/asteria/plan_file.hpp"
#include "core/common/error.hpp"
#include "tests/io/temp_dir.hpp"

namespace asteria::cli {
namespace {

using platform::Tier;
using testing::TempDir;

PlanFile sample() {
  PlanFile p;
  p.hw = "a100-80gb";
  p.model = "gpt-mini";
  p.optimizer = "soap";
  p.batch = 16;
  p.settings = {{"schedule", "vertical"},   {"micro-batches", "4"},         {"defer-fraction", "0.3"},
                {"weights-on", "host"},      {"gradients-on", "device"},     {"checkpoints-on", "nvme"},
                {"recompute-activations", "true"}, {"max-precond-dim", "1024"}};
  p.host_workers = 15;
  p.method = "interleaved:3";
  p.predicted = PlanPredicted{0.1 + 0.2, 1.0 / 3.0, "link_h2d"};
  // Labels with the characters YAML cares about: colons, commas, parentheses.
  p.blocks = {{"layer0.attn.q block 0 (rows 0:64, cols 0:64)", Tier::device, true},
              {"layer0.attn.k block 1 (rows 64:128, cols 0:64)", Tier::host, false},
              {"final_norm block 0 (rows 0:1, cols 0:64)", Tier::nvme, true},
              {"head: 'quoted' \"both\" block 0", Tier::nvme, false}};
  return p;
}

void write_text(const std::string& file, const std::string& text) { std::ofstream(file) << text; }

// The InputError reading `text` gives (a test failure when none).
InputError read_error(const TempDir& dir, const std::string& text) {
  const std::string file = dir.file("plan.yaml");
  write_text(file, text);
  try {
    read_plan_file(file);
  } catch (const InputError& e) {
    EXPECT_EQ(e.source(), file);
    return e;
  }
  ADD_FAILURE() << "expected an InputError for:\n" << text;
  return InputError("", "", "");
}

const std::string kMinimal =
    "format: asteria-plan 1\nmodel: tiny\noptimizer: soap\nblocks:\n"
    "  - {label: \"a block 0\", tier: host, update: host}\n";

TEST(PlanFile, WhatIsWrittenReadsBackExactly) {
  TempDir dir;
  const std::string file = dir.file("plan.yaml");
  const PlanFile p = sample();
  write_plan_file(file, p);
  const PlanFile q = read_plan_file(file);
  EXPECT_EQ(q.hw, p.hw);
  EXPECT_EQ(q.model, p.model);
  EXPECT_EQ(q.optimizer, p.optimizer);
  EXPECT_EQ(q.batch, p.batch);
  // Read back in the schema's order, each as its codec writes it (the shortest exact number).
  EXPECT_EQ(q.settings, (std::vector<std::pair<std::string, std::string>>{
                            {"schedule", "vertical"},
                            {"micro-batches", "4"},
                            {"defer-fraction", "0.3"},
                            {"weights-on", "host"},
                            {"gradients-on", "device"},
                            {"checkpoints-on", "nvme"},
                            {"recompute-activations", "true"},
                            {"max-precond-dim", "1024"}}));
  EXPECT_EQ(q.host_workers, p.host_workers);
  EXPECT_EQ(q.method, p.method);
  ASSERT_TRUE(q.predicted.has_value());
  EXPECT_EQ(q.predicted->update_s, p.predicted->update_s);
  EXPECT_EQ(q.predicted->step_s, p.predicted->step_s);
  EXPECT_EQ(q.predicted->binding, p.predicted->binding);
  ASSERT_EQ(q.blocks.size(), p.blocks.size());
  for (std::size_t i = 0; i < p.blocks.size(); ++i) {
    EXPECT_EQ(q.blocks[i].label, p.blocks[i].label);
    EXPECT_EQ(q.blocks[i].home, p.blocks[i].home);
    EXPECT_EQ(q.blocks[i].update_on_device, p.blocks[i].update_on_device);
  }
  // Written again, the same text.
  EXPECT_EQ(plan_file_text(q), plan_file_text(p));
}

TEST(PlanFile, OptionalFieldsMayBeLeftOut) {
  TempDir dir;
  write_text(dir.file("plan.yaml"), kMinimal);
  const PlanFile p = read_plan_file(dir.file("plan.yaml"));
  EXPECT_EQ(p.model, "tiny");
  EXPECT_FALSE(p.hw.has_value());
  EXPECT_TRUE(p.settings.empty());
  EXPECT_FALSE(p.predicted.has_value());
  ASSERT_EQ(p.blocks.size(), 1u);
  EXPECT_EQ(p.blocks[0].home, Tier::host);
  EXPECT_FALSE(p.blocks[0].update_on_device);
}

TEST(PlanFile, ErrorsNameTheFileTheFieldAndTheExpectation) {
  TempDir dir;
  struct Case {
    std::string text;
    std::string field;
    std::string expectation;
  };
  const std::vector<Case> cases = {
      {"format: asteria-plan 2\nmodel: tiny\noptimizer: soap\nblocks: []\n", "format", "asteria-plan 1"},
      {"model: tiny\noptimizer: soap\nblocks: []\n", "format", "missing"},
      {kMinimal + "colour: blue\n", "colour", "unknown key"},
      {kMinimal + "model: gpt-mini\n", "model", "given once, found twice"},
      {"format: asteria-plan 1\nmodel: tiny\noptimizer: sgd\nblocks: []\n", "optimizer", "adamw, shampoo"},
      {"format: asteria-plan 1\nmodel: tiny\noptimizer: soap\n", "blocks", "missing"},
      {"format: asteria-plan 1\nmodel: tiny\noptimizer: soap\nblocks: 3\n", "blocks", "a list"},
      {kMinimal + "micro_batches: 0\n", "micro_batches", "expected an integer >= 1, found '0' (line 6)"},
      {kMinimal + "micro_batches: two\n", "micro_batches", "an integer >= 1"},
      {kMinimal + "defer_fraction: 1\n", "defer_fraction", "[0, 1)"},
      {kMinimal + "schedule: diagonal\n", "schedule", "horizontal"},
      {kMinimal + "weights_on: gpu\n", "weights_on", "device, host or nvme"},
      {kMinimal + "recompute_activations: yes\n", "recompute_activations", "expected true or false, found 'yes'"},
      {kMinimal + "max_precond_dim: big\n", "max_precond_dim", "expected an integer"},
      {kMinimal + "lr: 0.1\n", "lr", "unknown key"},
      {kMinimal + "predicted: {update_s: 1, step_s: -2, binding: issuer}\n", "predicted.step_s", "seconds >= 0"},
      {kMinimal + "predicted: {update_s: 1, step_s: 2}\n", "predicted.binding", "missing"},
      {"format: asteria-plan 1\nmodel: tiny\noptimizer: soap\nblocks:\n  - {label: a, tier: disk, update: host}\n",
       "blocks[0].tier", "device, host or nvme"},
      {"format: asteria-plan 1\nmodel: tiny\noptimizer: soap\nblocks:\n  - {label: a, tier: host, update: cpu}\n",
       "blocks[0].update", "device or host"},
      {"format: asteria-plan 1\nmodel: tiny\noptimizer: soap\nblocks:\n  - {label: a, tier: host, update: host}\n"
       "  - {label: b, tier: device, update: host}\n",
       "blocks[1].update", "expected device for a block resting on the device"},
      {"format: asteria-plan 1\nmodel: tiny\noptimizer: soap\nblocks:\n  - {label: a, tier: host}\n",
       "blocks[0].update", "missing"},
      {"format: asteria-plan 1\nmodel: tiny\noptimizer: soap\nblocks:\n  - {label: a, tier: host, update: host, "
       "tier: nvme}\n",
       "blocks[0].tier", "given once, found twice"},
      {"format: asteria-plan 1\nmodel: tiny\noptimizer: soap\nblocks:\n  - {label: a, tier: host, update: host, "
       "size: 3}\n",
       "blocks[0].size", "unknown key"},
      {"format: [asteria-plan 1\n", "YAML", "well-formed YAML"},
      {"", "(top level)", "a mapping"},
  };
  for (const Case& c : cases) {
    const InputError e = read_error(dir, c.text);
    EXPECT_EQ(e.field(), c.field) << c.text << "\n-> " << e.what();
    EXPECT_NE(std::string(e.what()).find(c.expectation), std::string::npos) << c.text << "\n-> " << e.what();
  }
}

TEST(PlanFile, AMissingFileIsNamed) {
  TempDir dir;
  try {
    read_plan_file(dir.file("none.yaml"));
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.source(), dir.file("none.yaml"));
    EXPECT_EQ(e.field(), "file");
  }
}

}  // namespace
}  // namespace asteria::cli

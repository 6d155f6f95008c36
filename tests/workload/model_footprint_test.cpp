// The memory estimates of a model config in closed form against the figures built tensor by
// tensor (build_workload, optimizer_blocks), and the check's error: the field or the option to
// change, the bytes needed, the bytes available.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/common/error.hpp"
#include "core/workload/model_footprint.hpp"
#include "core/runtime/driver/step_setup.hpp"
#include "core/workload/optimizer_blocks.hpp"
#include "core/workload/runtime_stack.hpp"
#include "core/workload/workload_model.hpp"

namespace asteria::workload {
namespace {

using optim::OptimizerKind;

ModelConfig config_of(const std::string& name) { return find_model_config(name); }

TEST(ModelFootprint, WeightsAreTheWorkloadsParameters) {
  for (const std::string& name : shipped_model_names()) {
    const ModelConfig c = config_of(name);
    const ModelFootprint f = weights_footprint(c, 4);
    const double parameters = static_cast<double>(build_workload(c).totals.parameters);
    EXPECT_EQ(f.weights, 4.0 * parameters) << name;
    EXPECT_EQ(f.gradients, f.weights) << name;
    EXPECT_EQ(f.activations, 0.0);
    EXPECT_EQ(f.optimizer_state, 0.0);
  }
}

TEST(ModelFootprint, OptimizerStateIsWhatTheBlocksAddUpTo) {
  for (const char* name : {"tiny", "gpt-mini"}) {
    const ModelConfig c = config_of(name);
    const WorkloadModel model = build_workload(c);
    for (OptimizerKind kind : {OptimizerKind::adamw, OptimizerKind::shampoo, OptimizerKind::soap,
                               OptimizerKind::kl_shampoo, OptimizerKind::muon})
      for (optim::index max_dim : {48, 64, 100, 4096}) {
        optim::Hyperparameters hp = optim::default_hyperparameters(kind);
        hp.max_precond_dim = max_dim;
        const OptimizerTotals blocks = summarize(optimizer_blocks(model, kind, hp, 4));
        const OptimizerStateSize size = optimizer_state_size(c, kind, hp, 4);
        EXPECT_EQ(size.blocks, static_cast<double>(blocks.blocks)) << name << " " << max_dim;
        EXPECT_EQ(size.bytes, static_cast<double>(blocks.state_bytes)) << name << " " << max_dim;
      }
  }
}

// The memory check's estimate is the step set-up's (the blocks the driver runs), for every
// optimizer and the blocking options that change the blocks: merged small dimensions and
// preconditioned vectors (the distributed-shampoo preset), several block sides.
TEST(ModelFootprint, OptimizerStateIsTheStepSetUps) {
  for (const char* name : {"tiny", "gpt-mini"}) {
    const ModelConfig c = config_of(name);
    const runtime::SyntheticModelSpec stack = runtime_stack(build_workload(c), runtime::GradientSpec{});
    for (OptimizerKind kind : {OptimizerKind::adamw, OptimizerKind::shampoo, OptimizerKind::soap,
                               OptimizerKind::kl_shampoo, OptimizerKind::muon}) {
      std::vector<optim::Hyperparameters> variants;
      for (optim::index max_dim : {48, 100, 4096}) {
        optim::Hyperparameters hp = optim::default_hyperparameters(kind);
        hp.max_precond_dim = max_dim;
        variants.push_back(hp);
      }
      if (kind == OptimizerKind::shampoo) {
        optim::Hyperparameters ds = optim::preset_hyperparameters(kind, optim::HyperparameterPreset::distributed_shampoo,
                                                                  "--preset");
        variants.push_back(ds);
        ds.max_precond_dim = 64;  // vectors in several one-sided pieces, small matrices merged
        variants.push_back(ds);
      }
      for (const optim::Hyperparameters& hp : variants) {
        runtime::StepSetupOptions options;
        options.element_bytes = 4;
        const runtime::StepSetup setup = runtime::set_up_step(stack.layers, kind, hp, options);
        const OptimizerStateSize size = optimizer_state_size(c, kind, hp, 4);
        const std::string what = std::string(name) + " " + std::string(optim::to_string(kind)) + " max_precond_dim " +
                                 std::to_string(hp.max_precond_dim) + (hp.precondition_vectors ? " vectors" : "");
        EXPECT_EQ(size.blocks, static_cast<double>(setup.blocks.size())) << what;
        EXPECT_EQ(size.bytes, static_cast<double>(setup.state_bytes())) << what;
      }
    }
  }
}

TEST(ModelFootprint, AnAbsurdConfigCostsNothingToSize) {
  ModelConfig c = config_of("tiny");
  c.d_model = 4194304;
  c.layers = 100000000;
  const ModelFootprint f = weights_footprint(c, 4);  // would be a list of 10^9 tensors, built
  EXPECT_GT(f.weights, 1e21);
  optim::Hyperparameters hp = optim::default_hyperparameters(OptimizerKind::soap);
  EXPECT_GT(optimizer_state_size(c, OptimizerKind::soap, hp, 4).blocks, 1e14);
}

TEST(ModelFootprint, TheCheckNamesTheDominantFieldTheBytesAndTheLimit) {
  ModelConfig wide = config_of("tiny");
  wide.d_model = 4194304;
  const MemoryLimit limit{25e9, "the machine's physical memory"};
  FootprintNames names;
  names.model_source = "wide.yaml";
  try {
    check_footprint(weights_footprint(wide, 4), wide, limit, names);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.source(), "wide.yaml");
    EXPECT_EQ(e.field(), "d_model");
    EXPECT_NE(message.find("d_model 4194304"), std::string::npos) << message;
    EXPECT_NE(message.find("need 1.13 PB for the run (weights 563 TB, gradients 563 TB)"), std::string::npos)
        << message;
    EXPECT_NE(message.find("expected a model that fits in memory, at most 25.0 GB (the machine's physical memory)"),
              std::string::npos)
        << message;
  }
  ModelConfig mlp = config_of("tiny");
  mlp.mlp_hidden = 1LL << 36;
  try {
    check_footprint(weights_footprint(mlp, 4), mlp, limit, names);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "mlp_hidden");
  }
  // Activations past the rest: the batch is named, with how it was chosen.
  ModelFootprint f = weights_footprint(config_of("tiny"), 4);
  f.activations = 80e9;
  try {
    check_footprint(f, config_of("tiny"), limit, names);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.source(), "command line");
    EXPECT_EQ(e.field(), "--batch");
    EXPECT_NE(message.find("2 sequences of 64 tokens (--batch, or the model config's micro_batch)"), std::string::npos)
        << message;
    EXPECT_NE(message.find("activations 80.0 GB"), std::string::npos) << message;
  }
  EXPECT_NO_THROW(check_footprint(weights_footprint(config_of("tiny"), 4), config_of("tiny"), limit, names));
  // Ranks in one process of which one fits: their count is named.
  ModelFootprint ranks;
  ranks.weights = 8 * 5e9;
  names.ranks = 8;
  names.ranks_field = "--nodes";
  try {
    check_footprint(ranks, config_of("tiny"), limit, names);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.source(), "command line");
    EXPECT_EQ(e.field(), "--nodes");
    EXPECT_NE(message.find("expected ranks that fit in memory, at most 25.0 GB (the machine's physical memory), so at "
                           "most 5; 8 ranks (--units or --nodes) need 40.0 GB, 5.00 GB each (weights 40.0 GB)"),
              std::string::npos)
        << message;
  }
}

TEST(ModelFootprint, BytesReadInPowersOfAThousand) {
  EXPECT_EQ(bytes_text(0), "0 B");
  EXPECT_EQ(bytes_text(999), "999 B");
  EXPECT_EQ(bytes_text(25.3e9), "25.3 GB");
  EXPECT_EQ(bytes_text(1.126e15), "1.13 PB");
}

}  // namespace
}  // namespace asteria::workload

// Optimizer blocks from shapes alone against the real optimizers: blocking, allocated state and
// first refresh jobs. The per-block figures themselves are the optimizers' shape model
// (core/optim/shape_model.hpp), checked against the real blocks in tests/optim; here, that the
// workload's figures are that model's.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/common/error.hpp"
#include "core/optim/factory.hpp"
#include "core/optim/shape_model.hpp"
#include "core/optim/tensor_optimizer.hpp"
#include "core/workload/optimizer_blocks.hpp"
#include "core/workload/runtime_stack.hpp"
#include "tests/ops/host_device.hpp"

namespace asteria::workload {
namespace {

using optim::Hyperparameters;
using optim::OptimizerKind;

const OptimizerKind kAllKinds[] = {OptimizerKind::adamw, OptimizerKind::shampoo, OptimizerKind::soap,
                                   OptimizerKind::kl_shampoo, OptimizerKind::muon};

struct Shape {
  index rows;
  index cols;
};
const Shape kShapes[] = {{7, 5}, {5, 7}, {1, 9}, {9, 1}, {4, 4}, {1, 1}, {33, 12}};

linalg::Matrix<float> random_gradient(index rows, index cols, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0F, 1.0F);
  linalg::Matrix<float> g(rows, cols);
  for (float& x : g.values()) x = dist(gen);
  return g;
}

void expect_same_costs(const std::vector<platform::Cost>& modelled, const std::vector<platform::Cost>& real,
                       const std::string& what) {
  ASSERT_EQ(modelled.size(), real.size()) << what;
  for (std::size_t i = 0; i < real.size(); ++i) {
    EXPECT_EQ(modelled[i].kind, real[i].kind) << what << " piece " << i;
    EXPECT_DOUBLE_EQ(modelled[i].flops, real[i].flops) << what << " piece " << i;
    EXPECT_DOUBLE_EQ(modelled[i].bytes, real[i].bytes) << what << " piece " << i;
    EXPECT_EQ(modelled[i].dimension, real[i].dimension) << what << " piece " << i;
    EXPECT_EQ(modelled[i].reduced_precision, real[i].reduced_precision) << what << " piece " << i;
  }
}

// The workload's per-block figures are the optimizers' own.
TEST(WorkloadFigures, AreTheOptimizersShapeModel) {
  for (OptimizerKind kind : kAllKinds)
    for (const Shape s : kShapes) {
      SCOPED_TRACE(std::string(optim::to_string(kind)) + " " + std::to_string(s.rows) + "x" + std::to_string(s.cols));
      Hyperparameters hp = optim::default_hyperparameters(kind);
      EXPECT_EQ(state_bytes(kind, s.rows, s.cols, sizeof(float)),
                optim::state_bytes(kind, hp, s.rows, s.cols, sizeof(float)));
      EXPECT_EQ(refresh_job_bytes(kind, s.rows, s.cols, sizeof(float)),
                optim::refresh_job_bytes(kind, hp, s.rows, s.cols, sizeof(float)));
      hp.precondition_frequency = 3;
      hp.basis_orthogonalization = linalg::Orthogonalization::shifted_cholesky_qr;
      hp.grafting = false;
      for (bool first : {true, false})
        expect_same_costs(refresh_costs(kind, hp, s.rows, s.cols, 2, first),
                          optim::refresh_cost(kind, hp, s.rows, s.cols, 2, first), first ? "first" : "warm");
    }
}

// The blocks of every tiny-model weight equal those of a real TensorOptimizer over that weight:
// same regions, same allocated state. max_precond_dim 48 cuts 64 into 48 + 16 and 256 into
// 5 x 48 + 16. Shampoo runs twice: as Asteria's, and with Distributed Shampoo's blocking
// (vectors preconditioned, not handed to AdamW).
TEST(OptimizerBlocks, MatchRealTensorOptimizersOfTheTinyModel) {
  const WorkloadModel model = build_workload(find_model_config("tiny"));
  std::vector<std::pair<OptimizerKind, bool>> cases;
  for (OptimizerKind kind : kAllKinds) cases.emplace_back(kind, false);
  cases.emplace_back(OptimizerKind::shampoo, true);
  for (const auto& [kind, ds_blocking] : cases) {
    SCOPED_TRACE(std::string(optim::to_string(kind)) + (ds_blocking ? " with DS blocking" : ""));
    Hyperparameters hp = optim::default_hyperparameters(kind);
    hp.max_precond_dim = 48;
    hp.precondition_vectors = hp.merge_small_dims = ds_blocking;
    const std::vector<BlockSpec> blocks = optimizer_blocks(model, kind, hp, sizeof(float));
    std::size_t next = 0;
    for (std::size_t w = 0; w < model.weights.size(); ++w) {
      const WeightSpec& weight = model.weights[w];
      const std::vector<index> shape =
          weight.order == 1 ? std::vector<index>{weight.cols} : std::vector<index>{weight.rows, weight.cols};
      optim::TensorOptimizer<float> real(kind, hp, shape);
      for (std::size_t b = 0; b < real.blocks().size(); ++b, ++next) {
        ASSERT_LT(next, blocks.size());
        const BlockSpec& spec = blocks[next];
        auto& block = real.blocks()[b];
        EXPECT_EQ(spec.weight, w);
        EXPECT_EQ(spec.label, weight.name + " block " + std::to_string(b));
        EXPECT_EQ(spec.row0, block.region.row0);
        EXPECT_EQ(spec.col0, block.region.col0);
        EXPECT_EQ(spec.rows, block.region.rows);
        EXPECT_EQ(spec.cols, block.region.cols);
        EXPECT_EQ(spec.fallback, weight.order == 1 && !ds_blocking);
        EXPECT_EQ(spec.state_bytes, block.optimizer->state().tensor_bytes()) << spec.label;
        // The real block's first refresh job (fallbacks run AdamW, with no refresh): every matrix
        // method refreshes after its first gradient under these hyperparameters.
        optim::BlockOptimizer<float>& fresh = *block.optimizer;
        fresh.accumulate(::asteria::test::host_device(), random_gradient(spec.rows, spec.cols, 5).view(), 1);
        ASSERT_EQ(fresh.refresh_due(1), !spec.first_refresh.empty()) << spec.label;
        if (fresh.refresh_due(1)) {
          const auto job = fresh.snapshot(::asteria::test::host_device(), 1);
          ASSERT_NE(job, nullptr);
          expect_same_costs(spec.first_refresh, job->cost(), spec.label);
        }
      }
    }
    EXPECT_EQ(next, blocks.size()) << optim::to_string(kind);
  }
}

// OLMo-2 7B's MLP gate is 11008 x 4096: with max_precond_dim 1024, 11 row chunks (ten of 1024,
// one of 768) by 4 column chunks = 44 blocks, row-major.
TEST(OptimizerBlocks, BlockingOfOneWeightByHand) {
  const WorkloadModel model = build_workload(find_model_config("olmo2-7b"));
  const std::vector<BlockSpec> blocks = optimizer_blocks(model, OptimizerKind::soap, 1024);
  const std::size_t gate = model.weight_index("layer0.mlp.gate");
  std::vector<const BlockSpec*> mine;
  for (const BlockSpec& b : blocks)
    if (b.weight == gate) mine.push_back(&b);
  ASSERT_EQ(mine.size(), 44u);
  EXPECT_EQ(mine[0]->label, "layer0.mlp.gate block 0");
  EXPECT_EQ(mine[5]->row0, 1024);  // second row chunk, second column chunk
  EXPECT_EQ(mine[5]->col0, 1024);
  EXPECT_EQ(mine[43]->label, "layer0.mlp.gate block 43");
  EXPECT_EQ(mine[43]->row0, 10240);
  EXPECT_EQ(mine[43]->col0, 3072);
  EXPECT_EQ(mine[43]->rows, 768);
  EXPECT_EQ(mine[43]->cols, 1024);
  EXPECT_FALSE(mine[43]->fallback);
  // SOAP, fp32: 2·768·1024 moments + 2·(768² + 1024²) factors and bases.
  EXPECT_EQ(mine[43]->state_bytes, (2u * 768 * 1024 + 2u * (768 * 768 + 1024 * 1024)) * 4);
  // Accumulate: two SYRK-like products m²n + mn²; apply: four basis GEMMs + elementwise.
  const double m = 768, n = 1024;
  EXPECT_DOUBLE_EQ(mine[43]->accumulate.flops, m * m * n + m * n * n);
  EXPECT_DOUBLE_EQ(mine[43]->apply.flops, 4.0 * (m * m * n + m * n * n) + 12.0 * m * n);
}

TEST(OptimizerBlocks, NormGainsFallBackToAdamW) {
  const WorkloadModel model = build_workload(find_model_config("olmo2-7b"));
  const std::vector<BlockSpec> blocks = optimizer_blocks(model, OptimizerKind::kl_shampoo, 1024);
  const std::size_t norm = model.weight_index("layer5.attn.q_norm");
  std::size_t found = 0;
  for (const BlockSpec& b : blocks) {
    if (b.weight != norm) continue;
    ++found;
    EXPECT_TRUE(b.fallback);
    EXPECT_EQ(b.kind, OptimizerKind::adamw);
    EXPECT_EQ(b.rows, 1);
    EXPECT_EQ(b.cols, 4096);
    EXPECT_EQ(b.state_bytes, 2u * 4096 * 4);
    EXPECT_TRUE(b.first_refresh.empty());
    EXPECT_TRUE(b.warm_refresh.empty());
  }
  EXPECT_EQ(found, 1u);
}

TEST(OptimizerBlocks, TotalsOfTheTinyModel) {
  const WorkloadModel model = build_workload(find_model_config("tiny"));
  // AdamW: one block per weight, 2 values per parameter.
  const OptimizerTotals adamw = summarize(optimizer_blocks(model, OptimizerKind::adamw, 1024));
  EXPECT_EQ(adamw.blocks, model.weights.size());
  EXPECT_EQ(adamw.state_bytes, 2u * static_cast<std::size_t>(model.totals.parameters) * 4);
  EXPECT_EQ(adamw.fallback_blocks, 5u);  // two norms per layer, final norm
  EXPECT_DOUBLE_EQ(adamw.first_refresh_flops, 0.0);

  // SOAP: the largest state belongs to the 256 x 64 matrices; the embedding comes first.
  const OptimizerTotals soap = summarize(optimizer_blocks(model, OptimizerKind::soap, 1024));
  EXPECT_EQ(soap.blocks, model.weights.size());
  EXPECT_EQ(soap.matrix_blocks, 16u);
  EXPECT_EQ(soap.largest_block, 0u);
  EXPECT_EQ(soap.largest_block_bytes, (2u * 256 * 64 + 2u * (256 * 256 + 64 * 64)) * 4);
  // First refresh: one eigh per factor, 9n³ each, over the 16 matrix blocks
  // (q, k, v, o: 64 x 64; gate, up: 256 x 64; down: 64 x 256; embedding, head: 256 x 64).
  const double small = 9.0 * 64 * 64 * 64, large = 9.0 * 256 * 256 * 256;
  EXPECT_DOUBLE_EQ(soap.first_refresh_flops, 2 * (4 * 2 * small + 3 * (small + large)) + 2 * (small + large));
}

TEST(OptimizerBlocks, RejectsBadHyperparameters) {
  const WorkloadModel model = build_workload(find_model_config("tiny"));
  EXPECT_THROW(optimizer_blocks(model, OptimizerKind::soap, 0), InputError);
}

TEST(OptimizerBlocks, BlockSpecCarriesBothRefreshes) {
  const WorkloadModel model = build_workload(find_model_config("tiny"));
  const std::vector<BlockSpec> blocks = optimizer_blocks(model, OptimizerKind::kl_shampoo, 1024);
  const BlockSpec& q = blocks[model.weight_index("layer0.attn.q")];  // one block per weight here
  EXPECT_EQ(q.label, "layer0.attn.q block 0");
  const Hyperparameters hp = optim::default_hyperparameters(OptimizerKind::kl_shampoo);
  ASSERT_EQ(q.first_refresh.size(), 2u);
  EXPECT_EQ(q.first_refresh[0].kind, platform::WorkKind::eigh);
  expect_same_costs(q.warm_refresh, optim::refresh_cost(OptimizerKind::kl_shampoo, hp, 64, 64, 4, false), "kl warm");
}

}  // namespace
}  // namespace asteria::workload

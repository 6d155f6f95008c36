// Optimizer blocks from shapes alone against the real optimizers: blocking, allocated state,
// and the cost() of real refresh jobs, first and warm.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <vector>

#include "core/common/error.hpp"
#include "core/optim/factory.hpp"
#include "core/optim/tensor_optimizer.hpp"
#include "core/workload/optimizer_blocks.hpp"

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

TEST(StateBytes, MatchesWhatTheRealOptimizersAllocate) {
  for (OptimizerKind kind : kAllKinds)
    for (const Shape s : kShapes) {
      const Hyperparameters hp = optim::default_hyperparameters(kind);
      auto single = optim::make_block_optimizer<float>(kind, hp, s.rows, s.cols);
      EXPECT_EQ(state_bytes(kind, s.rows, s.cols, sizeof(float)), single->state().tensor_bytes())
          << optim::to_string(kind) << " " << s.rows << "x" << s.cols;
      auto wide = optim::make_block_optimizer<double>(kind, hp, s.rows, s.cols);
      EXPECT_EQ(state_bytes(kind, s.rows, s.cols, sizeof(double)), wide->state().tensor_bytes())
          << optim::to_string(kind) << " " << s.rows << "x" << s.cols;
    }
}

TEST(StateBytes, FollowsShampooMomentumAndGrafting) {
  for (bool grafting : {false, true})
    for (double beta1 : {0.0, 0.9}) {
      Hyperparameters hp = optim::default_hyperparameters(OptimizerKind::shampoo);
      hp.grafting = grafting;
      hp.beta1 = beta1;
      auto block = optim::make_block_optimizer<float>(OptimizerKind::shampoo, hp, 6, 3);
      EXPECT_EQ(state_bytes(OptimizerKind::shampoo, hp, 6, 3, 4), block->state().tensor_bytes())
          << "grafting " << grafting << " beta1 " << beta1;
    }
}

// ALGORITHMS.md "State sizes" by hand for one 6 x 3 fp32 block.
TEST(StateBytes, FollowsTheStateSizeTable) {
  const std::size_t m = 6, n = 3, e = 4;
  EXPECT_EQ(state_bytes(OptimizerKind::adamw, 6, 3, e), 2 * m * n * e);
  EXPECT_EQ(state_bytes(OptimizerKind::shampoo, 6, 3, e), (2 * (m * m + n * n) + 2 * m * n) * e);
  EXPECT_EQ(state_bytes(OptimizerKind::soap, 6, 3, e), (2 * m * n + 2 * (m * m + n * n)) * e);
  // The table's m² + n² + m² + n² + m + n + mn, plus the start-of-step eigenvalues (m + n).
  EXPECT_EQ(state_bytes(OptimizerKind::kl_shampoo, 6, 3, e), (2 * (m * m + n * n) + 2 * (m + n) + m * n) * e);
  EXPECT_EQ(state_bytes(OptimizerKind::muon, 6, 3, e), m * n * e);
}

// The blocks of every tiny-model weight equal those of a real TensorOptimizer over that weight:
// same regions, same allocated state. max_precond_dim 48 cuts 64 into 48 + 16 and 256 into
// 5 x 48 + 16.
TEST(OptimizerBlocks, MatchRealTensorOptimizersOfTheTinyModel) {
  const WorkloadModel model = build_workload(find_model_config("tiny"));
  for (OptimizerKind kind : kAllKinds) {
    Hyperparameters hp = optim::default_hyperparameters(kind);
    hp.max_precond_dim = 48;
    const std::vector<BlockSpec> blocks = optimizer_blocks(model, kind, hp, sizeof(float));
    std::size_t next = 0;
    for (std::size_t w = 0; w < model.weights.size(); ++w) {
      const WeightSpec& weight = model.weights[w];
      const std::vector<index> shape =
          weight.order == 1 ? std::vector<index>{weight.cols} : std::vector<index>{weight.rows, weight.cols};
      const optim::TensorOptimizer<float> real(kind, hp, shape);
      for (std::size_t b = 0; b < real.blocks().size(); ++b, ++next) {
        ASSERT_LT(next, blocks.size());
        const BlockSpec& spec = blocks[next];
        const auto& block = real.blocks()[b];
        EXPECT_EQ(spec.weight, w);
        EXPECT_EQ(spec.label, weight.name + " block " + std::to_string(b));
        EXPECT_EQ(spec.row0, block.region.row0);
        EXPECT_EQ(spec.col0, block.region.col0);
        EXPECT_EQ(spec.rows, block.region.rows);
        EXPECT_EQ(spec.cols, block.region.cols);
        EXPECT_EQ(spec.fallback, weight.order == 1);
        EXPECT_EQ(spec.state_bytes, block.optimizer->state().tensor_bytes()) << spec.label;
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

// --- refresh costs against the real jobs ---

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
  }
}

// Runs the real block through the synchronous schedule until it has snapshotted two refresh
// jobs, and compares the first (before it runs) and the second with the modelled costs.
void check_refresh_costs(OptimizerKind kind, const Hyperparameters& hp, index rows, index cols) {
  const std::string what = std::string(optim::to_string(kind)) + " " + std::to_string(rows) + "x" +
                           std::to_string(cols);
  auto block = optim::make_block_optimizer<float>(kind, hp, rows, cols);
  linalg::Matrix<float> weights = random_gradient(rows, cols, 7);
  int jobs = 0;
  for (optim::Step t = 1; t <= 50 && jobs < 2; ++t) {
    const linalg::Matrix<float> g = random_gradient(rows, cols, static_cast<unsigned>(t));
    block->accumulate(g.view(), t);
    std::unique_ptr<optim::RefreshJob<float>> job;
    if (block->refresh_due(t)) {
      job = block->snapshot(t);
      ++jobs;
      const bool first = jobs == 1;
      expect_same_costs(refresh_costs(kind, hp, rows, cols, sizeof(float), first), job->cost(),
                        what + (first ? " first" : " warm"));
      ASSERT_TRUE(job->run().ok()) << what;
      if (block->activation_delay() == 0) block->publish(*job);
    }
    ASSERT_TRUE(block->apply(weights.view(), g.view(), t)) << what;
    if (job && block->activation_delay() == 1) block->publish(*job);
  }
  EXPECT_EQ(jobs, 2) << what;
}

TEST(RefreshCosts, EqualTheRealJobsCosts) {
  for (OptimizerKind kind : {OptimizerKind::shampoo, OptimizerKind::soap, OptimizerKind::kl_shampoo})
    for (const Shape s : {Shape{6, 4}, Shape{3, 5}, Shape{1, 4}}) {
      check_refresh_costs(kind, optim::default_hyperparameters(kind), s.rows, s.cols);
    }
}

TEST(RefreshCosts, FollowTheRootMethodAndTheOrthogonalization) {
  Hyperparameters newton = optim::default_hyperparameters(OptimizerKind::shampoo);
  newton.root_method = optim::RootMethod::coupled_newton;
  // A Newton job's cost() before it runs is the 20-iteration estimate the model uses.
  auto shampoo = optim::make_block_optimizer<float>(OptimizerKind::shampoo, newton, 5, 3);
  const linalg::Matrix<float> g = random_gradient(5, 3, 3);
  shampoo->accumulate(g.view(), 1);
  ASSERT_TRUE(shampoo->refresh_due(1));
  expect_same_costs(refresh_costs(OptimizerKind::shampoo, newton, 5, 3, sizeof(float), true),
                    shampoo->snapshot(1)->cost(), "shampoo newton");

  for (OptimizerKind kind : {OptimizerKind::soap, OptimizerKind::kl_shampoo}) {
    Hyperparameters hp = optim::default_hyperparameters(kind);
    hp.basis_orthogonalization = linalg::Orthogonalization::shifted_cholesky_qr;
    hp.precondition_frequency = 2;
    check_refresh_costs(kind, hp, 6, 4);
  }
}

// By hand: SOAP's warm refresh of a 6 x 4 fp32 block, per side change of basis 2n³, power
// step 2n³, Householder QR 4n³/3.
TEST(RefreshCosts, SoapWarmRefreshByHand) {
  const auto pieces =
      refresh_costs(OptimizerKind::soap, optim::default_hyperparameters(OptimizerKind::soap), 6, 4, 4, false);
  ASSERT_EQ(pieces.size(), 6u);
  EXPECT_EQ(pieces[0].kind, platform::WorkKind::gemm);
  EXPECT_DOUBLE_EQ(pieces[0].flops, 2.0 * 216);
  EXPECT_EQ(pieces[2].kind, platform::WorkKind::qr);
  EXPECT_DOUBLE_EQ(pieces[2].flops, 4.0 * 216 / 3.0);
  EXPECT_EQ(pieces[5].dimension, 4);
  EXPECT_DOUBLE_EQ(pieces[5].bytes, 2.0 * 16 * 4);
  EXPECT_TRUE(refresh_costs(OptimizerKind::muon, optim::default_hyperparameters(OptimizerKind::muon), 6, 4, 4, true)
                  .empty());
}

TEST(OptimizerBlocks, BlockSpecCarriesBothRefreshes) {
  const WorkloadModel model = build_workload(find_model_config("tiny"));
  const std::vector<BlockSpec> blocks = optimizer_blocks(model, OptimizerKind::kl_shampoo, 1024);
  const BlockSpec& q = blocks[model.weight_index("layer0.attn.q")];  // one block per weight here
  EXPECT_EQ(q.label, "layer0.attn.q block 0");
  const Hyperparameters hp = optim::default_hyperparameters(OptimizerKind::kl_shampoo);
  ASSERT_EQ(q.first_refresh.size(), 2u);
  EXPECT_EQ(q.first_refresh[0].kind, platform::WorkKind::eigh);
  expect_same_costs(q.warm_refresh, refresh_costs(OptimizerKind::kl_shampoo, hp, 64, 64, 4, false), "kl warm");
}

}  // namespace
}  // namespace asteria::workload

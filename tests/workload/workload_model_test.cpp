// The workload of a training step against counts done by hand from the model's definition.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/common/error.hpp"
#include "core/workload/model_config.hpp"
#include "core/workload/workload_model.hpp"

namespace asteria::workload {
namespace {

ModelConfig tiny() { return find_model_config("tiny"); }

TEST(Workload, TinyWeightsInForwardOrder) {
  const WorkloadModel w = build_workload(tiny());
  const std::vector<std::string> per_layer = {"attn_norm", "attn.q", "attn.k", "attn.v", "attn.o",
                                              "mlp_norm",  "mlp.gate", "mlp.up", "mlp.down"};
  std::vector<std::string> expected = {"embedding"};
  for (int l = 0; l < 2; ++l)
    for (const std::string& s : per_layer) expected.push_back("layer" + std::to_string(l) + "." + s);
  expected.push_back("final_norm");
  expected.push_back("head");
  ASSERT_EQ(w.weights.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(w.weights[i].name, expected[i]);

  const WeightSpec& gate = w.weights[w.weight_index("layer1.mlp.gate")];
  EXPECT_EQ(gate.rows, 256);  // out_features x in_features
  EXPECT_EQ(gate.cols, 64);
  EXPECT_EQ(gate.layer, 1);
  EXPECT_EQ(gate.order, 2);
  const WeightSpec& down = w.weights[w.weight_index("layer0.mlp.down")];
  EXPECT_EQ(down.rows, 64);
  EXPECT_EQ(down.cols, 256);
  const WeightSpec& norm = w.weights[w.weight_index("layer0.attn_norm")];
  EXPECT_EQ(norm.order, 1);
  EXPECT_EQ(norm.rows, 1);
  EXPECT_EQ(norm.cols, 64);
  EXPECT_EQ(w.weights[w.weight_index("embedding")].layer, kEmbeddingLayer);
  EXPECT_EQ(w.weights[w.weight_index("head")].layer, 2);
  EXPECT_EQ(w.weights[w.weight_index("final_norm")].layer, 2);
  EXPECT_THROW(w.weight_index("layer7.attn.q"), InputError);
}

TEST(Workload, TinyParameterCount) {
  const WorkloadModel w = build_workload(tiny());
  // embedding 256·64; per layer q,k,v,o 4·64² + gate,up,down 3·256·64 + two norms 2·64;
  // final norm 64; head 256·64.
  const count per_layer = 4 * 64 * 64 + 3 * 256 * 64 + 2 * 64;
  const count expected = 256 * 64 + 2 * per_layer + 64 + 256 * 64;
  EXPECT_EQ(w.totals.parameters, expected);
  EXPECT_EQ(w.totals.matrix_parameters, expected - 2 * 2 * 64 - 64);
  EXPECT_EQ(w.totals.parameter_bytes, expected * 4);
  EXPECT_EQ(w.totals.gradient_bytes, expected * 4);
  EXPECT_EQ(w.totals.tokens, 128);
}

TEST(Workload, TinyLayerCostsByHand) {
  const WorkloadModel w = build_workload(tiny());
  ASSERT_EQ(w.layers.size(), 4u);
  EXPECT_EQ(w.layers[0].name, "embedding");
  EXPECT_EQ(w.layers[1].name, "layer0");
  EXPECT_EQ(w.layers[2].name, "layer1");
  EXPECT_EQ(w.layers[3].name, "head");

  const double tokens = 2 * 64;
  const LayerWork& layer = w.layers[1];
  // Matmuls 2·T·(4·64² + 3·256·64); causal attention 2·B·S²·d = 2·2·64²·64.
  const double forward = 2.0 * tokens * (4 * 64 * 64 + 3 * 256 * 64) + 2.0 * 2 * 64 * 64 * 64;
  // Two pieces: the matmuls (reading the weights) and the elementwise work (moving the saved
  // activations). Elementwise flops per token: norms 8·64, rotary 3·(64 + 64), softmax over
  // S/2 = 32 scores for each of 4 heads at 4 + an exp, SwiGLU 256·(4 + an exp), residuals 2·64.
  ASSERT_EQ(layer.forward.pieces().size(), 2u);
  ASSERT_EQ(layer.backward.pieces().size(), 2u);
  const platform::Cost& gemm = layer.forward.pieces()[0];
  const platform::Cost& elementwise = layer.forward.pieces()[1];
  EXPECT_EQ(gemm.kind, platform::WorkKind::gemm);
  EXPECT_EQ(gemm.dimension, 64);
  EXPECT_DOUBLE_EQ(gemm.flops, forward);
  EXPECT_DOUBLE_EQ(layer.backward.pieces()[0].flops, 2.0 * forward);
  EXPECT_EQ(elementwise.kind, platform::WorkKind::elementwise);
  const double exp = kTranscendentalFlops;
  const double per_token = 8 * 64 + 3 * (64 + 64) + 4 * 32 * (4 + exp) + 256 * (4 + exp) + 2 * 64;
  EXPECT_DOUBLE_EQ(elementwise.flops, tokens * per_token);
  EXPECT_DOUBLE_EQ(layer.backward.pieces()[1].flops, 2.0 * tokens * per_token);
  // Saved: T·(6·64 + 2·64 + 3·256) bf16 values, plus an fp32 log-sum-exp per (sequence, head, query).
  const count saved = 128 * (6 * 64 + 2 * 64 + 3 * 256) * 2 + 2 * 4 * 64 * 4;
  EXPECT_EQ(layer.activation_bytes, saved);
  const double layer_weights = 4 * 64 * 64 + 3 * 256 * 64 + 2 * 64;
  EXPECT_DOUBLE_EQ(gemm.bytes, layer_weights * 2);
  EXPECT_DOUBLE_EQ(elementwise.bytes, 2.0 * saved);
  EXPECT_DOUBLE_EQ(layer.forward.bytes(), layer_weights * 2 + 2.0 * saved);
  EXPECT_DOUBLE_EQ(layer.backward.bytes(), layer_weights * (2 + 4) + 2.0 * saved);
  EXPECT_EQ(layer.weights.size(), 9u);

  const LayerWork& head = w.layers[3];
  ASSERT_EQ(head.forward.pieces().size(), 2u);
  EXPECT_DOUBLE_EQ(head.forward.pieces()[0].flops, 2.0 * tokens * 64 * 256);
  EXPECT_DOUBLE_EQ(head.backward.pieces()[0].flops, 4.0 * tokens * 64 * 256);
  // The final norm (4 per element) and the loss's softmax over 256 logits (4 + an exp each).
  EXPECT_DOUBLE_EQ(head.forward.pieces()[1].flops, tokens * (4 * 64 + 256 * (4 + exp)));
  EXPECT_EQ(head.activation_bytes, 128 * (2 * 64 + 256) * 2);

  const LayerWork& embedding = w.layers[0];
  ASSERT_EQ(embedding.forward.pieces().size(), 1u);
  EXPECT_EQ(embedding.forward.pieces()[0].kind, platform::WorkKind::elementwise);
  EXPECT_DOUBLE_EQ(embedding.forward.flops(), 0.0);
  EXPECT_DOUBLE_EQ(embedding.backward.flops(), tokens * 64);  // scatter-add of T rows
  EXPECT_EQ(embedding.activation_bytes, 128 * 8);          // int64 token ids

  // Model flops are the matmuls' (elementwise work is not counted, as in MFU).
  const double total = 2 * 3 * forward + 3 * 2.0 * tokens * 64 * 256;
  EXPECT_DOUBLE_EQ(w.totals.flops_per_step, total);
  EXPECT_DOUBLE_EQ(w.totals.forward_flops + w.totals.backward_flops, total);
  EXPECT_EQ(w.totals.activation_bytes, 128 * 8 + 2 * saved + 128 * (2 * 64 + 256) * 2);
}

TEST(Workload, EveryWeightIsOwnedByExactlyOneLayer) {
  for (const char* name : {"tiny", "olmo-1b", "olmo2-7b", "gpt-mini"}) {
    const WorkloadModel w = build_workload(find_model_config(name));
    std::multiset<std::size_t> owned;
    for (const LayerWork& layer : w.layers)
      for (std::size_t i : layer.weights) {
        owned.insert(i);
        EXPECT_EQ(w.weights[i].layer, layer.layer) << name << " " << w.weights[i].name;
      }
    EXPECT_EQ(owned.size(), w.weights.size()) << name;
    for (std::size_t i = 0; i < w.weights.size(); ++i) EXPECT_EQ(owned.count(i), 1u) << name << " " << i;
  }
}

TEST(Workload, GroupedQueryAttentionNarrowsKeysAndValues) {
  ModelConfig c = tiny();
  c.kv_heads = 2;  // head_dim 16, so k and v project to 32
  const WorkloadModel w = build_workload(c);
  EXPECT_EQ(w.weights[w.weight_index("layer0.attn.k")].rows, 32);
  EXPECT_EQ(w.weights[w.weight_index("layer0.attn.v")].rows, 32);
  EXPECT_EQ(w.weights[w.weight_index("layer0.attn.q")].rows, 64);
  const double forward = 2.0 * 128 * (2 * 64 * 64 + 2 * 32 * 64 + 3 * 256 * 64) + 2.0 * 2 * 64 * 64 * 64;
  EXPECT_DOUBLE_EQ(w.layers[1].forward.pieces()[0].flops, forward);
}

TEST(Workload, GeluMlpHasTwoMatrices) {
  ModelConfig c = tiny();
  c.mlp = MlpKind::gelu;
  const WorkloadModel w = build_workload(c);
  EXPECT_EQ(w.weights[w.weight_index("layer0.mlp.fc1")].rows, 256);
  EXPECT_EQ(w.weights[w.weight_index("layer0.mlp.fc2")].cols, 256);
  EXPECT_THROW(w.weight_index("layer0.mlp.gate"), InputError);
  EXPECT_EQ(w.totals.parameters, 256 * 64 + 2 * (4 * 64 * 64 + 2 * 256 * 64 + 2 * 64) + 64 + 256 * 64);
}

TEST(Workload, TiedEmbeddingsDropTheHeadWeightButNotItsWork) {
  ModelConfig c = tiny();
  c.tied_embeddings = true;
  const WorkloadModel tied = build_workload(c);
  const WorkloadModel untied = build_workload(tiny());
  EXPECT_THROW(tied.weight_index("head"), InputError);
  EXPECT_EQ(tied.totals.parameters, untied.totals.parameters - 256 * 64);
  EXPECT_EQ(tied.layers.back().forward, untied.layers.back().forward);
}

TEST(Workload, QkNormAddsVectorWeights) {
  ModelConfig c = tiny();
  c.qk_norm = true;
  c.kv_heads = 2;
  const WorkloadModel w = build_workload(c);
  const WeightSpec& q_norm = w.weights[w.weight_index("layer0.attn.q_norm")];
  const WeightSpec& k_norm = w.weights[w.weight_index("layer0.attn.k_norm")];
  EXPECT_EQ(q_norm.order, 1);
  EXPECT_EQ(q_norm.cols, 64);
  EXPECT_EQ(k_norm.cols, 32);
}

TEST(Workload, InvalidConfigIsRejected) {
  ModelConfig c = tiny();
  c.heads = 5;
  EXPECT_THROW(build_workload(c), InputError);
}

// OLMo-1B: 16 layers of 4·2048² attention + 3·2048·8192 SwiGLU, tied 50304 x 2048 embedding,
// non-parametric norms: 1,176,764,416 parameters (the published "1.18B").
TEST(Workload, Olmo1bParameterCountAndFlops) {
  const WorkloadModel w = build_workload(find_model_config("olmo-1b"));
  const double d = 2048, f = 8192, vocab = 50304, layers = 16;
  const double per_layer = 4 * d * d + 3 * d * f;
  const double expected = layers * per_layer + vocab * d;
  EXPECT_DOUBLE_EQ(static_cast<double>(w.totals.parameters), expected);
  EXPECT_NEAR(static_cast<double>(w.totals.parameters), 1.18e9, 0.01 * 1.18e9);

  // 6·N·T: every parameter is in a matmul (the tied embedding as the head); attention adds.
  const double tokens = 8 * 1024;
  const double six_nt = 6.0 * expected * tokens;
  const double ratio = w.totals.flops_per_step / six_nt;
  EXPECT_GT(ratio, 1.0);
  EXPECT_LT(ratio, 1.15);
  // Attention: 3 passes x L x 2·B·S²·d (causal half), relative to 6·N·T.
  const double attention = 3 * layers * 2 * 8 * 1024.0 * 1024.0 * d;
  EXPECT_NEAR(w.totals.flops_per_step, six_nt + attention, 1e-9 * six_nt);
}

// OLMo-2 7B: 32 layers of 4·4096² attention + 3·4096·11008 SwiGLU + four 4096-wide gains
// (attention and MLP norms, q_norm, k_norm), untied 100352 x 4096 embedding and head, final
// norm: 7,298,617,344 parameters (the published "7.3B").
TEST(Workload, Olmo2_7bParameterCountAndFlops) {
  const WorkloadModel w = build_workload(find_model_config("olmo2-7b"));
  const double d = 4096, f = 11008, vocab = 100352, layers = 32;
  const double expected = layers * (4 * d * d + 3 * d * f + 4 * d) + 2 * vocab * d + d;
  EXPECT_DOUBLE_EQ(static_cast<double>(w.totals.parameters), expected);
  EXPECT_NEAR(static_cast<double>(w.totals.parameters), 7.3e9, 0.01 * 7.3e9);

  const double tokens = 4 * 1024;
  const double ratio = w.totals.flops_per_step / (6.0 * expected * tokens);
  // The input embedding (5.6% of N) is a gather, not a matmul; attention adds ~2%.
  EXPECT_GT(ratio, 0.85);
  EXPECT_LT(ratio, 1.15);
  EXPECT_LT(ratio, 1.0);
}

}  // namespace
}  // namespace asteria::workload

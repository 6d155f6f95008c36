// The model's parameter list, initial values, FLOP count and input errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/common/error.hpp"
#include "core/model/gpt.hpp"
#include "core/workload/workload_model.hpp"
#include "tests/model/model_test_support.hpp"

namespace asteria::model {
namespace {

using testing::random_tokens;
using testing::small_config;
using workload::MlpKind;

TEST(GptParameters, EqualTheWorkloadWeightsForEveryVariant) {
  for (const MlpKind mlp : {MlpKind::swiglu, MlpKind::gelu})
    for (const bool tied : {false, true})
      for (const bool norms : {false, true}) {
        const workload::ModelConfig c = small_config(mlp, tied, norms);
        const workload::WorkloadModel work = workload::build_workload(c);
        const Gpt<float> gpt(c, 1);
        SCOPED_TRACE(std::string(workload::to_string(mlp)) + (tied ? " tied" : " untied") +
                     (norms ? " norms" : " no norms"));
        ASSERT_EQ(gpt.tensor_count(), work.weights.size());
        std::size_t total = 0;
        for (std::size_t i = 0; i < gpt.tensor_count(); ++i) {
          EXPECT_EQ(gpt.tensor(i).name, work.weights[i].name);
          EXPECT_EQ(gpt.tensor(i).rows, work.weights[i].rows);
          EXPECT_EQ(gpt.tensor(i).cols, work.weights[i].cols);
          EXPECT_EQ(gpt.tensor(i).order, work.weights[i].order);
          EXPECT_EQ(gpt.tensor(i).layer, work.weights[i].layer);
          EXPECT_EQ(gpt.parameter(i).size(), static_cast<std::size_t>(work.weights[i].elements()));
          EXPECT_EQ(gpt.gradient(i).size(), static_cast<std::size_t>(work.weights[i].elements()));
          EXPECT_EQ(gpt.gradient_matrix(i).rows(), work.weights[i].rows);
          total += gpt.parameter(i).size();
        }
        EXPECT_EQ(gpt.parameter_count(), total);
      }
}

TEST(GptParameters, HandListedNamesAndShapesForOneGeluLayer) {
  workload::ModelConfig c = small_config(MlpKind::gelu, false, true);
  c.layers = 1;
  Gpt<double> gpt(c, 1);
  // d 16, f 32, vocab 64; out_features x in_features.
  const std::vector<std::tuple<std::string, std::int64_t, std::int64_t>> expected = {
      {"embedding", 64, 16},     {"layer0.attn_norm", 1, 16}, {"layer0.attn.q", 16, 16},
      {"layer0.attn.k", 16, 16}, {"layer0.attn.v", 16, 16},   {"layer0.attn.o", 16, 16},
      {"layer0.mlp_norm", 1, 16}, {"layer0.mlp.fc1", 32, 16}, {"layer0.mlp.fc2", 16, 32},
      {"final_norm", 1, 16},     {"head", 64, 16}};
  ASSERT_EQ(gpt.tensor_count(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(gpt.tensor(i).name, std::get<0>(expected[i]));
    EXPECT_EQ(gpt.parameter_matrix(i).rows(), std::get<1>(expected[i]));
    EXPECT_EQ(gpt.parameter_matrix(i).cols(), std::get<2>(expected[i]));
  }
  EXPECT_EQ(gpt.parameter_count(), 64u * 16 + 16 + 4 * 256 + 16 + 2 * 512 + 16 + 64 * 16);
}

double sample_std(std::span<const double> v) {
  double sum = 0.0, squares = 0.0;
  for (double x : v) {
    sum += x;
    squares += x * x;
  }
  const double n = static_cast<double>(v.size());
  return std::sqrt(squares / n - (sum / n) * (sum / n));
}

TEST(GptParameters, InitialValuesFollowTheStatedScales) {
  workload::ModelConfig c = small_config(MlpKind::swiglu, false, true);
  c.d_model = 64;
  c.mlp_hidden = 256;
  c.layers = 2;
  const Gpt<double> gpt(c, 42);
  const workload::WorkloadModel work = workload::build_workload(c);
  // 0.02, and 0.02 / sqrt(2 · 2 layers) = 0.01 for output projections; gains exactly 1.
  // 16384 samples: the sample std is within ~1% of the true one; allow 5%.
  EXPECT_NEAR(sample_std(gpt.parameter(work.weight_index("layer1.mlp.up"))), 0.02, 0.001);
  EXPECT_NEAR(sample_std(gpt.parameter(work.weight_index("layer0.mlp.down"))), 0.01, 0.0005);
  EXPECT_NEAR(sample_std(gpt.parameter(work.weight_index("layer1.attn.o"))), 0.01, 0.0005);
  EXPECT_NEAR(sample_std(gpt.parameter(work.weight_index("embedding"))), 0.02, 0.001);
  for (double g : gpt.parameter(work.weight_index("layer0.mlp_norm"))) EXPECT_EQ(g, 1.0);
}

TEST(GptParameters, SameSeedSameWeightsInFloatAndDouble) {
  const workload::ModelConfig c = small_config(MlpKind::gelu, true, true);
  const Gpt<double> a(c, 7);
  const Gpt<double> b(c, 7);
  const Gpt<float> f(c, 7);
  const Gpt<double> other(c, 8);
  bool any_differs = false;
  for (std::size_t i = 0; i < a.tensor_count(); ++i)
    for (std::size_t e = 0; e < a.parameter(i).size(); ++e) {
      EXPECT_EQ(a.parameter(i)[e], b.parameter(i)[e]);
      EXPECT_EQ(f.parameter(i)[e], static_cast<float>(a.parameter(i)[e]));
      any_differs = any_differs || other.parameter(i)[e] != a.parameter(i)[e];
    }
  EXPECT_TRUE(any_differs);
}

TEST(GptFlops, HandCountForATinyModel) {
  // layers 1, d 4, heads 2, f 8 (GELU), vocab 10; batch 2, L 3, so 6 tokens.
  // Layer matmuls: q, k, v, o 4·16 + fc1, fc2 2·32 = 128 weights → 2·6·128 = 1536;
  // causal attention 2·batch·L²·d = 2·2·9·4 = 144; head 2·6·10·4 = 480.
  // Forward 2160, forward + backward 3 x 2160 = 6480.
  workload::ModelConfig c = small_config(MlpKind::gelu, true, true);
  c.layers = 1;
  c.d_model = 4;
  c.mlp_hidden = 8;
  c.vocab = 10;
  const Gpt<float> gpt(c, 1);
  EXPECT_DOUBLE_EQ(gpt.step_flops(2, 3), 6480.0);
}

TEST(GptFlops, MatchTheWorkloadModelsStep) {
  for (const MlpKind mlp : {MlpKind::swiglu, MlpKind::gelu}) {
    workload::ModelConfig c = small_config(mlp, false, true);
    const Gpt<float> gpt(c, 1);
    c.micro_batch = 3;
    c.sequence_length = 5;
    // The workload's matmul layers (it also charges the embedding's scatter-add, elementwise work
    // that step_flops leaves out like every other elementwise operation).
    double matmul_flops = 0.0;
    for (const workload::LayerWork& layer : workload::build_workload(c).layers)
      for (const platform::Costs* pass : {&layer.forward, &layer.backward})
        for (const platform::Cost& piece : pass->pieces())
          if (piece.kind == platform::WorkKind::gemm) matmul_flops += piece.flops;
    EXPECT_DOUBLE_EQ(gpt.step_flops(3, 5), matmul_flops);
  }
}

template <class Fn>
void expect_input_error(Fn&& fn, const std::string& source, const std::string& field) {
  try {
    fn();
    ADD_FAILURE() << "expected an InputError on " << field;
  } catch (const InputError& e) {
    EXPECT_EQ(e.source(), source);
    EXPECT_EQ(e.field(), field);
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
  }
}

TEST(GptErrors, UnsupportedConfigsNameTheirField) {
  workload::ModelConfig gqa = small_config(MlpKind::swiglu, false, true);
  gqa.kv_heads = 1;
  expect_input_error([&] { Gpt<float> g(gqa, 1); }, "test-model", "kv_heads");
  workload::ModelConfig qk = small_config(MlpKind::swiglu, false, true);
  qk.qk_norm = true;
  expect_input_error([&] { Gpt<float> g(qk, 1); }, "test-model", "qk_norm");
  workload::ModelConfig odd = small_config(MlpKind::swiglu, false, true);
  odd.d_model = 6;  // head_dim 3
  expect_input_error([&] { Gpt<float> g(odd, 1); }, "test-model", "heads");
  workload::ModelConfig invalid = small_config(MlpKind::swiglu, false, true);
  invalid.heads = 3;  // does not divide d_model: the workload's own check
  expect_input_error([&] { Gpt<float> g(invalid, 1); }, "test-model", "heads");
}

TEST(GptErrors, BadTokensNameTheirField) {
  const workload::ModelConfig c = small_config(MlpKind::gelu, false, true);  // vocab 64, L <= 8
  Gpt<float> gpt(c, 1);
  std::vector<TokenId> tokens = random_tokens(2 * 9, c.vocab, 1);
  EXPECT_NO_THROW(gpt.forward_backward(tokens, 2));
  expect_input_error([&] { gpt.forward_backward(std::span(tokens).first(17), 2); }, "tokens", "size");
  expect_input_error([&] { gpt.loss(std::span(tokens).first(2), 2); }, "tokens", "size");  // L = 0
  const std::vector<TokenId> too_long = random_tokens(2 * 10, c.vocab, 2);         // L = 9 > 8
  expect_input_error([&] { gpt.loss(too_long, 2); }, "tokens", "size");
  expect_input_error([&] { gpt.loss(tokens, 0); }, "tokens", "batch");
  tokens[5] = 64;
  expect_input_error([&] { gpt.forward_backward(tokens, 2); }, "tokens", "id");
  tokens[5] = -1;
  expect_input_error([&] { gpt.loss(tokens, 2); }, "tokens", "id");
}

}  // namespace
}  // namespace asteria::model

// The model as a training step sees it: loss at initialisation, a batch overfit by plain SGD,
// repeatable steps, and loss() agreeing with forward_backward().
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "core/model/gpt.hpp"
#include "tests/model/model_test_support.hpp"

namespace asteria::model {
namespace {

using testing::random_tokens;
using testing::small_config;
using workload::MlpKind;

workload::ModelConfig byte_config(MlpKind mlp, bool tied) {
  workload::ModelConfig c = small_config(mlp, tied, true);
  c.d_model = 32;
  c.heads = 4;
  c.kv_heads = 4;
  c.mlp_hidden = 64;
  c.vocab = 256;
  c.sequence_length = 16;
  return c;
}

TEST(GptTraining, InitialLossIsNearLogVocab) {
  // Small weights give near-uniform predictions over 256 byte values: loss ≈ ln 256 = 5.545.
  for (const MlpKind mlp : {MlpKind::swiglu, MlpKind::gelu})
    for (const bool tied : {false, true}) {
      Gpt<float> gpt(byte_config(mlp, tied), 5);
      const std::vector<TokenId> tokens = random_tokens(4 * 17, 256, 29);
      EXPECT_NEAR(gpt.loss(tokens, 4), std::log(256.0), 0.1);
    }
}

TEST(GptTraining, PlainSgdOverfitsOneBatch) {
  // 34 tokens memorised by ~60k weights: from ln 256 to a few hundredths in 100 steps (the path is
  // not monotone without clipping, so only the end is checked).
  for (const MlpKind mlp : {MlpKind::swiglu, MlpKind::gelu}) {
    Gpt<float> gpt(byte_config(mlp, mlp == MlpKind::gelu), 5);
    const std::vector<TokenId> tokens = random_tokens(2 * 17, 256, 31);
    const double first = gpt.forward_backward(tokens, 2);
    double last = first;
    const float learning_rate = 0.5f;
    for (int step = 0; step < 100; ++step) {
      for (std::size_t i = 0; i < gpt.tensor_count(); ++i) {
        const std::span<float> w = gpt.parameter(i);
        const std::span<const float> g = std::as_const(gpt).gradient(i);
        for (std::size_t e = 0; e < w.size(); ++e) w[e] -= learning_rate * g[e];
      }
      last = gpt.forward_backward(tokens, 2);
    }
    EXPECT_LT(last, 0.2 * first) << workload::to_string(mlp);
  }
}

bool same_bits(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size_bytes()) == 0;
}

TEST(GptTraining, RepeatedStepsAreBitIdenticalAndDoNotAccumulate) {
  Gpt<float> gpt(byte_config(MlpKind::swiglu, true), 9);
  const std::vector<TokenId> tokens = random_tokens(3 * 17, 256, 37);
  const double loss = gpt.forward_backward(tokens, 3);
  std::vector<std::vector<float>> first;
  for (std::size_t i = 0; i < gpt.tensor_count(); ++i)
    first.emplace_back(std::as_const(gpt).gradient(i).begin(), std::as_const(gpt).gradient(i).end());

  // A different shape in between (fewer, shorter sequences) re-lays the workspace.
  const std::vector<TokenId> other = random_tokens(1 * 6, 256, 41);
  gpt.forward_backward(other, 1);
  EXPECT_EQ(gpt.forward_backward(tokens, 3), loss);
  for (std::size_t i = 0; i < gpt.tensor_count(); ++i)
    EXPECT_TRUE(same_bits(std::as_const(gpt).gradient(i), first[i])) << gpt.tensor(i).name;
  EXPECT_EQ(gpt.forward_backward(tokens, 3), loss);
  for (std::size_t i = 0; i < gpt.tensor_count(); ++i)
    EXPECT_TRUE(same_bits(std::as_const(gpt).gradient(i), first[i])) << gpt.tensor(i).name;
}

TEST(GptTraining, LossAgreesWithForwardBackwardAndLeavesGradients) {
  Gpt<float> gpt(byte_config(MlpKind::gelu, false), 13);
  const std::vector<TokenId> tokens = random_tokens(2 * 17, 256, 43);
  const double trained = gpt.forward_backward(tokens, 2);
  const std::vector<float> gradient(std::as_const(gpt).gradient(0).begin(), std::as_const(gpt).gradient(0).end());
  const std::vector<TokenId> other = random_tokens(2 * 9, 256, 47);
  const double other_loss = gpt.loss(other, 2);
  EXPECT_NE(other_loss, trained);
  EXPECT_TRUE(same_bits(std::as_const(gpt).gradient(0), gradient));
  EXPECT_EQ(gpt.loss(tokens, 2), trained);
}

TEST(GptTraining, MovedModelKeepsWorking) {
  Gpt<float> gpt(byte_config(MlpKind::gelu, false), 13);
  const std::vector<TokenId> tokens = random_tokens(2 * 17, 256, 43);
  const double before = gpt.loss(tokens, 2);
  Gpt<float> moved(std::move(gpt));
  EXPECT_EQ(moved.loss(tokens, 2), before);
}

}  // namespace
}  // namespace asteria::model

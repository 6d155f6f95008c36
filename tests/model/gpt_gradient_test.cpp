// The whole model's gradient against central finite differences of its loss, in double, for
// every parameter tensor; and the float model against the double one.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "core/model/gpt.hpp"
#include "tests/model/model_test_support.hpp"

namespace asteria::model {
namespace {

using testing::expect_gradient_matches;
using testing::random_tokens;
using testing::random_values;
using testing::small_config;
using workload::MlpKind;

// Moves the weights away from their small initial values (matrices std 0.3, gains 1 ± 0.3) so
// every nonlinearity is exercised well away from zero and gradients are large enough to compare.
void spread_weights(Gpt<double>& gpt) {
  for (std::size_t i = 0; i < gpt.tensor_count(); ++i) {
    const bool gain = gpt.tensor(i).order == 1;
    const std::vector<double> v =
        random_values<double>(gpt.parameter(i).size(), 0.3, 100 + static_cast<std::uint32_t>(i), gain ? 1.0 : 0.0);
    std::ranges::copy(v, gpt.parameter(i).begin());
  }
}

// Entries to check in tensor i: a few spread over the tensor; for the embedding, entries of rows
// that the batch uses as inputs (the others have a zero gradient).
std::vector<std::size_t> sample_entries(const Gpt<double>& gpt, std::size_t i, const std::vector<TokenId>& tokens) {
  const workload::WeightSpec& spec = gpt.tensor(i);
  const auto elements = static_cast<std::size_t>(spec.elements());
  std::vector<std::size_t> entries;
  if (spec.name == "embedding") {
    const auto cols = static_cast<std::size_t>(spec.cols);
    for (std::size_t k = 0; k < 6; ++k)
      entries.push_back(static_cast<std::size_t>(tokens[k * 3]) * cols + (k * 5) % cols);
  } else {
    for (std::size_t k = 0; k < 6; ++k) entries.push_back((k * 7919 + 3) % elements);
  }
  return entries;
}

class GptGradient : public ::testing::TestWithParam<std::tuple<MlpKind, bool, bool>> {};

TEST_P(GptGradient, MatchesFiniteDifferencesForEveryTensor) {
  const auto [mlp, tied, norms] = GetParam();
  const workload::ModelConfig c = small_config(mlp, tied, norms);
  Gpt<double> gpt(c, 3);
  spread_weights(gpt);
  const int batch = 2;
  const std::vector<TokenId> tokens = random_tokens(batch * (c.sequence_length + 1), c.vocab, 17);
  const double loss = gpt.forward_backward(tokens, batch);
  EXPECT_TRUE(std::isfinite(loss));

  const auto value = [&] { return gpt.loss(tokens, batch); };
  for (std::size_t i = 0; i < gpt.tensor_count(); ++i) {
    const std::vector<double> analytic(gpt.gradient(i).begin(), gpt.gradient(i).end());
    double largest = 0.0;
    for (double g : analytic) largest = std::max(largest, std::abs(g));
    EXPECT_GT(largest, 1e-6) << gpt.tensor(i).name << " has no gradient";
    expect_gradient_matches(gpt.parameter(i), analytic, sample_entries(gpt, i, tokens), value, gpt.tensor(i).name);
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, GptGradient,
                         ::testing::Values(std::tuple{MlpKind::swiglu, false, true},
                                           std::tuple{MlpKind::swiglu, true, true},
                                           std::tuple{MlpKind::gelu, false, true},
                                           std::tuple{MlpKind::gelu, true, false}));

double relative_difference(std::span<const float> f, std::span<const double> d) {
  double difference = 0.0, reference = 0.0;
  for (std::size_t i = 0; i < d.size(); ++i) {
    difference += (static_cast<double>(f[i]) - d[i]) * (static_cast<double>(f[i]) - d[i]);
    reference += d[i] * d[i];
  }
  return std::sqrt(difference / reference);
}

TEST(GptPrecision, FloatFollowsDouble) {
  for (const MlpKind mlp : {MlpKind::swiglu, MlpKind::gelu}) {
    workload::ModelConfig c = small_config(mlp, mlp == MlpKind::gelu, true);
    c.d_model = 32;
    c.mlp_hidden = 64;
    c.vocab = 256;
    c.sequence_length = 16;
    Gpt<double> reference(c, 11);
    Gpt<float> single(c, 11);
    const std::vector<TokenId> tokens = random_tokens(4 * 17, c.vocab, 23);
    const double loss_double = reference.forward_backward(tokens, 4);
    const double loss_float = single.forward_backward(tokens, 4);
    EXPECT_NEAR(loss_float, loss_double, 1e-5 * loss_double);
    for (std::size_t i = 0; i < reference.tensor_count(); ++i)
      EXPECT_LT(relative_difference(single.gradient(i), reference.gradient(i)), 1e-4) << reference.tensor(i).name;
  }
}

}  // namespace
}  // namespace asteria::model

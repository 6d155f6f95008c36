#pragma once
// Shared pieces of the model tests: small configs, seeded random data, and a central
// finite-difference check of an analytic gradient.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "core/model/gpt.hpp"
#include "core/workload/model_config.hpp"

namespace asteria::model::testing {

inline workload::ModelConfig small_config(workload::MlpKind mlp, bool tied, bool norm_weights) {
  workload::ModelConfig c;
  c.name = "test-model";
  c.layers = 2;
  c.d_model = 16;
  c.heads = 2;
  c.kv_heads = 2;
  c.mlp_hidden = 32;
  c.mlp = mlp;
  c.vocab = 64;
  c.sequence_length = 8;
  c.micro_batch = 2;
  c.tied_embeddings = tied;
  c.norm_weights = norm_weights;
  return c;
}

inline std::vector<TokenId> random_tokens(std::size_t count, std::int64_t vocab, std::uint32_t seed) {
  std::mt19937 engine(seed);
  std::uniform_int_distribution<TokenId> pick(0, static_cast<TokenId>(vocab - 1));
  std::vector<TokenId> tokens(count);
  for (TokenId& t : tokens) t = pick(engine);
  return tokens;
}

template <class T>
std::vector<T> random_values(std::size_t count, double scale, std::uint32_t seed, double offset = 0.0) {
  std::mt19937 engine(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::vector<T> values(count);
  for (T& v : values) v = static_cast<T>(offset + scale * normal(engine));
  return values;
}

// Compares analytic[i] with the central difference (f(x + h) − f(x − h)) / 2h of `value` for
// each listed index of x, restoring x afterwards: |analytic − numeric| <= rtol · max(|.|) + atol.
inline void expect_gradient_matches(std::span<double> x, std::span<const double> analytic,
                                    const std::vector<std::size_t>& indices, const std::function<double()>& value,
                                    const std::string& what, double rtol = 1e-6, double atol = 1e-10,
                                    double step = 1e-5) {
  for (std::size_t i : indices) {
    const double saved = x[i];
    x[i] = saved + step;
    const double plus = value();
    x[i] = saved - step;
    const double minus = value();
    x[i] = saved;
    const double numeric = (plus - minus) / (2.0 * step);
    const double bound = rtol * std::max(std::abs(numeric), std::abs(analytic[i])) + atol;
    EXPECT_NEAR(analytic[i], numeric, bound) << what << " element " << i;
  }
}

inline std::vector<std::size_t> all_indices(std::size_t count) {
  std::vector<std::size_t> indices(count);
  for (std::size_t i = 0; i < count; ++i) indices[i] = i;
  return indices;
}

}  // namespace asteria::model::testing

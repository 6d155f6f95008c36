// The synthetic model's gradients: a pure function of (seed, layer, step), a low-rank part that
// spans a fixed subspace per layer, and noise of the requested level.
#include <cmath>

#include "tests/driver/driver_test_support.hpp"

namespace asteria::runtime::test {
namespace {

SyntheticModelSpec one_layer(index rows, index cols, int rank, double noise, std::uint64_t seed = 3) {
  SyntheticModelSpec spec;
  spec.layers = {make_layer("w", rows, cols, 1e6, 4)};
  spec.gradients = {seed, rank, noise};
  return spec;
}

std::vector<double> gradient(SyntheticModel<double>& model, std::size_t layer, Step t) {
  model.compute_gradient(layer, t);
  return {model.gradient(layer).begin(), model.gradient(layer).end()};
}

TEST(SyntheticModel, GradientsDependOnlyOnSeedLayerAndStep) {
  SyntheticModel<double> a(small_stack(11));
  SyntheticModel<double> b(small_stack(11));
  // b computes in another order, skipping steps: the values must not care.
  const auto b_late = gradient(b, 2, 5);
  const auto b_early = gradient(b, 0, 1);
  EXPECT_EQ(gradient(a, 0, 1), b_early);
  EXPECT_EQ(gradient(a, 2, 5), b_late);
  EXPECT_NE(gradient(a, 2, 5), gradient(a, 2, 6));
  SyntheticModel<double> other_seed(small_stack(12));
  EXPECT_NE(gradient(a, 0, 1), gradient(other_seed, 0, 1));
  for (std::size_t l = 0; l < a.layer_count(); ++l)
    EXPECT_EQ(std::vector<double>(a.weights(l).begin(), a.weights(l).end()),
              std::vector<double>(b.weights(l).begin(), b.weights(l).end()));
}

TEST(SyntheticModel, WithoutNoiseEveryGradientLiesInOneRankRSubspace) {
  // rank 2: the first columns of three different steps are linearly dependent (the Gram
  // determinant vanishes), while noise makes them independent.
  auto gram_determinant_ratio = [](double noise) {
    SyntheticModel<double> model(one_layer(12, 9, 2, noise));
    std::vector<std::vector<double>> columns;
    for (Step t : {1, 4, 9}) {
      const auto g = gradient(model, 0, t);
      std::vector<double> c;
      for (index i = 0; i < 12; ++i) c.push_back(g[static_cast<std::size_t>(i * 9)]);
      columns.push_back(c);
    }
    double gram[3][3];
    double norms = 1.0;
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) {
        gram[i][j] = 0.0;
        for (std::size_t k = 0; k < 12; ++k) gram[i][j] += columns[i][k] * columns[j][k];
      }
      norms *= gram[i][i];
    }
    const double det = gram[0][0] * (gram[1][1] * gram[2][2] - gram[1][2] * gram[2][1]) -
                       gram[0][1] * (gram[1][0] * gram[2][2] - gram[1][2] * gram[2][0]) +
                       gram[0][2] * (gram[1][0] * gram[2][1] - gram[1][1] * gram[2][0]);
    return std::abs(det) / norms;  // in [0, 1]: 0 for dependent columns, 1 for orthogonal ones
  };
  EXPECT_LT(gram_determinant_ratio(0.0), 1e-10);
  EXPECT_GT(gram_determinant_ratio(0.5), 1e-3);
}

TEST(SyntheticModel, NoiseHasTheRequestedLevelOnTopOfTheSameLowRankPart) {
  const index rows = 64, cols = 48;
  SyntheticModel<double> clean(one_layer(rows, cols, 4, 0.0));
  SyntheticModel<double> noisy(one_layer(rows, cols, 4, 0.3));
  double sum = 0.0, squares = 0.0, signal = 0.0;
  std::size_t n = 0;
  for (Step t = 1; t <= 4; ++t) {
    const auto c = gradient(clean, 0, t);
    const auto g = gradient(noisy, 0, t);
    for (std::size_t i = 0; i < c.size(); ++i) {
      const double e = g[i] - c[i];
      sum += e;
      squares += e * e;
      signal += c[i] * c[i];
      ++n;
    }
  }
  const double mean = sum / static_cast<double>(n);
  EXPECT_NEAR(mean, 0.0, 0.02);
  EXPECT_NEAR(std::sqrt(squares / static_cast<double>(n)), 0.3, 0.02);
  // The low-rank part has about unit variance per element (normalized spectrum).
  EXPECT_GT(signal / static_cast<double>(n), 0.2);
  EXPECT_LT(signal / static_cast<double>(n), 5.0);
}

TEST(SyntheticModel, InvalidSpecsAreRejectedWithTheField) {
  SyntheticModelSpec empty;
  EXPECT_THROW(SyntheticModel<float>{empty}, InputError);
  SyntheticModelSpec bad = one_layer(0, 4, 2, 0.1);
  try {
    SyntheticModel<float> model(bad);
    FAIL() << "a 0x4 layer was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("shape"), std::string::npos) << e.what();
  }
  SyntheticModelSpec no_rank = one_layer(4, 4, 0, 0.1);
  EXPECT_THROW(SyntheticModel<float>{no_rank}, InputError);
}

}  // namespace
}  // namespace asteria::runtime::test

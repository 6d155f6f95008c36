// Weighted non-negative least squares on synthetic data whose answers are known.
#include "hwmodels/calibrate/least_squares.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/common/error.hpp"

namespace asteria::hw::calibrate {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double log_uniform(std::mt19937_64& rng, double low, double high) {
  return std::exp(std::uniform_real_distribution<double>(std::log(low), std::log(high))(rng));
}

double modelled(const std::vector<double>& x, const LinearObservation& o) {
  double sum = 0.0;
  for (std::size_t j = 0; j < x.size(); ++j) sum += x[j] * o.features[j];
  return sum;
}

// GEMM-like work: flops 1e6..1e12, bytes 1e3..1e10 and 1..100 kernel calls, drawn independently.
std::vector<LinearObservation> kernel_timings(std::mt19937_64& rng, std::size_t count, const std::vector<double>& x,
                                              double relative_noise, bool relative_weights) {
  std::normal_distribution<double> noise(0.0, relative_noise);
  std::uniform_int_distribution<int> calls(1, 100);
  std::vector<LinearObservation> observations;
  for (std::size_t i = 0; i < count; ++i) {
    LinearObservation o;
    o.features = {log_uniform(rng, 1e6, 1e12), log_uniform(rng, 1e3, 1e10), double(calls(rng))};
    o.value = modelled(x, o) * (1.0 + noise(rng));
    o.weight = relative_weights ? 1.0 / (o.value * o.value) : 1.0;
    observations.push_back(o);
  }
  return observations;
}

TEST(LeastSquares, RecoversExactCoefficientsAcrossTwelveDecades) {
  const std::vector<double> x{1e-11, 2e-10, 5e-6};  // s/flop, s/byte, s/call
  for (const bool relative : {true, false}) {
    std::mt19937_64 rng(7);
    const std::vector<LinearObservation> observations = kernel_timings(rng, 200, x, 0.0, relative);
    const LinearFit fit = fit_non_negative(observations, 3);
    ASSERT_EQ(fit.coefficients.size(), 3u);
    EXPECT_EQ(fit.observations, 200u);
    for (std::size_t j = 0; j < 3; ++j) {
      EXPECT_NEAR(fit.coefficients[j].value, x[j], x[j] * 1e-9) << "coefficient " << j << ", relative " << relative;
      EXPECT_TRUE(fit.coefficients[j].identified);
      EXPECT_FALSE(fit.coefficients[j].at_bound);
      EXPECT_LT(fit.coefficients[j].standard_error, x[j] * 1e-9);
    }
    EXPECT_LT(fit.rms_relative_residual, 1e-12);
    EXPECT_LT(fit.max_relative_residual, 1e-11);
  }
}

TEST(LeastSquares, ClampsANegativeUnconstrainedCoefficientToZero) {
  // Features (1, 0), (1, 1), (1, 2) with values 3, 2, 1 fit exactly with x = (3, -1). Under
  // x >= 0, x₂ = 0 and x₁ is the mean of the values, 2; the gradient of x₂ there is
  // Σ a₂ r = 0·1 + 1·0 + 2·(-1) = -2 < 0, so x₂ = 0 is optimal. σ² = Σ r² / (3 - 1) = 1 and
  // Σ a₁² = 3, so the standard error of x₁ is 1/√3.
  std::vector<LinearObservation> observations{{{1.0, 0.0}, 3.0}, {{1.0, 1.0}, 2.0}, {{1.0, 2.0}, 1.0}};
  LinearFit fit = fit_non_negative(observations, 2);
  EXPECT_NEAR(fit.coefficients[0].value, 2.0, 1e-14);
  EXPECT_EQ(fit.coefficients[1].value, 0.0);
  EXPECT_TRUE(fit.coefficients[1].at_bound);
  EXPECT_TRUE(fit.coefficients[1].identified);
  EXPECT_TRUE(std::isnan(fit.coefficients[1].standard_error));
  EXPECT_FALSE(fit.coefficients[0].at_bound);
  EXPECT_NEAR(fit.coefficients[0].standard_error, 1.0 / std::sqrt(3.0), 1e-14);
  EXPECT_NEAR(fit.rms_residual, std::sqrt(2.0 / 3.0), 1e-14);
  // Relative residuals 1/3, 0, -1.
  EXPECT_NEAR(fit.rms_relative_residual, std::sqrt((1.0 / 9.0 + 1.0) / 3.0), 1e-14);
  EXPECT_NEAR(fit.max_relative_residual, 1.0, 1e-14);

  // Weights (1, 1, 2): x₁ = Σ w v / Σ w = 7/4; the gradient of x₂ is 1·0.25 + 2·2·(-0.75) < 0.
  observations[2].weight = 2.0;
  fit = fit_non_negative(observations, 2);
  EXPECT_NEAR(fit.coefficients[0].value, 1.75, 1e-14);
  EXPECT_EQ(fit.coefficients[1].value, 0.0);
  EXPECT_TRUE(fit.coefficients[1].at_bound);
}

TEST(LeastSquares, KktConditionsHoldOnRandomProblems) {
  // Random signs in the values make many coefficients bound; the optimum of this convex problem
  // is the x >= 0 with zero gradient where x > 0 and a non-positive one where x = 0.
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::size_t bound = 0;
  for (int trial = 0; trial < 100; ++trial) {
    const std::size_t k = 6;
    std::vector<LinearObservation> observations(15);
    for (LinearObservation& o : observations) {
      for (std::size_t j = 0; j < k; ++j) o.features.push_back(uniform(rng));
      o.value = normal(rng);
      o.weight = 0.5 + uniform(rng);
    }
    const LinearFit fit = fit_non_negative(observations, k);
    std::vector<double> x;
    for (const CoefficientFit& c : fit.coefficients) x.push_back(c.value);
    for (std::size_t j = 0; j < k; ++j) {
      double g = 0.0;
      for (const LinearObservation& o : observations) g += o.weight * o.features[j] * (o.value - modelled(x, o));
      ASSERT_GE(x[j], 0.0);
      if (x[j] > 0.0) {
        EXPECT_NEAR(g, 0.0, 1e-12) << "trial " << trial << ", free coefficient " << j;
      } else {
        EXPECT_LE(g, 1e-12) << "trial " << trial << ", bound coefficient " << j;
        EXPECT_TRUE(fit.coefficients[j].at_bound);
        ++bound;
      }
    }
  }
  EXPECT_GT(bound, 100u);  // the bound case was exercised
}

TEST(LeastSquares, StandardErrorsMatchTheEmpiricalSpread) {
  const std::vector<double> x{1e-11, 2e-10, 5e-6};
  std::mt19937_64 rng(2024);
  const int trials = 300;
  std::vector<double> sum(3, 0.0), sum_squares(3, 0.0), sum_variance(3, 0.0);
  int within_two = 0;  // of 900 estimates; a t with 56 degrees of freedom puts 95 % within 2 σ
  int beyond_four = 0;  // and 0.02 % beyond 4 σ (0.2 expected)
  for (int trial = 0; trial < trials; ++trial) {
    // Weights from the true durations: weights from the noisy ones favour the runs that came
    // out short, a bias of about -2·(3 %)² that would blur the comparison of spreads.
    std::vector<LinearObservation> observations = kernel_timings(rng, 60, x, 0.03, false);
    for (LinearObservation& o : observations) o.weight = 1.0 / (modelled(x, o) * modelled(x, o));
    const LinearFit fit = fit_non_negative(observations, 3);
    for (std::size_t j = 0; j < 3; ++j) {
      const CoefficientFit& c = fit.coefficients[j];
      ASSERT_TRUE(c.identified);
      ASSERT_FALSE(c.at_bound);
      ASSERT_GT(c.standard_error, 0.0);
      const double z = std::abs(c.value - x[j]) / c.standard_error;
      EXPECT_LT(z, 5.0) << "trial " << trial << ", coefficient " << j;
      within_two += z < 2.0;
      beyond_four += z > 4.0;
      sum[j] += c.value;
      sum_squares[j] += c.value * c.value;
      sum_variance[j] += c.standard_error * c.standard_error;
    }
  }
  EXPECT_GT(within_two, 0.92 * 3 * trials);
  EXPECT_LT(within_two, 0.975 * 3 * trials);
  EXPECT_LE(beyond_four, 2);
  for (std::size_t j = 0; j < 3; ++j) {
    const double mean = sum[j] / trials;
    const double spread = std::sqrt((sum_squares[j] - trials * mean * mean) / (trials - 1));
    const double reported = std::sqrt(sum_variance[j] / trials);
    EXPECT_GT(spread / reported, 0.8) << "coefficient " << j;
    EXPECT_LT(spread / reported, 1.25) << "coefficient " << j;
    EXPECT_NEAR(mean, x[j], 4.0 * reported / std::sqrt(double(trials))) << "coefficient " << j;
  }
}

TEST(LeastSquares, RelativeWeightsBeatUniformWeightsOnRelativeResidual) {
  // Durations from ~5e-6 s (latency-bound) to ~10 s (flop-bound) with 5 % noise: unit weights
  // let the seconds-long runs decide the per-call latency, whose share of them is below noise.
  const std::vector<double> x{1e-11, 5e-6};
  std::mt19937_64 rng(5);
  std::normal_distribution<double> noise(0.0, 0.05);
  std::uniform_int_distribution<int> calls(1, 10);
  std::vector<LinearObservation> uniform, relative;
  for (int i = 0; i < 400; ++i) {
    LinearObservation o;
    o.features = {log_uniform(rng, 1e3, 1e12), double(calls(rng))};
    o.value = modelled(x, o) * (1.0 + noise(rng));
    uniform.push_back(o);
    o.weight = 1.0 / (o.value * o.value);
    relative.push_back(o);
  }
  const LinearFit unweighted = fit_non_negative(uniform, 2);
  const LinearFit weighted = fit_non_negative(relative, 2);
  // The relative residual ignores the weights, so both fits are measured alike.
  for (const LinearFit* fit : {&unweighted, &weighted}) {
    const std::vector<double> fitted{fit->coefficients[0].value, fit->coefficients[1].value};
    double squares = 0.0;
    for (const LinearObservation& o : uniform) squares += std::pow((o.value - modelled(fitted, o)) / o.value, 2);
    EXPECT_NEAR(fit->rms_relative_residual, std::sqrt(squares / uniform.size()), 1e-12);
  }
  EXPECT_GT(weighted.rms_relative_residual, 0.04);  // the 5 % noise
  EXPECT_LT(weighted.rms_relative_residual, 0.06);
  EXPECT_LT(weighted.rms_relative_residual, 0.5 * unweighted.rms_relative_residual);
  EXPECT_NEAR(weighted.coefficients[1].value, x[1], 0.05 * x[1]);
  EXPECT_NEAR(weighted.coefficients[0].value, x[0], 0.05 * x[0]);
}

TEST(LeastSquares, CollinearColumnsStayFiniteAndAreNotIdentified) {
  // Columns 0 and 1 identical, column 2 three times column 3: only x₀ + x₁ and x₂·3 + x₃ are
  // determined. Column 4 (calls) is independent of them.
  std::mt19937_64 rng(3);
  std::normal_distribution<double> noise(0.0, 0.01);
  std::vector<LinearObservation> observations;
  for (int i = 0; i < 100; ++i) {
    const double flops = log_uniform(rng, 1e6, 1e12);
    const double bytes = log_uniform(rng, 1e3, 1e10);
    const double calls = 1.0 + i % 17;
    LinearObservation o{{flops, flops, 3.0 * bytes, bytes, calls}, 0.0};
    o.value = (2e-11 * flops + 6e-10 * bytes + 5e-6 * calls) * (1.0 + noise(rng));
    o.weight = 1.0 / (o.value * o.value);
    observations.push_back(o);
  }
  const LinearFit fit = fit_non_negative(observations, 5);
  for (const CoefficientFit& c : fit.coefficients) {
    EXPECT_TRUE(std::isfinite(c.value));
    EXPECT_GE(c.value, 0.0);
  }
  for (std::size_t j = 0; j < 4; ++j) {
    EXPECT_FALSE(fit.coefficients[j].identified) << "coefficient " << j;
    EXPECT_TRUE(std::isnan(fit.coefficients[j].standard_error)) << "coefficient " << j;
  }
  EXPECT_TRUE(fit.coefficients[4].identified);
  EXPECT_NEAR(fit.coefficients[4].value, 5e-6, 0.1 * 5e-6);
  const double flop_rate = fit.coefficients[0].value + fit.coefficients[1].value;
  const double byte_rate = 3.0 * fit.coefficients[2].value + fit.coefficients[3].value;
  EXPECT_NEAR(flop_rate, 2e-11, 0.02 * 2e-11);
  EXPECT_NEAR(byte_rate, 6e-10, 0.02 * 6e-10);
  EXPECT_LT(fit.rms_relative_residual, 0.012);
}

TEST(LeastSquares, ZeroColumnsStayAtZeroUnidentified) {
  // Column 1 is all zero; column 2 is non-zero only where the weight is 0.
  std::vector<LinearObservation> observations;
  for (int i = 1; i <= 10; ++i) observations.push_back({{double(i), 0.0, 0.0}, 2.0 * i});
  observations.push_back({{1.0, 0.0, 5.0}, 100.0, 0.0});
  const LinearFit fit = fit_non_negative(observations, 3);
  EXPECT_EQ(fit.observations, 10u);
  EXPECT_NEAR(fit.coefficients[0].value, 2.0, 1e-14);
  EXPECT_TRUE(fit.coefficients[0].identified);
  for (std::size_t j : {1u, 2u}) {
    EXPECT_EQ(fit.coefficients[j].value, 0.0);
    EXPECT_FALSE(fit.coefficients[j].identified);
    EXPECT_FALSE(fit.coefficients[j].at_bound);
    EXPECT_TRUE(std::isnan(fit.coefficients[j].standard_error));
  }
  EXPECT_LT(fit.rms_residual, 1e-14);

  // Nothing but zero columns: no coefficient, and the residuals are the values.
  const LinearFit empty = fit_non_negative(std::vector<LinearObservation>{{{0.0}, 3.0}, {{0.0}, 4.0}}, 1);
  EXPECT_EQ(empty.coefficients[0].value, 0.0);
  EXPECT_FALSE(empty.coefficients[0].identified);
  EXPECT_NEAR(empty.rms_residual, std::sqrt(12.5), 1e-14);
  EXPECT_NEAR(empty.max_relative_residual, 1.0, 1e-15);
}

TEST(LeastSquares, NoStandardErrorWithoutSpareObservations) {
  const std::vector<LinearObservation> observations{{{1.0, 1.0}, 3.0}, {{1.0, 2.0}, 5.0}};
  const LinearFit fit = fit_non_negative(observations, 2);
  EXPECT_NEAR(fit.coefficients[0].value, 1.0, 1e-14);
  EXPECT_NEAR(fit.coefficients[1].value, 2.0, 1e-14);
  EXPECT_TRUE(fit.coefficients[0].identified);
  EXPECT_TRUE(std::isnan(fit.coefficients[0].standard_error));
  EXPECT_TRUE(std::isnan(fit.coefficients[1].standard_error));
}

TEST(LeastSquares, InvalidInputsThrowInputError) {
  const double inf = std::numeric_limits<double>::infinity();
  using Observations = std::vector<LinearObservation>;
  EXPECT_THROW(fit_non_negative(Observations{}, 2), InputError);
  EXPECT_THROW(fit_non_negative(Observations{{{}, 1.0}}, 0), InputError);
  EXPECT_THROW(fit_non_negative(Observations{{{1.0, 2.0}, 1.0}, {{1.0}, 1.0}}, 2), InputError);
  EXPECT_THROW(fit_non_negative(Observations{{{1.0, kNaN}, 1.0}}, 2), InputError);
  EXPECT_THROW(fit_non_negative(Observations{{{1.0, inf}, 1.0}}, 2), InputError);
  EXPECT_THROW(fit_non_negative(Observations{{{1.0, 2.0}, kNaN}}, 2), InputError);
  EXPECT_THROW(fit_non_negative(Observations{{{1.0, 2.0}, -inf}}, 2), InputError);
  EXPECT_THROW(fit_non_negative(Observations{{{1.0, 2.0}, 1.0, -1.0}}, 2), InputError);
  EXPECT_THROW(fit_non_negative(Observations{{{1.0, 2.0}, 1.0, kNaN}}, 2), InputError);
  EXPECT_THROW(fit_non_negative(Observations{{{1.0, 2.0}, 1.0, inf}}, 2), InputError);
  EXPECT_THROW(fit_non_negative(Observations{{{1.0, 2.0}, 1.0, 0.0}}, 2), InputError);  // nothing weighted
  try {
    fit_non_negative(Observations{{{1.0, 2.0}, 1.0}, {{1.0}, 1.0}}, 2);
    FAIL() << "expected InputError";
  } catch (const InputError& error) {
    EXPECT_EQ(error.field(), "observations[1].features");
  }
}

}  // namespace
}  // namespace asteria::hw::calibrate

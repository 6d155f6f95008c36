// The c·n³ fit on synthetic timings whose answers are worked out by hand.
#include "hwmodels/calibrate/cubic_fit.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/common/error.hpp"

namespace asteria::hw::calibrate {
namespace {

TEST(CalibrateFit, RecoversAnExactCubicCoefficient) {
  const double c = 3.7e-11;
  std::vector<TimedSize> timings;
  for (const std::int64_t n : {256, 512, 1024, 2048}) timings.push_back({n, c * std::pow(double(n), 3)});
  const CubicFit fit = fit_cubic(timings);
  EXPECT_NEAR(fit.c, c, c * 1e-12);
  EXPECT_NEAR(fit.relative_rms_residual, 0.0, 1e-12);
  EXPECT_EQ(fit.points, 4u);
}

TEST(CalibrateFit, IsTheLeastSquaresSolutionWithItsRelativeResidual) {
  // (n, t) = (1, 1) and (2, 16): c = (1·1 + 16·8) / (1 + 64) = 129/65.
  // Relative residuals: (1 - 129/65)/1 = -64/65 = -128/130 and (16 - 8·129/65)/16 = 1/130,
  // so the relative RMS is sqrt((128² + 1²) / 2) / 130.
  const std::vector<TimedSize> timings{{1, 1.0}, {2, 16.0}};
  const CubicFit fit = fit_cubic(timings);
  EXPECT_NEAR(fit.c, 129.0 / 65.0, 1e-15);
  EXPECT_NEAR(fit.relative_rms_residual, std::sqrt((128.0 * 128.0 + 1.0) / 2.0) / 130.0, 1e-15);
  // Least squares: moving c either way increases the sum of squared errors.
  auto squared_error = [&](double coefficient) {
    double sum = 0.0;
    for (const TimedSize& p : timings) sum += std::pow(p.seconds - coefficient * std::pow(double(p.n), 3), 2);
    return sum;
  };
  EXPECT_LT(squared_error(fit.c), squared_error(fit.c * 1.001));
  EXPECT_LT(squared_error(fit.c), squared_error(fit.c * 0.999));
}

TEST(CalibrateFit, LargeSizesDominateTheFit) {
  // A fixed 1 ms overhead at every size: most of the time at n = 64, little at n = 2048. The n⁶
  // weights keep the fit near the true c: it overshoots by 1e-3·Σn³/Σn⁶ = 1e-3 x 9.66e9 /
  // 7.49e19 = 1.29e-13 s, 0.26 % of c, while the n = 64 point misses by almost 100 %.
  const double c = 5e-11;
  std::vector<TimedSize> timings;
  for (const std::int64_t n : {64, 1024, 2048}) timings.push_back({n, c * std::pow(double(n), 3) + 1e-3});
  const CubicFit fit = fit_cubic(timings);
  EXPECT_GT(fit.c, c * 1.0025);
  EXPECT_LT(fit.c, c * 1.0027);
  EXPECT_GT(fit.relative_rms_residual, 0.98 / std::sqrt(3.0));
}

TEST(CalibrateFit, LargerSizesDropTheSmallestOfThreeOrMore) {
  const std::vector<TimedSize> three{{512, 3.0}, {128, 1.0}, {256, 2.0}};
  const std::vector<TimedSize> fitted = larger_sizes(three);
  ASSERT_EQ(fitted.size(), 2u);
  EXPECT_EQ(fitted[0].n, 256);
  EXPECT_EQ(fitted[1].n, 512);
  EXPECT_EQ(fitted[1].seconds, 3.0);

  const std::vector<TimedSize> two{{512, 3.0}, {128, 1.0}};
  const std::vector<TimedSize> kept = larger_sizes(two);
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[0].n, 128);
  EXPECT_EQ(describe_sizes(kept), "n = 128, 512");
}

TEST(CalibrateFit, RejectsEmptyOrNonPositiveTimings) {
  EXPECT_THROW(fit_cubic(std::vector<TimedSize>{}), InputError);
  EXPECT_THROW(fit_cubic(std::vector<TimedSize>{{0, 1.0}}), InputError);
  EXPECT_THROW(fit_cubic(std::vector<TimedSize>{{256, 0.0}}), InputError);
  EXPECT_THROW(fit_cubic(std::vector<TimedSize>{{256, std::numeric_limits<double>::quiet_NaN()}}), InputError);
}

}  // namespace
}  // namespace asteria::hw::calibrate

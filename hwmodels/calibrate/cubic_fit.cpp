#include "hwmodels/calibrate/cubic_fit.hpp"

#include <algorithm>
#include <cmath>

#include "core/common/error.hpp"

namespace asteria::hw::calibrate {

CubicFit fit_cubic(std::span<const TimedSize> timings) {
  if (timings.empty()) throw InputError("c·n³ fit", "timings", "expected at least one timed size");
  double sum_t_n3 = 0.0;
  double sum_n6 = 0.0;
  for (const TimedSize& point : timings) {
    if (point.n <= 0 || !(std::isfinite(point.seconds) && point.seconds > 0.0))
      throw InputError("c·n³ fit", "timings",
                       "expected sizes > 0 and finite times > 0, found n = " + std::to_string(point.n) +
                           ", t = " + std::to_string(point.seconds) + " s");
    const double n3 = std::pow(static_cast<double>(point.n), 3);
    sum_t_n3 += point.seconds * n3;
    sum_n6 += n3 * n3;
  }
  CubicFit fit;
  fit.c = sum_t_n3 / sum_n6;
  fit.points = timings.size();
  double sum_squares = 0.0;
  for (const TimedSize& point : timings) {
    const double relative = (point.seconds - fit.c * std::pow(static_cast<double>(point.n), 3)) / point.seconds;
    sum_squares += relative * relative;
  }
  fit.relative_rms_residual = std::sqrt(sum_squares / static_cast<double>(timings.size()));
  return fit;
}

std::vector<TimedSize> larger_sizes(std::span<const TimedSize> timings) {
  std::vector<TimedSize> sorted(timings.begin(), timings.end());
  std::sort(sorted.begin(), sorted.end(), [](const TimedSize& a, const TimedSize& b) { return a.n < b.n; });
  if (sorted.size() >= 3) sorted.erase(sorted.begin());
  return sorted;
}

std::string describe_sizes(std::span<const TimedSize> timings) {
  std::string text = "n =";
  for (std::size_t i = 0; i < timings.size(); ++i) text += (i == 0 ? " " : ", ") + std::to_string(timings[i].n);
  return text;
}

}  // namespace asteria::hw::calibrate

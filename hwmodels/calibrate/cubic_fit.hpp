#pragma once
// Fits t = c·n³ to timings of an n x n factorization (eigh, QR), the cost model's form.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace asteria::hw::calibrate {

struct TimedSize {
  std::int64_t n = 0;    // matrix dimension
  double seconds = 0.0;  // time of one factorization
};

struct CubicFit {
  double c = 0.0;                     // seconds per n³
  double relative_rms_residual = 0.0;  // sqrt(mean(((t - c·n³) / t)²)) over the fitted points
  std::size_t points = 0;
};

// Least squares through the origin: c = Σ t·n³ / Σ n⁶ (minimizes Σ (t - c·n³)²).
// Throws InputError for no timings, or a size or time that is not finite and > 0.
CubicFit fit_cubic(std::span<const TimedSize> timings);

// The timings the fit uses: all but the smallest size when there are three or more, because
// small factorizations are dominated by overheads the c·n³ model does not describe. Sorted by n.
std::vector<TimedSize> larger_sizes(std::span<const TimedSize> timings);

// A factorization timed at several sizes and its fit on the larger ones.
struct CubicTimings {
  std::vector<TimedSize> timings;  // every size timed, ascending n
  CubicFit fit;                    // on larger_sizes(timings)
  std::string method;              // "LAPACK ssyevd (vectors), 1 thread, best of 3, n = 256, 512, 1024; ..."

  bool valid() const noexcept { return fit.points > 0 && fit.c > 0.0; }
};

// "n = 256, 512, 1024" for method texts.
std::string describe_sizes(std::span<const TimedSize> timings);

}  // namespace asteria::hw::calibrate

#pragma once
// What one calibration measurement yields: a value in SI units and how it was obtained, so the
// profile field it feeds can say so ("SGEMM n=2048, 1 thread, best of 5").
#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>

namespace asteria::hw::calibrate {

struct Measured {
  double value = 0.0;  // SI: FLOP/s, bytes/s, bytes, seconds
  std::string method;  // how: what ran, its size, threads, repetitions; empty when not measured

  // A measurement that happened and gave a usable number.
  bool valid() const noexcept { return std::isfinite(value) && value > 0.0 && !method.empty(); }
};

// A GEMM rate at one size, the size kept: one n x n x n product takes 2n³ / rate.
struct SizedRate {
  std::int64_t n = 0;
  Measured rate;  // FLOP/s

  double seconds_per_product() const noexcept {
    const auto d = static_cast<double>(n);
    return 2.0 * d * d * d / rate.value;
  }
};

using WallClock = std::chrono::steady_clock;

inline double seconds_between(WallClock::time_point start, WallClock::time_point stop) {
  return std::chrono::duration<double>(stop - start).count();
}

// Shortest of `repeats` timed runs of `run`; `prepare` runs untimed before each one (restoring
// inputs a run overwrites). The shortest run is the one least disturbed by the rest of the machine.
template <class Prepare, class Run>
double best_seconds(int repeats, Prepare&& prepare, Run&& run) {
  double best = INFINITY;
  for (int i = 0; i < repeats; ++i) {
    prepare();
    const WallClock::time_point start = WallClock::now();
    run();
    const double elapsed = seconds_between(start, WallClock::now());
    if (elapsed < best) best = elapsed;
  }
  return best;
}

template <class Run>
double best_seconds(int repeats, Run&& run) {
  return best_seconds(repeats, [] {}, run);
}

}  // namespace asteria::hw::calibrate

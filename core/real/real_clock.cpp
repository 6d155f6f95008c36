#include "core/real/real_clock.hpp"

#include <algorithm>
#include <cmath>
#include <thread>

namespace asteria::real {

platform::Seconds RealClock::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - origin_).count();
}

void RealClock::sleep_until(platform::Seconds t) {
  if (std::isnan(t)) return;
  t = std::min(t, 1.0e9);  // ~30 years: "forever" without overflowing the duration cast
  const auto deadline =
      origin_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(t));
  // sleep_until may wake early on some systems; loop until the deadline has really passed.
  while (std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_until(deadline);
}

}  // namespace asteria::real

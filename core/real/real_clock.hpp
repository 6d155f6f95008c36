#pragma once
// Wall time for the real backend: steady (never jumps), in seconds since the clock was made.
#include <chrono>

#include "core/platform/clock.hpp"

namespace asteria::real {

class RealClock final : public platform::Clock {
 public:
  RealClock() : origin_(std::chrono::steady_clock::now()) {}
  platform::Seconds now() const override;
  void sleep_until(platform::Seconds t) override;  // returns at once when t has passed

 private:
  std::chrono::steady_clock::time_point origin_;
};

}  // namespace asteria::real

#pragma once
#include "core/platform/time.hpp"

namespace asteria::platform {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual Seconds now() const = 0;
  // Blocks the calling thread (or actor) until now() >= t.
  virtual void sleep_until(Seconds t) = 0;
  void sleep_for(Seconds d) { sleep_until(now() + d); }
};

}  // namespace asteria::platform

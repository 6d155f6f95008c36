#include "core/real/real_sync.hpp"

#include <stdexcept>

namespace asteria::real {

void RealConditionVariable::wait(platform::Mutex& locked) {
  auto* real = dynamic_cast<RealMutex*>(&locked);
  if (real == nullptr) throw std::invalid_argument("RealConditionVariable::wait: the mutex is not a RealMutex");
  // The caller holds the mutex: adopt it for the wait and hand it back still locked.
  std::unique_lock<std::mutex> lock(real->native(), std::adopt_lock);
  cv_.wait(lock);
  lock.release();
}

}  // namespace asteria::real

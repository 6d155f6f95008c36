#pragma once
// The seam's mutex and condition variable on std:: primitives.
#include <condition_variable>
#include <memory>
#include <mutex>

#include "core/platform/sync.hpp"

namespace asteria::real {

class RealMutex final : public platform::Mutex {
 public:
  void lock() override { mutex_.lock(); }
  void unlock() override { mutex_.unlock(); }
  std::mutex& native() noexcept { return mutex_; }

 private:
  std::mutex mutex_;
};

class RealConditionVariable final : public platform::ConditionVariable {
 public:
  using platform::ConditionVariable::wait;
  // `locked` must be a RealMutex held by the caller (std::invalid_argument otherwise).
  void wait(platform::Mutex& locked) override;
  void notify_one() override { cv_.notify_one(); }
  void notify_all() override { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

class RealSync final : public platform::SyncFactory {
 public:
  std::unique_ptr<platform::Mutex> make_mutex() override { return std::make_unique<RealMutex>(); }
  std::unique_ptr<platform::ConditionVariable> make_condition_variable() override {
    return std::make_unique<RealConditionVariable>();
  }
};

}  // namespace asteria::real

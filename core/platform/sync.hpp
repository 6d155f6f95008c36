#pragma once
// Mutual exclusion and waiting, mapped by each backend to its own primitives (std:: in the real
// backend, s4u::Mutex / s4u::ConditionVariable in simulation, no-ops where there is one thread).
#include <memory>

namespace asteria::platform {

class Mutex {
 public:
  virtual ~Mutex() = default;
  virtual void lock() = 0;
  virtual void unlock() = 0;
};

class ConditionVariable {
 public:
  virtual ~ConditionVariable() = default;
  // Atomically releases `locked` (held by the caller), waits for a notification, re-acquires.
  // May wake spuriously: always wait in a loop on a predicate.
  virtual void wait(Mutex& locked) = 0;
  virtual void notify_one() = 0;
  virtual void notify_all() = 0;

  template <class Predicate>
  void wait(Mutex& locked, Predicate ready) {
    while (!ready()) wait(locked);
  }
};

class LockGuard {
 public:
  explicit LockGuard(Mutex& m) : m_(m) { m_.lock(); }
  // May throw: in simulation, unlocking is a call into the engine, where an actor stopped at the
  // end of the run receives the exception that unwinds it (it must not end in std::terminate).
  ~LockGuard() noexcept(false) { m_.unlock(); }
  LockGuard(const LockGuard&) = delete;
  LockGuard& operator=(const LockGuard&) = delete;

 private:
  Mutex& m_;
};

class SyncFactory {
 public:
  virtual ~SyncFactory() = default;
  virtual std::unique_ptr<Mutex> make_mutex() = 0;
  virtual std::unique_ptr<ConditionVariable> make_condition_variable() = 0;
};

}  // namespace asteria::platform

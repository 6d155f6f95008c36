#pragma once
// Time and synchronization inside the simulation: the clock is SimGrid's simulated clock, the
// mutex and condition variable are s4u ones. Every actor runs on one OS thread, one at a time,
// switching only inside SimGrid calls; code outside any actor (before or after
// Simulation::run, or the scheduler's timers during it) is the only thing running, so there
// locking is a no-op, and a wait or sleep that would block forever throws std::logic_error
// instead. Notifying works from anywhere: a timer (timed_stream_executor.hpp) wakes actors.
#include <memory>

#include <simgrid/s4u.hpp>

#include "core/platform/clock.hpp"
#include "core/platform/sync.hpp"
#include "sim/timers.hpp"

namespace asteria::sim {

class SimClock final : public platform::Clock {
 public:
  platform::Seconds now() const override;
  // The calling actor waits on a semaphore that a timer releases at `t`. Not a SimGrid sleep: a
  // sleep is an action of the host's CPU, so each one (an issuer's per-op launch cost, a
  // thousand a step) made SimGrid re-solve every execution on that CPU (the host workers').
  void sleep_until(platform::Seconds t) override;
  void stop() { timers_.cancel_all(); }  // the mains are done (Simulation)

 private:
  Timers timers_;
};

class SimMutex final : public platform::Mutex {
 public:
  SimMutex() : native_(simgrid::s4u::Mutex::create()) {}
  void lock() override;
  // Unlocking a mutex the calling actor does not hold is ignored: it happens only when an actor
  // is killed at the end of the simulation while waiting on a condition variable, and the
  // unwinding releases its lock guard. An actor unwinding once only daemons are left (they are
  // being stopped: the run is over) lets go of the mutex without calling the engine, which
  // answers no calls from stopped actors under thread contexts (the call would never return).
  void unlock() override;

 private:
  friend class SimConditionVariable;
  simgrid::s4u::MutexPtr native_;
  simgrid::s4u::Actor* owner_ = nullptr;
};

class SimConditionVariable final : public platform::ConditionVariable {
 public:
  SimConditionVariable() : native_(simgrid::s4u::ConditionVariable::create()) {}
  // `locked` must be a SimMutex held by the caller (std::invalid_argument otherwise).
  void wait(platform::Mutex& locked) override;
  void notify_one() override;
  void notify_all() override;

 private:
  simgrid::s4u::ConditionVariablePtr native_;
};

class SimSyncFactory final : public platform::SyncFactory {
 public:
  std::unique_ptr<platform::Mutex> make_mutex() override { return std::make_unique<SimMutex>(); }
  std::unique_ptr<platform::ConditionVariable> make_condition_variable() override {
    return std::make_unique<SimConditionVariable>();
  }
};

// True inside a simulated actor (where blocking calls are allowed).
bool in_actor() noexcept;

}  // namespace asteria::sim

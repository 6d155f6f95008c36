#include "sim/sim_sync.hpp"

#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>

namespace asteria::sim {

namespace sg4 = simgrid::s4u;

bool in_actor() noexcept { return !sg4::this_actor::is_maestro(); }

platform::Seconds SimClock::now() const { return sg4::Engine::get_clock(); }

void SimClock::sleep_until(platform::Seconds t) {
  if (t <= now()) return;
  if (!in_actor())
    throw std::logic_error("SimClock::sleep_until(" + std::to_string(t) +
                           "): simulated time passes only inside Simulation::run (in an actor)");
  const sg4::SemaphorePtr wake = sg4::Semaphore::create(0);
  timers_.at(t, [wake] { wake->release(); });
  wake->acquire();
}

void SimMutex::lock() {
  if (!in_actor()) return;
  native_->lock();
  owner_ = sg4::Actor::self();
}

namespace {

// Every actor left is a daemon: the mains have returned and SimGrid is stopping the rest.
bool only_daemons_left() {
  for (const sg4::ActorPtr& actor : sg4::Engine::get_instance()->get_all_actors())
    if (!actor->is_daemon()) return false;
  return true;
}

}  // namespace

void SimMutex::unlock() {
  if (!in_actor()) return;
  if (owner_ != sg4::Actor::self()) return;
  owner_ = nullptr;
  // Checked only while unwinding (rare): a stopped actor unwinds through its lock guards.
  if (std::uncaught_exceptions() > 0 && only_daemons_left()) return;
  native_->unlock();
}

void SimConditionVariable::wait(platform::Mutex& locked) {
  auto* mutex = dynamic_cast<SimMutex*>(&locked);
  if (mutex == nullptr) throw std::invalid_argument("SimConditionVariable::wait: the mutex is not a SimMutex");
  if (!in_actor())
    throw std::logic_error(
        "SimConditionVariable::wait: nothing can wake a wait outside Simulation::run (outside any actor)");
  // The caller holds the s4u mutex: lend it to the wait, which releases and re-acquires it, and
  // never let the unique_lock unlock it (not even when the actor is killed mid-wait).
  mutex->owner_ = nullptr;
  std::unique_lock<sg4::Mutex> lock(*mutex->native_, std::adopt_lock);
  try {
    native_->wait(lock);
  } catch (...) {
    lock.release();
    throw;
  }
  lock.release();
  mutex->owner_ = sg4::Actor::self();
}

// From the scheduler's context s4u runs the notification directly (no simcall); before or after
// Simulation::run nothing waits, so it wakes nobody.
void SimConditionVariable::notify_one() { native_->notify_one(); }

void SimConditionVariable::notify_all() { native_->notify_all(); }

}  // namespace asteria::sim

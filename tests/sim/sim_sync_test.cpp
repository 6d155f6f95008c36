// The simulated mutex and condition variable when the run ends: SimGrid stops the daemon actors
// (host workers, copy engines, collectives) as soon as the last main returns, wherever they are,
// inside a notify or an unlock included. The stopped actor must unwind through its lock guards
// without ending the process (std::terminate from a destructor) or the run (an engine call that
// a stopped actor never gets answered, which hangs under thread contexts).
#include <gtest/gtest.h>

#include <memory>

#include <simgrid/s4u.hpp>

#include "sim/simulation.hpp"
#include "tests/sim/in_child.hpp"
#include "tests/sim/tiny_profile.hpp"

namespace asteria::sim {
namespace {

namespace sg4 = simgrid::s4u;
using platform::LockGuard;
using platform::Platform;
using testing::run_in_child;
using testing::tiny_options;

// The main and a daemon wake at the same instant; the main then returns after `delay` rounds of
// the scheduler, while the daemon locks, notifies and unlocks, one engine call per round. Some
// delay stops the daemon in each of those calls, lock guard held or being released.
void stop_a_daemon_inside_a_lock_guard(int delay) {
  Simulation sim(tiny_options());
  int rounds_seen = 0;
  sim.run([&](int, Platform& p) {
    std::shared_ptr<platform::Mutex> mutex = p.sync().make_mutex();
    std::shared_ptr<platform::ConditionVariable> changed = p.sync().make_condition_variable();
    sg4::Actor::create("holder", sg4::this_actor::get_host(), [mutex, changed, &rounds_seen] {
      sg4::Actor::self()->daemonize();
      sg4::this_actor::sleep_until(1.0);
      for (;;) {
        LockGuard lock(*mutex);
        changed->notify_all();
        ++rounds_seen;
      }
    });
    sg4::this_actor::sleep_until(1.0);
    for (int i = 0; i < delay; ++i) sg4::this_actor::yield();
  });
  EXPECT_DOUBLE_EQ(sim.now(), 1.0);
  if (delay >= 3) {
    EXPECT_GE(rounds_seen, 1) << "the daemon should have run before the main returned";
  }
}

TEST(SimSync, ADaemonStoppedInsideALockGuardAtTheEndOfTheRunUnwindsCleanly) {
  for (int delay = 0; delay <= 6; ++delay) {
    SCOPED_TRACE("main returns after " + std::to_string(delay) + " scheduling rounds");
    run_in_child([delay] { stop_a_daemon_inside_a_lock_guard(delay); });
  }
}

}  // namespace
}  // namespace asteria::sim

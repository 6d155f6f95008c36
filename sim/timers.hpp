#pragma once
// Callbacks at simulated dates, run by SimGrid's scheduler between actor turns (no actor: no
// stack to map, no switches), that can all be cancelled at once. What a daemon actor that only
// sleeps and then signals would do, for the simulator's services; cancel_all() is what killing
// those daemons is when the mains are done (Simulation stops its services then).
#include <functional>
#include <list>

#include <simgrid/kernel/Timer.hpp>

namespace asteria::sim {

class Timers {
 public:
  Timers() = default;
  ~Timers() { cancel_all(); }
  Timers(const Timers&) = delete;
  Timers& operator=(const Timers&) = delete;

  // Runs `then` at simulated time `date` (now at the earliest: after the running actors' turn).
  void at(double date, std::function<void()> then) {
    const auto entry = pending_.insert(pending_.end(), nullptr);
    *entry = simgrid::kernel::timer::Timer::set(date, [this, entry, then = std::move(then)] {
      pending_.erase(entry);  // SimGrid deletes a timer once it has fired
      then();
    });
  }
  void cancel_all() {
    for (simgrid::kernel::timer::Timer* timer : pending_) timer->remove();
    pending_.clear();
  }
  bool empty() const noexcept { return pending_.empty(); }

 private:
  std::list<simgrid::kernel::timer::Timer*> pending_;
};

}  // namespace asteria::sim

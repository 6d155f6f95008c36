#pragma once
// What a simulation keeps of its run besides its clock: how many activities the simulated
// resources carried (every unit's), and where each unit's activities are reported (its
// platform::ActivitySink, when the run records a trace). Actors all run on one OS thread, so no
// locking is needed here.
#include <cstdint>
#include <functional>

#include "core/platform/activity.hpp"

namespace asteria::sim {

struct ActivityCounts {
  std::uint64_t executions = 0;      // work items charged on a GPU or CPU host
  std::uint64_t communications = 0;  // transfers over links (copies between tiers, memory copies)
  std::uint64_t ios = 0;             // NVMe reads and writes
  // Collectives that ran as their exact predicted time instead of their flows, alone on their
  // links (comm/comm_hub.hpp), and those that started while one of them held links of theirs:
  // the times of such pairs are approximate (each was simulated as if alone).
  std::uint64_t collectives_predicted = 0;
  std::uint64_t collectives_overlapped = 0;
  // With representative ranks: collectives whose simulated members arrived at different times,
  // so the ranks are not alike and the mirrors' stand-in is approximate (0 where it is exact).
  std::uint64_t collectives_asymmetric = 0;
  std::uint64_t total() const noexcept { return executions + communications + ios; }
};

// The sink of unit u's activities; null (or an empty function): that unit records nothing.
using SinkForUnit = std::function<platform::ActivitySink*(int unit)>;

class Recorder {
 public:
  ActivityCounts& counts() noexcept { return counts_; }
  const ActivityCounts& counts() const noexcept { return counts_; }

  // Serving actors (actor_pool_executor.hpp) the process may still start: each is a stack
  // mapping, past vm.max_map_count SimGrid aborts. A pool's first actor always starts; a later
  // one past the budget does not and is counted, and the run then fails (Simulation::run).
  void set_actor_budget(long long actors) noexcept { actors_left_ = actors; }
  bool take_actor(bool first_of_pool) noexcept {
    if (actors_left_ <= 0 && !first_of_pool) {
      ++actors_refused_;
      return false;
    }
    --actors_left_;
    return true;
  }
  long long actors_refused() const noexcept { return actors_refused_; }

 private:
  ActivityCounts counts_;
  long long actors_left_ = 1LL << 62;
  long long actors_refused_ = 0;
};

}  // namespace asteria::sim

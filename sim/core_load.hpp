#pragma once
// The cores of one unit's CPU host as they slow one another. cpu<u> has one pstate per count of
// other busy cores (topology.cpp, from cpu.contention_slowdown): pstate k runs a core at
// kSpeed / (1 + slowdown · k / (cores - 1)). Every execution that occupies cores of the host (a
// host worker's job, a CPU device's kernel, a copy done by a core) holds a Busy while it runs;
// the host switches pstate as the count changes, which SimGrid applies to the executions already
// running, so a refresh that starts beside a CPU device's forward slows the rest of it.
#include <vector>

#include <simgrid/s4u.hpp>

namespace asteria::sim {

class CoreLoad {
 public:
  // `cpu`: the unit's CPU host; a host with one pstate (no contention modelled) makes every
  // occupy() free of effect.
  explicit CoreLoad(simgrid::s4u::Host* cpu);

  class Busy {
   public:
    Busy(CoreLoad* load, int threads);
    ~Busy();
    Busy(const Busy&) = delete;
    Busy& operator=(const Busy&) = delete;

   private:
    CoreLoad* load_;
    int threads_;
  };

  // Holds `threads` cores busy until the returned guard goes.
  [[nodiscard]] Busy occupy(int threads) { return Busy(this, threads); }
  int busy_threads() const noexcept { return busy_; }

 private:
  void change(int threads);

  simgrid::s4u::Host* cpu_;
  int pstates_;
  int busy_ = 0;
};

// The pstate speeds topology.cpp gives a CPU host of `cores` cores: kSpeed at index 0 (alone),
// kSpeed / (1 + slowdown · k / (cores - 1)) at index k. One speed when nothing slows.
std::vector<double> contended_core_speeds(int cores, double slowdown, double speed);

}  // namespace asteria::sim

#include "sim/core_load.hpp"

#include <algorithm>
#include <vector>

namespace asteria::sim {

CoreLoad::CoreLoad(simgrid::s4u::Host* cpu)
    : cpu_(cpu), pstates_(cpu != nullptr ? static_cast<int>(cpu->get_pstate_count()) : 1) {}

CoreLoad::Busy::Busy(CoreLoad* load, int threads) : load_(load), threads_(std::max(threads, 1)) {
  if (load_ != nullptr) load_->change(threads_);
}

CoreLoad::Busy::~Busy() {
  if (load_ != nullptr) load_->change(-threads_);
}

void CoreLoad::change(int threads) {
  busy_ += threads;
  if (pstates_ <= 1) return;
  // A core computes beside busy_ - 1 others, at most every other core.
  const int others = std::clamp(busy_ - 1, 0, pstates_ - 1);
  if (static_cast<int>(cpu_->get_pstate()) != others) cpu_->set_pstate(static_cast<unsigned long>(others));
}

std::vector<double> contended_core_speeds(int cores, double slowdown, double speed) {
  if (cores <= 1 || slowdown <= 0.0) return {speed};
  std::vector<double> speeds;
  for (int k = 0; k < cores; ++k) speeds.push_back(speed / (1.0 + slowdown * k / (cores - 1)));
  return speeds;
}

}  // namespace asteria::sim

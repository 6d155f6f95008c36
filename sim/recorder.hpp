#pragma once
// What a simulation keeps of its run: the timeline (when enabled) and how many activities the
// simulated resources carried. One per simulation, shared by every unit; actors all run on one
// OS thread, so no locking is needed.
#include <cstdint>
#include <string>

#include "traces/timeline.hpp"

namespace asteria::sim {

struct ActivityCounts {
  std::uint64_t executions = 0;      // work items charged on a GPU or CPU host
  std::uint64_t communications = 0;  // transfers over links (copies between tiers, memory copies)
  std::uint64_t ios = 0;             // NVMe reads and writes
  std::uint64_t total() const noexcept { return executions + communications + ios; }
};

class Recorder {
 public:
  explicit Recorder(bool record_timeline) : enabled_(record_timeline) {}

  bool enabled() const noexcept { return enabled_; }
  void slice(std::string track, std::string name, std::string category, double start_s, double end_s) {
    if (enabled_) timeline_.add_slice({std::move(track), std::move(name), std::move(category), start_s, end_s});
  }
  void counter(std::string name, double time_s, double value) {
    if (enabled_) timeline_.add_counter({std::move(name), time_s, value});
  }

  ActivityCounts& counts() noexcept { return counts_; }
  const ActivityCounts& counts() const noexcept { return counts_; }
  const traces::Timeline& timeline() const noexcept { return timeline_; }

 private:
  bool enabled_;
  traces::Timeline timeline_;
  ActivityCounts counts_;
};

}  // namespace asteria::sim

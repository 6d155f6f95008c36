#pragma once
// How busy a unit's other cores were while a recorded interval ran, for fitting
// cpu.contention_slowdown from a trace (trace_fit.hpp). The cores' work in a trace is on the
// tracks of the host workers ("cpu0 worker 1", cpu.threads_per_worker threads each) and, for a
// CPU device, on its stream ("cpu0 stream", gpu.device_threads threads). The simulator slows a
// core by slowdown · k / (cores - 1) while k other cores compute (sim/core_load.hpp); an interval
// that saw on average a share o of the other cores busy took (1 + slowdown · o) of its time alone.
#include <string>
#include <utility>
#include <vector>

#include "hwmodels/profile.hpp"
#include "traces/native_trace.hpp"

namespace asteria::hw::calibrate {

class CoreOccupancy {
 public:
  // The busy spans of `unit`'s core tracks in `trace`, as `profile` gives their threads.
  CoreOccupancy(const traces::NativeTrace& trace, const HardwareProfile& profile, int unit);

  // Whether `resource` runs on the unit's cores (a worker; a CPU device's stream).
  bool on_cores(const std::string& resource) const;
  // The time-average over [start, end] of the other tracks' busy threads (all but `resource`),
  // capped at cores - 1, over cores - 1: 0 when nothing else ran, 1 when every other core did.
  double others_busy(const std::string& resource, double start, double end) const;

 private:
  struct Track {
    std::string resource;
    double threads = 1.0;
    std::vector<std::pair<double, double>> spans;  // merged, sorted
  };
  std::vector<Track> tracks_;
  double other_cores_ = 0.0;
  bool device_on_cores_ = false;
};

}  // namespace asteria::hw::calibrate

#pragma once
// How long each resource of one unit worked, from the activities its backend reports: an
// ActivitySink that passes every activity on to another sink (the trace's, or none) and adds up,
// over the steps it measures, the busy seconds of the unit's device stream, its host workers
// (core-seconds: each worker's own time, summed), its NVMe drive and its collectives. What a
// run's energy is computed from (hwmodels/energy.hpp), on every backend alike.
//
// A worker's activities follow one another and add up. A stream reports each op of a multi-op
// launch over the launch's whole interval, a drive's requests and a unit's collectives may
// overlap: each of those adds only its time past the end of those recorded before it, which
// counts an overlap once when they arrive in start order (and undercounts, never overcounts,
// otherwise).
#include <cstdint>
#include <mutex>
#include <string>

#include "core/platform/activity.hpp"
#include "core/platform/resource_busy.hpp"

namespace asteria::traces {

using platform::Activity;
using platform::ResourceBusy;
using platform::Seconds;

class BusyMeter final : public platform::ActivitySink {
 public:
  // Counts the activities of steps >= first_step; passes everything to `inner` (may be null).
  BusyMeter(int unit, std::int64_t first_step, platform::ActivitySink* inner);
  int unit() const noexcept override { return unit_; }
  void record(Activity activity) override;
  void counter(const std::string& name, Seconds time, double value) override;
  void begin_step(std::int64_t step) override;
  // Every step is counted (the inner sink keeps its own window).
  bool recording(std::int64_t) const override { return true; }

  ResourceBusy busy() const;

 private:
  int unit_;
  std::int64_t first_step_;
  platform::ActivitySink* inner_;
  std::string stream_, worker_prefix_, disk_, comm_;  // this unit's track names
  mutable std::mutex mutex_;
  ResourceBusy busy_;
  double stream_until_ = 0.0;  // the end of the stream's, the drive's and the collectives' latest
  double disk_until_ = 0.0;    // busy interval
  double comm_until_ = 0.0;
};

}  // namespace asteria::traces

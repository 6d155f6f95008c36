// The busy seconds of a unit's resources, added up from the activities its backend reports, and
// every activity passed on to the trace's sink as before.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "traces/busy_meter.hpp"

namespace asteria::traces {
namespace {

using platform::Activity;
using platform::ActivityRole;

class Collector final : public platform::ActivitySink {
 public:
  int unit() const noexcept override { return 1; }
  void record(Activity activity) override { kept.push_back(std::move(activity)); }
  void counter(const std::string&, platform::Seconds, double) override { ++counters; }
  void begin_step(std::int64_t) override { ++steps; }
  bool recording(std::int64_t step) const override { return step >= 3; }  // a trace window
  std::vector<Activity> kept;
  int counters = 0;
  int steps = 0;
};

Activity on(const std::string& track, std::int64_t step, double start, double end) {
  Activity a;
  a.track = track;
  a.tag = {step, 0, -1, ActivityRole::op};
  a.start = start;
  a.end = end;
  return a;
}

TEST(BusyMeter, AddsUpEachResourceOfItsUnitOverTheMeasuredSteps) {
  Collector trace;
  BusyMeter meter(1, /*first_step=*/2, &trace);
  EXPECT_TRUE(meter.recording(1));  // every step reaches the meter
  meter.record(on("gpu1 stream", 1, 0.0, 5.0));   // a warm-up step: not counted
  meter.record(on("gpu1 stream", 2, 10.0, 11.5));
  meter.record(on("gpu1 stream", 3, 12.0, 12.5));
  meter.record(on("gpu1 stream", 3, 12.0, 12.5));    // another op of the same launch: counted once
  meter.record(on("cpu1 worker 0", 2, 10.0, 12.0));
  meter.record(on("cpu1 worker 3", 2, 10.0, 11.0));  // workers add up: core-seconds
  meter.record(on("cpu1 main", 2, 10.0, 13.0));      // the issuing thread: not a resource
  meter.record(on("cpu11 worker 0", 2, 10.0, 13.0)); // another unit's
  meter.record(on("gpu0 stream", 2, 10.0, 13.0));
  meter.record(on("disk nvme1", 2, 10.0, 11.0));
  meter.record(on("disk nvme1", 2, 10.5, 11.5));     // overlaps the one before: 0.5 s more
  meter.record(on("gpu1 comm", 2, 20.0, 21.0));
  meter.record(on("gpu1 comm", 3, 20.2, 20.8));      // inside the one before: nothing more
  meter.record(on("link c2c-h2d1", 2, 10.0, 14.0));  // copies: the GPU's and memory's power
  const platform::ResourceBusy busy = meter.busy();
  EXPECT_DOUBLE_EQ(busy.device_s, 2.0);
  EXPECT_DOUBLE_EQ(busy.host_core_s, 3.0);
  EXPECT_DOUBLE_EQ(busy.nvme_s, 1.5);
  EXPECT_DOUBLE_EQ(busy.network_s, 1.0);
  // The trace's sink gets what its window keeps, and its counters and step marks.
  EXPECT_EQ(trace.kept.size(), 3u);  // the three step-3 activities
  meter.counter("gpu1 resident device bytes", 1.0, 5.0);
  meter.begin_step(4);
  EXPECT_EQ(trace.counters, 1);
  EXPECT_EQ(trace.steps, 1);
}

TEST(BusyMeter, WorksWithoutATrace) {
  BusyMeter meter(0, 1, nullptr);
  meter.record(on("gpu0 stream", 1, 1.0, 3.0));
  meter.counter("x", 0.0, 1.0);
  meter.begin_step(2);
  EXPECT_DOUBLE_EQ(meter.busy().device_s, 2.0);
  EXPECT_EQ(meter.unit(), 0);
}

}  // namespace
}  // namespace asteria::traces

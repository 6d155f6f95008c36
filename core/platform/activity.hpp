#pragma once
// What a backend reports about everything it runs: on which track (a stream, a worker, a link, a
// disk, the thread issuing the plan), from when to when, what it cost, and which operation of the
// step plan it served. Every backend reports to one ActivitySink (the trace recorder in traces/),
// from which the native trace and the Chrome trace are written; backends only append.
#include <cstdint>
#include <string>

#include "core/platform/cost.hpp"
#include "core/platform/time.hpp"

namespace asteria::platform {

// How an activity relates to the plan.
enum class ActivityRole {
  op,           // the work of one plan op (tag.op)
  launch,       // the one Work of a plan launch (tag.launch): several ops fused
  refresh_job,  // a refresh job, submitted by the refresh op tag.op
  transfer,     // a copy between memory tiers, started during op tag.op (or at placement)
  io,           // an NVMe read or write, started during op tag.op
  step,         // a whole step (tag.step), from its first op to its end
  other,        // work no plan asked for (tests, calibration)
};
std::string_view to_string(ActivityRole role) noexcept;

// The plan operation an activity serves. Executors copy it from the Work; copies take it as an
// argument. step 0: before the first step (initial placement).
struct OpTag {
  std::int64_t step = 0;
  std::int32_t op = -1;
  std::int32_t launch = -1;
  ActivityRole role = ActivityRole::other;
};

struct Activity {
  std::string track;  // "gpu0 stream", "cpu0 worker 2", "cpu0 main", "link c2c-h2d0", "disk nvme0"
  std::string label;  // "backward layer3", "refresh layer3.w block 2", "copy host->device ..."
  OpTag tag;
  Costs cost;         // what the activity was charged for, piece by piece (a copy: its bytes)
  Seconds start = 0.0;
  Seconds end = 0.0;
  bool ok = true;
};

class ActivitySink {
 public:
  virtual ~ActivitySink() = default;
  // The rank whose activities this sink receives (the number in its track names).
  virtual int unit() const noexcept = 0;
  // Called from any thread (a real backend's executor threads): implementations synchronize.
  virtual void record(Activity activity) = 0;
  // A sample of a counter track ("gpu0 resident device bytes").
  virtual void counter(const std::string& name, Seconds time, double value) = 0;
  // The plan interpreter starts step `step`: counter samples that follow belong to it.
  virtual void begin_step(std::int64_t step) = 0;
  // Whether activities of `step` are kept (a trace window); callers may skip building them.
  virtual bool recording(std::int64_t /*step*/) const { return true; }
};

// Track names, the same on every backend so that measured and simulated runs look alike.
std::string device_stream_track(int unit);          // "gpu<u> stream"
std::string host_worker_track(int unit, int lane);  // "cpu<u> worker <lane>"
std::string issuer_track(int unit);                 // "cpu<u> main": the thread that runs the plan
std::string disk_track(int unit);                   // "disk nvme<u>"
std::string comm_track(int unit);                   // "gpu<u> comm": the rank's collectives

}  // namespace asteria::platform

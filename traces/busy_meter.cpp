#include "traces/busy_meter.hpp"

#include <algorithm>
#include <utility>

namespace asteria::traces {

using platform::comm_track;
using platform::device_stream_track;
using platform::disk_track;
using platform::host_worker_track;

BusyMeter::BusyMeter(int unit, std::int64_t first_step, platform::ActivitySink* inner)
    : unit_(unit),
      first_step_(first_step),
      inner_(inner),
      stream_(device_stream_track(unit)),
      disk_(disk_track(unit)),
      comm_(comm_track(unit)) {
  worker_prefix_ = host_worker_track(unit, 0);
  worker_prefix_.resize(worker_prefix_.size() - 1);  // "cpu<u> worker " without the lane
}

namespace {
// Seconds of [start, end) past `until`, which then moves to the end.
double past(double start, double end, double& until) {
  const double added = std::max(0.0, end - std::max(start, until));
  until = std::max(until, end);
  return added;
}
}  // namespace

void BusyMeter::record(Activity activity) {
  if (activity.tag.step >= first_step_ && activity.end > activity.start) {
    const double start = activity.start, end = activity.end;
    std::lock_guard lock(mutex_);
    if (activity.track == stream_) busy_.device_s += past(start, end, stream_until_);
    else if (activity.track.compare(0, worker_prefix_.size(), worker_prefix_) == 0) busy_.host_core_s += end - start;
    else if (activity.track == disk_) busy_.nvme_s += past(start, end, disk_until_);
    else if (activity.track == comm_) busy_.network_s += past(start, end, comm_until_);
  }
  if (inner_ != nullptr && inner_->recording(activity.tag.step)) inner_->record(std::move(activity));
}

void BusyMeter::counter(const std::string& name, Seconds time, double value) {
  if (inner_ != nullptr) inner_->counter(name, time, value);
}

void BusyMeter::begin_step(std::int64_t step) {
  if (inner_ != nullptr) inner_->begin_step(step);
}

ResourceBusy BusyMeter::busy() const {
  std::lock_guard lock(mutex_);
  return busy_;
}

}  // namespace asteria::traces

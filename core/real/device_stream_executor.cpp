#include "core/real/device_stream_executor.hpp"

#include "core/common/error.hpp"

namespace asteria::real {

namespace {
platform::TimeSource checked(platform::TimeSource time) {
  if (time == platform::TimeSource::simulated)
    throw InputError("real device stream", "time", "measured or modelled (simulated time needs a simulator)");
  return time;
}
}  // namespace

DeviceStreamExecutor::DeviceStreamExecutor(DeviceStreamOptions options, platform::CompletionBoard& board,
                                           platform::Clock& clock, platform::ActivitySink* activities)
    : time_(checked(options.time)), model_(options.model), duration_(std::move(options.duration)), clock_(clock),
      queue_(
          std::move(options.name), 1, board, clock, activities,
          [unit = options.unit](int) { return platform::device_stream_track(unit); },
          [this](platform::Work& w) { return execute(w); }) {}

platform::Pending DeviceStreamExecutor::submit(platform::Work work) { return queue_.submit(std::move(work)); }

Status DeviceStreamExecutor::execute(platform::Work& work) {
  if (time_ == platform::TimeSource::measured) return run_body(work);
  const platform::Seconds start = clock_.now();
  Status status = run_body(work);
  const platform::Seconds modelled = duration_ ? platform::total_seconds(work.cost, duration_)
                                              : platform::total_seconds(work.cost, [this](const platform::Cost& piece) {
                                                  return model_.duration(piece);
                                                });
  clock_.sleep_until(start + modelled);
  return status;
}

}  // namespace asteria::real

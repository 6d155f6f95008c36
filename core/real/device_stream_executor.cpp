#include "core/real/device_stream_executor.hpp"

#include <exception>
#include <utility>

#include "core/common/error.hpp"

namespace asteria::real {

namespace {
platform::TimeSource checked(platform::TimeSource time) {
  if (time == platform::TimeSource::simulated)
    throw InputError("real device stream", "time", "measured or modelled (simulated time needs a simulator)");
  return time;
}

bool is_fenced(const DeviceStreamOptions& options) {
  return options.queue_device != nullptr && options.time == platform::TimeSource::measured;
}
}  // namespace

DeviceStreamExecutor::DeviceStreamExecutor(DeviceStreamOptions options, platform::CompletionBoard& board,
                                           platform::Clock& clock, platform::ActivitySink* activities)
    : time_(checked(options.time)),
      model_(options.model),
      duration_(std::move(options.duration)),
      clock_(clock),
      board_(board),
      queue_device_(options.queue_device),
      track_(platform::device_stream_track(options.unit)),
      completions_(is_fenced(options) ? std::make_unique<FenceCompleter>(clock, activities) : nullptr),
      // A fenced work's activity is recorded when its fence is reached, not when its body returns.
      queue_(
          std::move(options.name), 1, board, clock, completions_ ? nullptr : activities,
          [unit = options.unit](int) { return platform::device_stream_track(unit); },
          [this](platform::Work& w) { return execute(w); }) {}

platform::Pending DeviceStreamExecutor::submit(platform::Work work) {
  if (!fenced()) return queue_.submit(std::move(work));
  auto [promise, pending] = board_.make();
  platform::Work queued;
  queued.label = work.label;
  queued.urgent = work.urgent;
  queued.tag = work.tag;
  // The queue's own Pending is dropped: the body hands the work's outcome to the completer.
  queued.body = [this, work = std::move(work), promise = std::move(promise)]() mutable -> Status {
    FenceCompleter::Entry entry;
    entry.activity = {track_, work.label, work.tag, work.cost, clock_.now(), 0.0, true};
    entry.status = run_body(work);
    if (entry.status.ok()) {
      try {
        entry.fence = queue_device_->fence();
      } catch (const std::exception& e) {
        entry.status = {StatusCode::failed, work.label + ": " + e.what()};
      }
    }
    work.body = nullptr;  // what the body captured goes before completion becomes visible
    entry.promise = std::move(promise);
    completions_->hand_over(std::move(entry));
    return Status::success();
  };
  queue_.submit(std::move(queued));
  return pending;
}

Status DeviceStreamExecutor::execute(platform::Work& work) {
  if (time_ == platform::TimeSource::measured) return run_body(work);
  const platform::Seconds start = clock_.now();
  Status status = run_body(work);
  // Modelled time on an asynchronous device: the work's operations end within its duration.
  if (status.ok() && queue_device_ != nullptr) {
    try {
      if (std::unique_ptr<ops::Fence> fence = queue_device_->fence()) fence->wait();
    } catch (const std::exception& e) {
      status = {StatusCode::failed, work.label + ": " + e.what()};
    }
  }
  const platform::Seconds modelled = duration_ ? platform::total_seconds(work.cost, duration_)
                                              : platform::total_seconds(work.cost, [this](const platform::Cost& piece) {
                                                  return model_.duration(piece);
                                                });
  clock_.sleep_until(start + modelled);
  return status;
}

DeviceStreamExecutor::FenceCompleter::FenceCompleter(platform::Clock& clock, platform::ActivitySink* activities)
    : clock_(clock), activities_(activities), thread_([this] { serve(); }) {}

DeviceStreamExecutor::FenceCompleter::~FenceCompleter() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void DeviceStreamExecutor::FenceCompleter::hand_over(Entry entry) {
  {
    std::lock_guard lock(mutex_);
    entries_.push_back(std::move(entry));
  }
  changed_.notify_one();
}

void DeviceStreamExecutor::FenceCompleter::serve() {
  for (;;) {
    Entry entry;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || !entries_.empty(); });
      if (entries_.empty()) return;  // stopping, and drained
      entry = std::move(entries_.front());
      entries_.pop_front();
    }
    if (entry.fence) {
      try {
        entry.fence->wait();
      } catch (const std::exception& e) {
        entry.status = {StatusCode::failed, entry.activity.label + ": " + e.what()};
      }
      entry.fence.reset();
    }
    entry.activity.end = clock_.now();
    entry.activity.ok = entry.status.ok();
    if (activities_ != nullptr) activities_->record(std::move(entry.activity));
    entry.promise.fulfil(std::move(entry.status));
  }
}

}  // namespace asteria::real

#include "core/real/work_queue.hpp"

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <string>

#include "core/real/thread_start.hpp"

namespace asteria::real {

Status run_body(const platform::Work& work) {
  if (!work.body) return Status::success();
  try {
    return work.body();
  } catch (const std::exception& e) {
    return {StatusCode::failed, work.label + ": " + e.what()};
  } catch (...) {
    return {StatusCode::failed, work.label + ": unknown exception"};
  }
}

WorkQueue::WorkQueue(std::string name, int threads, platform::CompletionBoard& board, platform::Clock& clock,
                     platform::ActivitySink* activities, TrackName track, Runner runner)
    : name_(std::move(name)), board_(board), clock_(clock), activities_(activities), runner_(std::move(runner)) {
  if (threads < 1) throw std::invalid_argument("WorkQueue '" + name_ + "': needs at least one thread");
  for (int i = 0; i < threads; ++i) tracks_.push_back(track ? track(i) : name_);
  start_threads(threads_, threads, name_, [this](int lane) { serve(lane); }, [this] { request_stop(); });
}

void WorkQueue::request_stop() noexcept {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
}

void WorkQueue::stop_and_join() noexcept {
  request_stop();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

WorkQueue::~WorkQueue() { stop_and_join(); }

platform::Pending WorkQueue::submit(platform::Work work) {
  auto [promise, pending] = board_.make();
  Item item{std::move(work), std::move(promise), clock_.now()};
  {
    std::lock_guard lock(mutex_);
    if (stopping_) throw std::logic_error("WorkQueue '" + name_ + "': submit during shutdown");
    if (item.work.urgent) {
      queue_.insert(queue_.begin() + static_cast<std::ptrdiff_t>(urgent_queued_), std::move(item));
      ++urgent_queued_;
    } else {
      queue_.push_back(std::move(item));
    }
  }
  changed_.notify_one();
  return pending;
}

void WorkQueue::serve(int lane) {
  for (;;) {
    Item item;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and drained
      item = std::move(queue_.front());
      queue_.pop_front();
      if (urgent_queued_ > 0) --urgent_queued_;  // urgent items are the queue's front
    }
    execute(item, lane);
  }
}

void WorkQueue::execute(Item& item, int lane) {
  const platform::Seconds started = clock_.now();
  Status status;
  try {
    status = runner_(item.work);
  } catch (const std::exception& e) {  // runners call run_body, but a runner's own code may throw
    status = {StatusCode::failed, item.work.label + ": " + e.what()};
  } catch (...) {
    status = {StatusCode::failed, item.work.label + ": unknown exception"};
  }
  const platform::Seconds finished = clock_.now();
  if (activities_ != nullptr)
    activities_->record({tracks_[static_cast<std::size_t>(lane)], item.work.label, item.work.tag, item.work.cost,
                         started, finished, status.ok()});
  // Drop the body (and whatever it captured) before completion becomes visible to waiters.
  item.work.body = nullptr;
  item.promise.fulfil(std::move(status));
}

}  // namespace asteria::real

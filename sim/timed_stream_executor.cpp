#include "sim/timed_stream_executor.hpp"

#include <stdexcept>
#include <utility>

namespace asteria::sim {

namespace sg4 = simgrid::s4u;

TimedStreamExecutor::TimedStreamExecutor(ActorPoolSpec spec, platform::CompletionBoard& board, Recorder& recorder)
    : spec_(std::move(spec)), board_(board), recorder_(recorder) {
  if (!serves(spec_) || spec_.tracks.size() != 1 || spec_.cores != nullptr)
    throw std::invalid_argument("TimedStreamExecutor '" + spec_.name +
                                "': serves one exclusive stream whose items have no body to run");
  if (spec_.memory == nullptr || !spec_.charge)
    throw std::invalid_argument("TimedStreamExecutor '" + spec_.name + "': needs a memory host and a charge model");
}

platform::Pending TimedStreamExecutor::submit(platform::Work work) {
  auto [promise, pending] = board_.make();
  if (work.urgent) {  // ahead of the plain items, behind earlier urgent ones
    queue_.insert(queue_.begin() + static_cast<std::ptrdiff_t>(urgent_queued_), Item{std::move(work), std::move(promise)});
    ++urgent_queued_;
  } else {
    queue_.push_back({std::move(work), std::move(promise)});
  }
  if (started_ && state_ == State::idle) wake();
  return pending;
}

void TimedStreamExecutor::start() {
  if (started_) return;
  started_ = true;
  if (!queue_.empty() && state_ == State::idle) wake();
}

void TimedStreamExecutor::stop() {
  timers_.cancel_all();
  state_ = State::stopped;
}

// The item that woke the stream is taken at the end of the wake, not now: urgent items submitted
// meanwhile go ahead of it, as they do when the actor wakes up and looks at its queue.
void TimedStreamExecutor::wake() {
  state_ = State::waking;
  timers_.at(sg4::Engine::get_clock() + spec_.wake_seconds, [this] { take_next(); });
}

void TimedStreamExecutor::take_next() {
  running_ = std::move(queue_.front());
  queue_.pop_front();
  if (urgent_queued_ > 0) --urgent_queued_;  // urgent items are the queue's front
  double compute = 0.0, traffic = 0.0;
  for (const platform::Cost& piece : running_.work.cost.pieces()) {
    const hw::CostModel::Charge c = spec_.charge(piece);
    compute += c.compute_seconds;
    traffic += c.memory_bytes;
  }
  if (compute > 0.0) ++recorder_.counts().executions;
  if (traffic > 0.0) ++recorder_.counts().executions;
  state_ = State::busy;
  running_since_ = sg4::Engine::get_clock();
  timers_.at(running_since_ + compute + traffic / spec_.memory->get_speed(), [this] { finish(); });
}

void TimedStreamExecutor::finish() {
  Item item = std::move(running_);
  if (spec_.activities != nullptr)
    spec_.activities->record({spec_.tracks.front(), item.work.label, item.work.tag, item.work.cost, running_since_,
                              sg4::Engine::get_clock(), true});
  item.work.body = nullptr;  // drop what it captured before waiters see the completion
  // The next item starts before the waiters run: a stream that finds work queued goes on at once.
  if (queue_.empty()) {
    state_ = State::idle;
  } else {
    take_next();
  }
  item.promise.fulfil(Status::success());
}

}  // namespace asteria::sim

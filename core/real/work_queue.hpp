#pragma once
// The machinery under every real executor: a FIFO of work items (urgent ones first) served by a fixed set of
// threads. Each item's outcome fulfils its Promise; its times go to the activity sink. Destruction
// drains the queue (every submitted item runs) and then joins the threads.
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/platform/activity.hpp"
#include "core/platform/clock.hpp"
#include "core/platform/executor.hpp"
#include "core/platform/pending.hpp"

namespace asteria::real {

// Runs the body, turning an escaping exception into a failed Status ("label: what").
// A work without a body succeeds.
Status run_body(const platform::Work& work);

class WorkQueue {
 public:
  // Executes one item on a queue thread (run_body plus whatever the executor adds, e.g. pacing).
  using Runner = std::function<Status(platform::Work&)>;
  // The activity track of thread `lane` (0 .. threads-1).
  using TrackName = std::function<std::string(int lane)>;

  // `activities` (not owned; null: nothing recorded) receives one Activity per finished item.
  WorkQueue(std::string name, int threads, platform::CompletionBoard& board, platform::Clock& clock,
            platform::ActivitySink* activities, TrackName track, Runner runner);
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  const std::string& name() const noexcept { return name_; }
  int threads() const noexcept { return static_cast<int>(threads_.size()); }
  platform::Pending submit(platform::Work work);

 private:
  struct Item {
    platform::Work work;
    platform::Promise promise;
    platform::Seconds submitted = 0.0;
  };
  void serve(int lane);
  void request_stop() noexcept;   // every lane told to stop once the queue is empty
  void stop_and_join() noexcept;  // request_stop(), then every lane joined
  void execute(Item& item, int lane);

  std::string name_;
  platform::CompletionBoard& board_;
  platform::Clock& clock_;
  platform::ActivitySink* activities_;
  std::vector<std::string> tracks_;
  Runner runner_;

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Item> queue_;  // urgent items first, each part in submission order
  std::size_t urgent_queued_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;  // last: started after, and joined before, everything above
};

}  // namespace asteria::real

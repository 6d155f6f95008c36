#pragma once
// The host worker pool: N threads take work in FIFO order (preconditioner refreshes).
#include <string>

#include "core/platform/executor.hpp"
#include "core/real/work_queue.hpp"

namespace asteria::real {

// Threads for a pool when none are asked for: all cores but one (the training loop's), at least 1.
int default_host_threads() noexcept;

class ThreadPoolExecutor final : public platform::Executor {
 public:
  // Thread k records its work on the track "cpu<unit> worker <k>" of `activities` (if any).
  // `slowdown` >= 1 injects a straggler: each work lasts that many times its own run (the thread
  // sleeps the difference after the body), as a slower or busier host would.
  ThreadPoolExecutor(std::string name, int threads, platform::CompletionBoard& board, platform::Clock& clock,
                     platform::ActivitySink* activities = nullptr, int unit = 0, double slowdown = 1.0);
  std::string_view name() const noexcept override { return queue_.name(); }
  int concurrency() const noexcept override { return queue_.threads(); }
  // A work without a body has nothing to run on a CPU: it completes at once (and is recorded).
  platform::Pending submit(platform::Work work) override;

 private:
  platform::Clock& clock_;
  platform::ActivitySink* activities_;
  int unit_;
  WorkQueue queue_;
};

}  // namespace asteria::real

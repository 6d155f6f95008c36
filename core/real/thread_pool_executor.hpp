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
  ThreadPoolExecutor(std::string name, int threads, platform::CompletionBoard& board, platform::Clock& clock,
                     TraceSink* trace = nullptr);
  std::string_view name() const noexcept override { return queue_.name(); }
  int concurrency() const noexcept override { return queue_.threads(); }
  // A work without a body has nothing to run on a CPU: it completes at once (and is traced).
  platform::Pending submit(platform::Work work) override;

 private:
  platform::Clock& clock_;
  TraceSink* trace_;
  WorkQueue queue_;
};

}  // namespace asteria::real

#include "core/real/thread_pool_executor.hpp"

#include <algorithm>
#include <thread>

namespace asteria::real {

int default_host_threads() noexcept {
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, cores - 1);
}

ThreadPoolExecutor::ThreadPoolExecutor(std::string name, int threads, platform::CompletionBoard& board,
                                       platform::Clock& clock, TraceSink* trace)
    : clock_(clock), trace_(trace),
      queue_(std::move(name), threads, board, clock, trace, [](platform::Work& w) { return run_body(w); }) {}

platform::Pending ThreadPoolExecutor::submit(platform::Work work) {
  if (!work.body) {
    if (trace_ != nullptr) {
      const platform::Seconds now = clock_.now();
      trace_->record({queue_.name(), work.label, work.cost.kind, now, now, now, true});
    }
    return platform::Pending::ready();
  }
  return queue_.submit(std::move(work));
}

}  // namespace asteria::real

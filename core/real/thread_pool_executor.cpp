#include "core/real/thread_pool_executor.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

namespace asteria::real {

int default_host_threads() noexcept {
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  return std::max(1, cores - 1);
}

ThreadPoolExecutor::ThreadPoolExecutor(std::string name, int threads, platform::CompletionBoard& board,
                                       platform::Clock& clock, platform::ActivitySink* activities, int unit,
                                       double slowdown)
    : clock_(clock), activities_(activities), unit_(unit),
      queue_(
          std::move(name), threads, board, clock, activities,
          [unit](int lane) { return platform::host_worker_track(unit, lane); },
          [slowdown](platform::Work& w) {
            if (slowdown <= 1.0) return run_body(w);
            const auto start = std::chrono::steady_clock::now();
            Status status = run_body(w);
            std::this_thread::sleep_for((std::chrono::steady_clock::now() - start) * (slowdown - 1.0));
            return status;
          }) {}

platform::Pending ThreadPoolExecutor::submit(platform::Work work) {
  if (!work.body) {
    if (activities_ != nullptr) {
      const platform::Seconds now = clock_.now();
      activities_->record({platform::host_worker_track(unit_, 0), work.label, work.tag, work.cost, now, now, true});
    }
    return platform::Pending::ready();
  }
  return queue_.submit(std::move(work));
}

}  // namespace asteria::real

#pragma once
// Threads that split one loop of the CPU math backend (ops::CpuDevice) into pieces: the caller
// takes pieces too, so a loop finishes even when every helper is busy, and a second caller that
// finds the pool running someone else's loop runs its own alone instead of waiting.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/ops/parallel.hpp"

namespace asteria::real {

class ForkJoinPool final : public ops::ParallelRunner {
 public:
  // `width` threads run pieces at once, the caller's included (width − 1 helpers; at least 1).
  // More than the system lets the process start: InputError(name, "threads", ...).
  explicit ForkJoinPool(int width, const std::string& name = "math threads");
  ~ForkJoinPool() override;
  ForkJoinPool(const ForkJoinPool&) = delete;
  ForkJoinPool& operator=(const ForkJoinPool&) = delete;

  int width() const noexcept override { return static_cast<int>(helpers_.size()) + 1; }
  void run(std::int64_t pieces, const std::function<void(std::int64_t)>& piece) override;

 private:
  struct Loop {
    const std::function<void(std::int64_t)>* piece = nullptr;
    std::int64_t pieces = 0;
    std::atomic<std::int64_t> next{0};
    std::mutex error_mutex;
    std::exception_ptr error;
  };
  static void take_pieces(Loop& loop);
  void help();
  void request_stop() noexcept;

  std::mutex mutex_;
  std::condition_variable wake_;      // helpers: a loop was posted, or the pool stops
  std::condition_variable finished_;  // the caller: a helper left the loop
  Loop* loop_ = nullptr;              // the loop being run, guarded by mutex_
  std::uint64_t generation_ = 0;      // loops posted so far
  int helping_ = 0;                   // helpers inside loop_
  bool stopping_ = false;
  std::mutex run_mutex_;  // one loop at a time
  std::vector<std::thread> helpers_;
};

}  // namespace asteria::real

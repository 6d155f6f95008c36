#include "hwmodels/calibrate/latency_bench.hpp"

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/common/error.hpp"
#include "core/real/device_stream_executor.hpp"
#include "core/real/real_clock.hpp"
#include "core/real/real_sync.hpp"
#include "hwmodels/calibrate/cpu_bench.hpp"

namespace asteria::hw::calibrate {
namespace {

constexpr int kTinyN = 8;

// A tiny symmetric eigenproblem: what the smallest LAPACK call of a refresh costs.
void tiny_eigh(std::vector<float>& a, std::vector<float>& w) {
  for (int i = 0; i < kTinyN; ++i)
    for (int j = 0; j < kTinyN; ++j) a[static_cast<std::size_t>(i * kTinyN + j)] = (i == j) ? float(i + 1) : 0.01f;
  LAPACKE_ssyevd(LAPACK_COL_MAJOR, 'V', 'L', kTinyN, a.data(), kTinyN, w.data());
}

// One worker thread that runs posted tasks; the poster waits for each to finish.
class TaskRoundTrip {
 public:
  TaskRoundTrip() : worker_([this] { serve(); }) {}
  ~TaskRoundTrip() {
    {
      const std::lock_guard lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
  }
  TaskRoundTrip(const TaskRoundTrip&) = delete;
  TaskRoundTrip& operator=(const TaskRoundTrip&) = delete;

  // Seconds from posting a task to seeing it done.
  double run_once() {
    const WallClock::time_point start = WallClock::now();
    {
      const std::lock_guard lock(mutex_);
      ++posted_;
    }
    changed_.notify_all();
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return done_ == posted_; });
    return seconds_between(start, WallClock::now());
  }

 private:
  void serve() {
    std::vector<float> a(kTinyN * kTinyN), w(kTinyN);
    std::unique_lock lock(mutex_);
    while (true) {
      changed_.wait(lock, [&] { return stop_ || done_ < posted_; });
      if (stop_) return;
      lock.unlock();
      tiny_eigh(a, w);
      lock.lock();
      ++done_;
      changed_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  long posted_ = 0;
  long done_ = 0;
  bool stop_ = false;
  std::jthread worker_;  // last: starts after, and joins before, the state it uses
};

}  // namespace

Measured measure_task_latency(int samples) {
  if (samples < 1) throw InputError("task latency", "samples", "expected at least one sample");
  const BlasThreads one_thread(1);
  std::vector<double> times;
  {
    TaskRoundTrip trip;
    trip.run_once();  // warm-up: the thread's first wake-up, LAPACK's first call
    for (int i = 0; i < samples; ++i) {
      times.push_back(trip.run_once());
      std::this_thread::yield();
    }
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return {times[times.size() / 2], "median of " + std::to_string(samples) +
                                       " round trips of a task through a sleeping worker thread (condition "
                                       "variable), the task a LAPACK ssyevd of n=8 on 1 BLAS thread"};
}

Measured measure_call_latency(int threads, int calls, int repeats) {
  if (threads < 1 || calls < 1 || repeats < 1)
    throw InputError("call latency", "threads, calls, repeats", "expected each to be at least 1");
  const BlasThreads blas(threads);
  std::vector<float> a(kTinyN * kTinyN, 0.5f), b(kTinyN * kTinyN, 0.25f), c(kTinyN * kTinyN, 0.0f);
  auto call = [&] {
    cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, kTinyN, kTinyN, kTinyN, 1.0f, a.data(), kTinyN, b.data(),
                kTinyN, 0.0f, c.data(), kTinyN);
  };
  call();
  const double seconds = best_seconds(repeats, [&] {
    for (int i = 0; i < calls; ++i) call();
  });
  return {seconds / calls, "cblas_sgemm 8x8x8 on " + std::to_string(blas.threads()) +
                               (blas.threads() == 1 ? " thread" : " threads") + ": per-call time, best of " +
                               std::to_string(repeats) + " runs of " + std::to_string(calls) + " calls"};
}

Measured measure_copy_latency(std::size_t bytes, int copies, int repeats) {
  if (bytes == 0 || copies < 1 || repeats < 1)
    throw InputError("copy latency", "bytes, copies, repeats", "expected each to be at least 1");
  std::vector<unsigned char> src(bytes, 0x5a), dst(bytes, 0);
  unsigned checksum = 0;  // reading each copy keeps the compiler from dropping any
  const double seconds = best_seconds(repeats, [&] {
    for (int i = 0; i < copies; ++i) {
      const std::size_t at = static_cast<std::size_t>(i) % bytes;
      src[at] = static_cast<unsigned char>(i);
      std::memcpy(dst.data(), src.data(), bytes);
      checksum += dst[at];
    }
  });
  static_cast<void>(*static_cast<volatile unsigned*>(&checksum));
  return {seconds / copies, "memcpy of " + std::to_string(bytes) + " bytes, 1 thread: per-copy time, best of " +
                                std::to_string(repeats) + " runs of " + std::to_string(copies) + " copies"};
}

Measured measure_wake_latency(int samples) {
  if (samples < 1) throw InputError("wake latency", "samples", "expected at least one sample");
  constexpr auto kIdle = std::chrono::milliseconds(1);
  real::RealClock clock;
  real::RealSync sync;
  platform::CompletionBoard board(sync);
  real::DeviceStreamOptions options;
  options.name = "calibrate wake";
  options.time = platform::TimeSource::measured;  // the body runs as it is: nothing paced
  real::DeviceStreamExecutor stream(std::move(options), board, clock);  // last: drained before the rest goes

  // Seconds from submitting to an idle stream until the work starts.
  auto once = [&] {
    std::this_thread::sleep_for(kIdle);  // the stream thread goes back to waiting for work
    platform::Seconds started = 0.0;
    platform::Work probe;
    probe.label = "wake probe";
    probe.body = [&] {
      started = clock.now();
      return Status::success();
    };
    const platform::Seconds submitted = clock.now();
    stream.submit(std::move(probe)).wait();  // the wait orders the body's write before the read
    return started - submitted;
  };
  once();  // warm-up: the thread's first wake-up
  std::vector<double> wakes;
  for (int i = 0; i < samples; ++i) wakes.push_back(once());
  std::nth_element(wakes.begin(), wakes.begin() + wakes.size() / 2, wakes.end());
  return {wakes[wakes.size() / 2], "median of " + std::to_string(samples) +
                                       " submissions to an idle device stream (the real backend's stream thread, "
                                       "after 1 ms idle), submit to start"};
}

}  // namespace asteria::hw::calibrate

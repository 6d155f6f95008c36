#pragma once
// NcclComm's insides (nccl_comm.hpp keeps CUDA and NCCL out of its includers): the calls, the
// groups' NCCL state and the engine, the two threads and the CUDA resources of one comm.
#include <cuda_runtime.h>
#include <nccl.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "core/platform/comm.hpp"
#include "core/platform/pending.hpp"
#include "core/real/real_clock.hpp"
#include "core/real/real_sync.hpp"

namespace asteria::real::detail {

std::string cuda_words(cudaError_t code);
// Throws std::runtime_error naming `what` and CUDA's words when `code` is an error.
void check_cuda(cudaError_t code, const std::string& what);
std::string nccl_words(ncclResult_t code, ncclComm_t comm);  // the code's words and NCCL's last error
void check_nccl(ncclResult_t code, ncclComm_t comm, const std::string& what);

// One member's part of a collective, as issued.
struct NcclCall : platform::CollectiveCall {
  std::vector<platform::Pending> after;
  platform::Promise promise;
  std::string name;  // "<group>#<sequence>"
  std::string label;
  platform::OpTag tag;
  platform::ActivitySink* sink = nullptr;
  const platform::Clock* clock = nullptr;

  std::string what() const { return std::string(platform::to_string(collective)) + " " + name; }
};

// A group's NCCL side. `comm` is written by the issue thread (split, destroy) and by the
// completion thread (abort), always under NcclEngine::nccl_mutex; the completion thread reads it
// unlocked only while work of the group is in flight (a group is destroyed only once none is).
struct NcclGroupState {
  ncclComm_t comm = nullptr;
  int rank = 0;
  int size = 1;
  std::vector<int> world_ranks;  // per group rank
  bool failed = false;           // an NCCL call failed: destroy by ncclCommAbort
  std::string aborted;           // why the communicator was aborted (empty: it was not)
};

// What the completion thread waits for, in issue order: an event on the comm's stream (and the
// group whose asynchronous errors to watch meanwhile), or, with no event, a marker passed once
// every earlier entry is done.
struct InFlight {
  std::shared_ptr<NcclGroupState> group;
  cudaEvent_t begin = nullptr;  // null: no timing
  cudaEvent_t end = nullptr;    // null: a marker
  std::string what;
  std::function<void(Status, double device_seconds)> done;
};

// Device memory of at least the asked size, grown in stream order: the old allocation is freed
// after the work already enqueued that uses it, and nothing synchronizes the device (a cudaFree
// while NCCL kernels wait for their peers could).
class DeviceScratch {
 public:
  std::byte* reserve(std::size_t bytes, cudaStream_t stream, const std::string& what);
  void release(cudaStream_t stream);

 private:
  std::byte* data_ = nullptr;
  std::size_t capacity_ = 0;
};

// The threads and CUDA resources of one NcclComm and all its groups. The issue thread runs
// jobs in FIFO order (every NCCL call of the comm, its setup, splits and destruction); the
// completion thread waits for enqueued work in the same order and completes it. Both have the
// comm's device current. Jobs hold no reference that keeps the engine alive: it goes with the
// last group, on whichever thread releases that.
class NcclEngine {
 public:
  NcclEngine(int rank_in_world, int cuda_device, bool checked);
  ~NcclEngine();  // runs every job posted, waits for everything in flight, frees the resources
  NcclEngine(const NcclEngine&) = delete;
  NcclEngine& operator=(const NcclEngine&) = delete;

  void post(std::function<void()> job);

  // Runs `job` on the issue thread after every job posted before, and returns its result or
  // throws its exception (setup, split: the caller waits).
  template <typename F>
  auto run(F job) -> decltype(job()) {
    using R = decltype(job());
    std::promise<R> made;
    std::future<R> result = made.get_future();
    post([&made, &job] {
      try {
        if constexpr (std::is_void_v<R>) {
          job();
          made.set_value();
        } else {
          made.set_value(job());
        }
      } catch (...) {
        made.set_exception(std::current_exception());
      }
    });
    return result.get();
  }

  // Issue thread: makes the device current, creates the stream and the pinned host words (a
  // header per world rank) and starts the completion thread.
  void setup(int world_size);
  // Hands work enqueued on the stream to the completion thread.
  void complete_later(InFlight entry);
  // Issue thread: waits until the completion thread has finished every entry handed to it so
  // far: no call is in flight, and no thread but this one touches a communicator.
  void quiesce();
  // Issue thread: waits, through the completion thread (which watches `group` for NCCL's
  // asynchronous errors meanwhile), until the work enqueued so far on the stream has run.
  Status await(const std::shared_ptr<NcclGroupState>& group, const std::string& what);

  cudaEvent_t take_event(const std::string& what);  // timed: activities use them
  void give_event(cudaEvent_t event);

  static constexpr std::size_t kHeaderBytes = 8 * sizeof(std::int64_t);

  const int world_rank;
  const int device;
  const bool check_calls;
  RealClock own_clock;
  RealSync sync;
  platform::CompletionBoard board{sync};
  // Read by the issuing thread only (NcclComm::record's contract).
  platform::ActivitySink* sink = nullptr;
  const platform::Clock* clock = &own_clock;

  // Issue thread only.
  cudaStream_t stream = nullptr;
  DeviceScratch scratch;         // bytes-only buffers
  DeviceScratch meta;            // headers and world ranks
  std::byte* pinned = nullptr;   // kHeaderBytes per world rank: the host side of `meta`
  std::mutex nccl_mutex;         // NCCL calls on a group's comm, against its abort

 private:
  void issue_loop();
  void complete_loop();
  Status wait_for(const InFlight& entry);
  // Completion thread: aborts a group whose communicator reported an error, so that its
  // kernels end and the stream goes on; its later calls fail.
  void abort(NcclGroupState& group, const std::string& why);

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::function<void()>> jobs_;
  bool stopped_ = false;

  std::mutex done_mutex_;
  std::condition_variable done_changed_;
  std::deque<InFlight> in_flight_;
  bool done_stopped_ = false;

  std::mutex events_mutex_;
  std::vector<cudaEvent_t> events_;

  std::thread completer_;  // started by setup(), joined when the issue thread ends
  std::thread issuer_;
};

}  // namespace asteria::real::detail

#include "core/real/nccl/nccl_engine.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <utility>

namespace asteria::real::detail {

std::string cuda_words(cudaError_t code) {
  return std::string(cudaGetErrorName(code)) + " (" + cudaGetErrorString(code) + ")";
}

void check_cuda(cudaError_t code, const std::string& what) {
  if (code == cudaSuccess) return;
  cudaGetLastError();  // clears a non-sticky error, so that later calls do not report it again
  throw std::runtime_error(what + ": CUDA error " + cuda_words(code));
}

std::string nccl_words(ncclResult_t code, ncclComm_t comm) {
  std::string text = ncclGetErrorString(code);
  const char* last = ncclGetLastError(comm);
  if (last != nullptr && *last != '\0') text += " (" + std::string(last) + ")";
  return text;
}

void check_nccl(ncclResult_t code, ncclComm_t comm, const std::string& what) {
  if (code != ncclSuccess) throw std::runtime_error(what + ": NCCL error " + nccl_words(code, comm));
}

// ---- DeviceScratch ------------------------------------------------------------------------

std::byte* DeviceScratch::reserve(std::size_t bytes, cudaStream_t stream, const std::string& what) {
  if (bytes <= capacity_) return data_;
  const std::size_t grown = std::max(bytes, 2 * capacity_);
  if (data_ != nullptr) {
    void* old = data_;
    data_ = nullptr;
    capacity_ = 0;
    check_cuda(cudaFreeAsync(old, stream), what + ": cudaFreeAsync of a scratch buffer");
  }
  void* fresh = nullptr;
  check_cuda(cudaMallocAsync(&fresh, grown, stream),
             what + ": cudaMallocAsync of " + std::to_string(grown) + " scratch bytes");
  data_ = static_cast<std::byte*>(fresh);
  capacity_ = grown;
  // Zeros: bytes-only reductions then add finite numbers.
  check_cuda(cudaMemsetAsync(data_, 0, grown, stream), what + ": cudaMemsetAsync of a scratch buffer");
  return data_;
}

void DeviceScratch::release(cudaStream_t stream) {
  if (data_ != nullptr) cudaFreeAsync(data_, stream);
  data_ = nullptr;
  capacity_ = 0;
}

// ---- NcclEngine ---------------------------------------------------------------------------

NcclEngine::NcclEngine(int rank_in_world, int cuda_device, bool checked)
    : world_rank(rank_in_world), device(cuda_device), check_calls(checked) {
  issuer_ = std::thread([this] { issue_loop(); });
}

NcclEngine::~NcclEngine() {
  {
    std::lock_guard lock(mutex_);
    stopped_ = true;
    changed_.notify_one();
  }
  issuer_.join();
}

void NcclEngine::post(std::function<void()> job) {
  std::lock_guard lock(mutex_);
  jobs_.push_back(std::move(job));
  changed_.notify_one();
}

void NcclEngine::setup(int world_size) {
  check_cuda(cudaSetDevice(device), "NcclComm: cudaSetDevice(" + std::to_string(device) + ")");
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "NcclComm: cudaStreamCreateWithFlags");
  void* words = nullptr;
  check_cuda(cudaMallocHost(&words, kHeaderBytes * static_cast<std::size_t>(world_size)),
             "NcclComm: cudaMallocHost of the header words");
  pinned = static_cast<std::byte*>(words);
  completer_ = std::thread([this] { complete_loop(); });
}

void NcclEngine::complete_later(InFlight entry) {
  std::lock_guard lock(done_mutex_);
  in_flight_.push_back(std::move(entry));
  done_changed_.notify_one();
}

void NcclEngine::quiesce() {
  if (!completer_.joinable()) return;
  std::promise<void> passed;
  std::future<void> reached = passed.get_future();
  InFlight marker;
  marker.done = [&passed](Status, double) { passed.set_value(); };
  complete_later(std::move(marker));
  reached.wait();
}

Status NcclEngine::await(const std::shared_ptr<NcclGroupState>& group, const std::string& what) {
  std::promise<Status> passed;
  std::future<Status> reached = passed.get_future();
  InFlight entry;
  entry.group = group;
  entry.what = what;
  entry.end = take_event(what);
  if (const cudaError_t recorded = cudaEventRecord(entry.end, stream); recorded != cudaSuccess) {
    give_event(entry.end);
    check_cuda(recorded, what + ": cudaEventRecord");
  }
  entry.done = [&passed](Status s, double) { passed.set_value(std::move(s)); };
  complete_later(std::move(entry));
  return reached.get();
}

cudaEvent_t NcclEngine::take_event(const std::string& what) {
  {
    std::lock_guard lock(events_mutex_);
    if (!events_.empty()) {
      cudaEvent_t e = events_.back();
      events_.pop_back();
      return e;
    }
  }
  cudaEvent_t e = nullptr;
  check_cuda(cudaEventCreate(&e), what + ": cudaEventCreate");
  return e;
}

void NcclEngine::give_event(cudaEvent_t event) {
  if (event == nullptr) return;
  std::lock_guard lock(events_mutex_);
  events_.push_back(event);
}

void NcclEngine::abort(NcclGroupState& group, const std::string& why) {
  std::lock_guard lock(nccl_mutex);
  if (group.comm == nullptr) return;
  ncclCommAbort(group.comm);
  group.comm = nullptr;
  group.aborted = why;
}

void NcclEngine::issue_loop() {
  cudaSetDevice(device);  // setup() checks it
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [this] { return stopped_ || !jobs_.empty(); });
      if (jobs_.empty()) break;  // stopped, every job run
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();  // jobs catch their own exceptions
  }
  if (completer_.joinable()) {
    {
      std::lock_guard lock(done_mutex_);
      done_stopped_ = true;
      done_changed_.notify_one();
    }
    completer_.join();
  }
  // Everything has completed: release the device resources, in stream order.
  if (stream != nullptr) {
    scratch.release(stream);
    meta.release(stream);
    cudaStreamSynchronize(stream);
    cudaStreamDestroy(stream);
  }
  for (cudaEvent_t e : events_) cudaEventDestroy(e);
  events_.clear();
  if (pinned != nullptr) cudaFreeHost(pinned);
  cudaGetLastError();
}

void NcclEngine::complete_loop() {
  cudaSetDevice(device);
  for (;;) {
    InFlight entry;
    {
      std::unique_lock lock(done_mutex_);
      done_changed_.wait(lock, [this] { return done_stopped_ || !in_flight_.empty(); });
      if (in_flight_.empty()) return;
      entry = std::move(in_flight_.front());
      in_flight_.pop_front();
    }
    if (entry.end == nullptr) {
      entry.done(Status::success(), 0.0);
      continue;
    }
    Status outcome = wait_for(entry);
    float ms = 0.0f;
    if (!outcome.ok() || entry.begin == nullptr || cudaEventElapsedTime(&ms, entry.begin, entry.end) != cudaSuccess)
      ms = 0.0f;
    cudaGetLastError();
    give_event(entry.begin);
    give_event(entry.end);
    entry.done(std::move(outcome), static_cast<double>(ms) * 1e-3);
  }
}

// Polls the entry's event, spinning briefly (short collectives) and then sleeping a little;
// every few milliseconds asks NCCL whether the group's communicator has failed (a peer gone),
// which a blocking cudaEventSynchronize could never notice.
Status NcclEngine::wait_for(const InFlight& entry) {
  using Clock = std::chrono::steady_clock;
  const auto started = Clock::now();
  auto checked = started;
  for (;;) {
    const cudaError_t state = cudaEventQuery(entry.end);
    if (state == cudaSuccess) break;
    if (state != cudaErrorNotReady) {
      cudaGetLastError();
      return Status(StatusCode::failed, entry.what + ": CUDA error " + cuda_words(state));
    }
    const auto now = Clock::now();
    if (entry.group != nullptr && now - checked >= std::chrono::milliseconds(5)) {
      checked = now;
      ncclComm_t comm = entry.group->comm;
      ncclResult_t async = ncclSuccess;
      const ncclResult_t asked = comm != nullptr ? ncclCommGetAsyncError(comm, &async) : ncclSuccess;
      if (asked != ncclSuccess || (async != ncclSuccess && async != ncclInProgress)) {
        const std::string why = entry.what + ": NCCL error " + nccl_words(asked != ncclSuccess ? asked : async, comm) +
                                "; the group's communicator was aborted";
        abort(*entry.group, why);
        return Status(StatusCode::failed, why);
      }
    }
    if (now - started < std::chrono::microseconds(100)) std::this_thread::yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  if (entry.group != nullptr) {
    std::lock_guard lock(nccl_mutex);
    if (!entry.group->aborted.empty()) return Status(StatusCode::failed, entry.what + ": " + entry.group->aborted);
  }
  return Status::success();
}

}  // namespace asteria::real::detail

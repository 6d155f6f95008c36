#pragma once
// The device stream on the real backend: one thread, work in submission order, each work
// either paced by a DeviceModel (modelled time: emulated kernels) or run and measured. Run on an
// asynchronous device (a GPU: `queue_device`), a body only queues its operations there; the
// work's Pending completes when the fence taken after the body is reached (a CUDA event), on a
// thread of its own, so that the stream's thread goes on queueing the next work meanwhile. Works
// complete in submission order either way.
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "core/ops/device.hpp"
#include "core/platform/execution.hpp"
#include "core/platform/executor.hpp"
#include "core/real/device_model.hpp"
#include "core/real/work_queue.hpp"

namespace asteria::real {

struct DeviceStreamOptions {
  std::string name = "device";
  // modelled: each work lasts its modelled duration (its body, if any, runs within it; a body
  // slower than the model makes it last as long as the body); measured: the body runs and takes
  // what it takes, a work without a body is instant. simulated is not a real-backend time.
  platform::TimeSource time = platform::TimeSource::modelled;
  DeviceModel model;  // used with modelled time, unless `duration` is given
  std::function<platform::Seconds(const platform::Cost&)> duration{};  // a hardware profile's cost model
  int unit = 0;       // the track is "gpu<unit> stream"
  // Not owned, must outlive the executor; null: bodies finish their work before they return.
  // With measured time, each work completes at the fence of this device taken after its body.
  ops::Device* queue_device = nullptr;
};

class DeviceStreamExecutor final : public platform::Executor {
 public:
  // Throws InputError for simulated time.
  DeviceStreamExecutor(DeviceStreamOptions options, platform::CompletionBoard& board, platform::Clock& clock,
                       platform::ActivitySink* activities = nullptr);
  std::string_view name() const noexcept override { return queue_.name(); }
  int concurrency() const noexcept override { return 1; }
  platform::Pending submit(platform::Work work) override;
  platform::TimeSource time() const noexcept { return time_; }
  const DeviceModel& model() const noexcept { return model_; }
  // Whether works complete at fences of an asynchronous device (measured time with a queue_device).
  bool fenced() const noexcept { return completions_ != nullptr; }

 private:
  // Completes fenced works in submission order once their fences are reached, and records their
  // activities from the start of the body to that moment.
  class FenceCompleter {
   public:
    struct Entry {
      std::unique_ptr<ops::Fence> fence;  // null: nothing left to wait for
      platform::Promise promise;
      Status status;
      platform::Activity activity;  // its end is set when the fence is reached
    };
    FenceCompleter(platform::Clock& clock, platform::ActivitySink* activities);
    ~FenceCompleter();  // completes everything handed over, then joins
    FenceCompleter(const FenceCompleter&) = delete;
    FenceCompleter& operator=(const FenceCompleter&) = delete;
    void hand_over(Entry entry);

   private:
    void serve();
    platform::Clock& clock_;
    platform::ActivitySink* activities_;
    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<Entry> entries_;
    bool stopping_ = false;
    std::thread thread_;  // last
  };

  Status execute(platform::Work& work);

  platform::TimeSource time_;
  DeviceModel model_;
  std::function<platform::Seconds(const platform::Cost&)> duration_;
  platform::Clock& clock_;
  platform::CompletionBoard& board_;
  ops::Device* queue_device_;
  std::string track_;
  // Before the queue: its thread hands works over, so it is destroyed (drained) after the queue.
  std::unique_ptr<FenceCompleter> completions_;
  WorkQueue queue_;  // last: its thread calls execute(), which reads the members above
};

}  // namespace asteria::real

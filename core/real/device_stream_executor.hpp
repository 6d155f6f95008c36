#pragma once
// The device stream on the real backend: one thread, work in submission order, each work
// either paced by a DeviceModel (modelled time: emulated kernels) or run on the CPU and measured.
#include <functional>
#include <string>

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

 private:
  Status execute(platform::Work& work);

  platform::TimeSource time_;
  DeviceModel model_;
  std::function<platform::Seconds(const platform::Cost&)> duration_;
  platform::Clock& clock_;
  WorkQueue queue_;  // last: its thread calls execute(), which reads the members above
};

}  // namespace asteria::real

#pragma once
// The device stream on the real backend: one thread, work in submission order, each work
// either paced by a DeviceModel (emulated kernels) or run on the CPU (see DeviceMode).
#include <string>

#include "core/platform/executor.hpp"
#include "core/real/device_model.hpp"
#include "core/real/work_queue.hpp"

namespace asteria::real {

struct DeviceStreamOptions {
  std::string name = "device";
  DeviceMode mode = DeviceMode::emulated;
  DeviceModel model;  // used in emulated mode
};

class DeviceStreamExecutor final : public platform::Executor {
 public:
  DeviceStreamExecutor(DeviceStreamOptions options, platform::CompletionBoard& board, platform::Clock& clock,
                       TraceSink* trace = nullptr);
  std::string_view name() const noexcept override { return queue_.name(); }
  int concurrency() const noexcept override { return 1; }
  platform::Pending submit(platform::Work work) override;
  DeviceMode mode() const noexcept { return mode_; }
  const DeviceModel& model() const noexcept { return model_; }

 private:
  Status execute(platform::Work& work);

  DeviceMode mode_;
  DeviceModel model_;
  platform::Clock& clock_;
  WorkQueue queue_;  // last: its thread calls execute(), which reads the members above
};

}  // namespace asteria::real

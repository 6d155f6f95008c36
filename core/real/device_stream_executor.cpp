#include "core/real/device_stream_executor.hpp"

namespace asteria::real {

DeviceStreamExecutor::DeviceStreamExecutor(DeviceStreamOptions options, platform::CompletionBoard& board,
                                           platform::Clock& clock, TraceSink* trace)
    : mode_(options.mode), model_(options.model), clock_(clock),
      queue_(std::move(options.name), 1, board, clock, trace, [this](platform::Work& w) { return execute(w); }) {}

platform::Pending DeviceStreamExecutor::submit(platform::Work work) { return queue_.submit(std::move(work)); }

Status DeviceStreamExecutor::execute(platform::Work& work) {
  if (mode_ == DeviceMode::cpu) return run_body(work);
  const platform::Seconds start = clock_.now();
  Status status = run_body(work);
  clock_.sleep_until(start + model_.duration(work.cost));
  return status;
}

}  // namespace asteria::real

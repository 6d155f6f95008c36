#pragma once
// Everything one rank of the runtime may touch: time, synchronization, executors, memory
// tiers, communication. Core code reaches the world only through this.
#include <memory>

#include "core/ops/cpu_device.hpp"
#include "core/platform/activity.hpp"
#include "core/platform/clock.hpp"
#include "core/platform/comm.hpp"
#include "core/platform/execution.hpp"
#include "core/platform/executor.hpp"
#include "core/platform/memory.hpp"
#include "core/platform/pending.hpp"
#include "core/platform/sync.hpp"

namespace asteria::platform {

class Platform {
 public:
  virtual ~Platform() = default;
  virtual std::string_view backend() const noexcept = 0;  // "real", "sim", "fake"
  virtual Clock& clock() = 0;
  virtual SyncFactory& sync() = 0;
  virtual CompletionBoard& completions() = 0;
  virtual Executor& device_stream() = 0;  // in-order: the training step's kernels
  virtual Executor& host_workers() = 0;   // a pool: preconditioner refreshes
  virtual Memory& memory() = 0;
  virtual Comm* comm() { return nullptr; }  // null for single-rank platforms
  // The same ranks for traffic off the step's critical path (refresh results): its collectives
  // never wait behind the step's own. A backend whose collectives do not queue behind each other
  // (the simulator, LocalComm) returns comm().
  virtual Comm* side_comm() { return comm(); }
  // Where this rank's activities are recorded; null when nothing records them.
  virtual ActivitySink* activities() { return nullptr; }
  // Where time comes from on this platform (whether its memory holds values: memory().holds_data()).
  virtual TimeSource time_source() const noexcept = 0;
  // Where the optimizers' per-step math (accumulate, apply, publish: core/ops) runs for state
  // resting in `tier`. By default the host CPU on the calling thread; a backend with threads or
  // an accelerator supplies its own.
  virtual ops::Device& math(Tier /*tier*/) { return host_math_; }

 private:
  ops::CpuDevice host_math_;
};

}  // namespace asteria::platform

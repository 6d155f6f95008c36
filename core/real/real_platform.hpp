#pragma once
// The real backend for one rank: wall clock, std:: synchronization, a device stream, a host
// worker pool, and memory tiers (NVMe through a provider). With an accelerator (a CUDA GPU when
// one is present and allowed, or one given), the device tier is its memory, the optimizers' math
// on state resting there runs on it (math(Tier::device)) and the device stream's works complete
// at its fences; without one, the device tier is host RAM with its own budget and the device
// stream is a CPU thread (emulated kernels, or CPU kernels measured).
#include <functional>
#include <memory>

#include "core/ops/cpu_device.hpp"
#include "core/platform/platform.hpp"
#include "core/real/accelerator.hpp"
#include "core/real/device_stream_executor.hpp"
#include "core/real/fork_join_pool.hpp"
#include "core/real/real_clock.hpp"
#include "core/real/real_memory.hpp"
#include "core/real/real_sync.hpp"
#include "core/real/thread_pool_executor.hpp"

namespace asteria::real {

enum class GpuUse {
  never,       // no accelerator: the device tier is host RAM even when a GPU is present
  if_present,  // the calling thread's CUDA device when built with CUDA and one answers; none otherwise
};

struct RealPlatformOptions {
  RealMemoryOptions memory;             // tier budgets and modelled links
  int host_threads = 0;                 // 0: default_host_threads() (all cores but one, at least 1)
  // modelled: device work lasts its modelled duration (emulated kernels); measured: it runs (on
  // a CPU core, or drives a GPU) and takes what it takes. Host work is measured either way.
  platform::TimeSource time = platform::TimeSource::modelled;
  DeviceModel device_model;             // paces the device stream with modelled time...
  std::function<platform::Seconds(const platform::Cost&)> device_seconds;  // ...unless this is given
  GpuUse gpu = GpuUse::never;
  // The accelerator to use, whatever `gpu` says (tests emulate one); null: as `gpu` chooses.
  std::shared_ptr<Accelerator> accelerator;
  NvmeTier* nvme = nullptr;             // not owned, must outlive the platform; null: no nvme tier
  platform::ActivitySink* activities = nullptr;  // not owned; where every executor and copy records
  platform::Comm* comm = nullptr;  // not owned, must outlive the platform; null: a single rank
  // The same ranks over another communicator (Platform::side_comm); null: comm. MPI runs one
  // progress thread per communicator, so refresh results on this one never hold up a gradient.
  platform::Comm* side_comm = nullptr;
  // Straggler injection: host work (refreshes) lasts this many times its run (>= 1).
  double host_slowdown = 1.0;
  // Threads that split one optimizer math operation on the host (Platform::math); 0: as many as
  // host workers.
  int math_threads = 0;
};

class RealPlatform final : public platform::Platform {
 public:
  explicit RealPlatform(RealPlatformOptions options = {});
  ~RealPlatform() override;
  RealPlatform(const RealPlatform&) = delete;
  RealPlatform& operator=(const RealPlatform&) = delete;

  std::string_view backend() const noexcept override { return "real"; }
  platform::Clock& clock() override { return clock_; }
  platform::SyncFactory& sync() override { return sync_; }
  platform::CompletionBoard& completions() override { return board_; }
  platform::Executor& device_stream() override { return *device_; }
  platform::Executor& host_workers() override { return *host_; }
  platform::Memory& memory() override { return *memory_; }
  platform::ActivitySink* activities() override { return options_.activities; }
  platform::TimeSource time_source() const noexcept override { return options_.time; }
  platform::Comm* comm() override { return options_.comm; }
  platform::Comm* side_comm() override { return options_.side_comm != nullptr ? options_.side_comm : options_.comm; }
  // The accelerator's device for the device tier when there is one; the host's cores otherwise.
  ops::Device& math(platform::Tier tier) override;

  RealMemory& real_memory() noexcept { return *memory_; }
  DeviceStreamExecutor& real_device_stream() noexcept { return *device_; }
  Accelerator* accelerator() noexcept { return accelerator_.get(); }
  const RealPlatformOptions& options() const noexcept { return options_; }

 private:
  RealPlatformOptions options_;
  std::shared_ptr<Accelerator> accelerator_;  // before the memory and executors that use it
  RealClock clock_;
  RealSync sync_;
  platform::CompletionBoard board_;  // before the executors: their Pendings point into it
  std::unique_ptr<RealMemory> memory_;
  std::unique_ptr<ThreadPoolExecutor> host_;
  ForkJoinPool math_threads_;
  ops::CpuDevice math_;
  std::unique_ptr<DeviceStreamExecutor> device_;  // last: destroyed (drained) first
};

}  // namespace asteria::real

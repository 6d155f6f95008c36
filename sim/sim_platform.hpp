#pragma once
// The Platform of one simulated unit (one rank): simulated clock, s4u synchronization, the
// unit's device stream and refresh workers, its memory tiers. Owned by a Simulation.
//
// Device stream: every work runs on the GPU host (a CPU device's on the CPU host), in submission
//   order: the compute of its pieces (CostModel::device_charge: the training step's matmuls at
//   the reduced-precision peak, the rest fp32), then their memory traffic on the unit's device
//   memory (a CPU device's: its DRAM, shared with the host workers).
// Host workers: N actors on the CPU host; every work is the compute of its pieces
//   (CostModel::host_worker_charge) on cpu.threads_per_worker cores, then their traffic on DRAM.
// Comm (several units): collectives as flows between the units' GPUs (comm/comm_hub.hpp).
// Activity tracks (platform::ActivitySink): "gpu<u> stream", "cpu<u> worker <k>", "link <name>",
// "disk nvme<u>", "gpu<u> comm"; counters "gpu<u> resident <tier> bytes".
#include <memory>

#include "core/platform/platform.hpp"
#include "hwmodels/cost_model.hpp"
#include "sim/actor_pool_executor.hpp"
#include "sim/comm/sim_comm.hpp"
#include "sim/sim_memory.hpp"
#include "sim/sim_sync.hpp"
#include "sim/timed_stream_executor.hpp"

namespace asteria::sim {

class SimPlatform final : public platform::Platform {
 public:
  // `hub`: where the ranks' collectives meet; null (one unit): the platform has no Comm.
  SimPlatform(const SimulationOptions& options, const UnitResources& resources, const hw::CostModel& costs,
              Recorder& recorder, CommHub* hub = nullptr);
  ~SimPlatform() override;
  SimPlatform(const SimPlatform&) = delete;
  SimPlatform& operator=(const SimPlatform&) = delete;

  std::string_view backend() const noexcept override { return "sim"; }
  platform::Clock& clock() override { return clock_; }
  platform::SyncFactory& sync() override { return sync_; }
  platform::CompletionBoard& completions() override { return board_; }
  platform::Executor& device_stream() override {
    return device_timed_ ? static_cast<platform::Executor&>(*device_timed_) : *device_;
  }
  platform::Executor& host_workers() override { return *host_; }
  platform::Memory& memory() override { return *memory_; }
  platform::ActivitySink* activities() override { return activities_; }
  platform::Comm* comm() override { return comm_.get(); }
  platform::TimeSource time_source() const noexcept override { return platform::TimeSource::simulated; }

  int unit() const noexcept { return unit_; }
  void start_services();  // spawns the executors' actors (Simulation::run does, once)
  // Every main has returned: timed work stops, as SimGrid kills the daemon actors (Simulation).
  void stop_services();

 private:
  int unit_;
  SimClock clock_;
  SimSyncFactory sync_;
  platform::CompletionBoard board_;  // before the executors and memory: their Pendings point into it
  platform::ActivitySink* activities_;  // not owned
  CoreLoad cores_;                      // before the executors and memory, which hold it
  std::unique_ptr<SimMemory> memory_;
  std::unique_ptr<ActorPoolExecutor> host_;
  std::unique_ptr<ActorPoolExecutor> device_;  // one of these two: an actor, or timers when nothing
  std::unique_ptr<TimedStreamExecutor> device_timed_;  // shares the GPU and items have no body
  std::unique_ptr<SimComm> comm_;
};

}  // namespace asteria::sim

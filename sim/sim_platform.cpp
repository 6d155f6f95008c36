#include "sim/sim_platform.hpp"

#include <string>
#include <utility>
#include <vector>

namespace asteria::sim {

namespace {

ActorPoolSpec device_stream_spec(const SimulationOptions& options, const UnitResources& r,
                                 const hw::CostModel& costs, platform::ActivitySink* sink, CoreLoad& cores) {
  ActorPoolSpec spec;
  spec.name = platform::device_stream_track(r.unit);
  spec.tracks = {spec.name};
  // A CPU device (the real backend's CPU mode) runs on the host's cores: its kernels and the host
  // workers share them, as the threads of a real CPU run do.
  if (options.profile.device == hw::DeviceKind::cpu) {
    spec.host = r.cpu;
    spec.threads_per_item = static_cast<int>(options.profile.gpu.device_threads.value);
    spec.cores = &cores;
  } else {
    spec.host = r.gpu;
    spec.exclusive = true;  // only the stream runs on gpu<u> and its traffic on hbm-traffic<u>
  }
  spec.charge = [&costs](const platform::Cost& cost) { return costs.device_charge(cost); };
  // A CPU device's memory is the host's DRAM, shared with the host workers.
  spec.memory = options.profile.device == hw::DeviceKind::cpu ? r.cpu_memory : r.gpu_memory;
  spec.run_bodies = options.numerics != platform::Numerics::shapes;
  spec.activities = sink;
  // Work submitted to the idle stream starts once it has woken; host workers pay
  // cpu.task_latency per job instead.
  spec.wake_seconds = options.profile.gpu.wake_latency.value;
  return spec;
}

ActorPoolSpec host_workers_spec(const SimulationOptions& options, const UnitResources& r,
                                const hw::CostModel& costs, platform::ActivitySink* sink, CoreLoad& cores) {
  ActorPoolSpec spec;
  const std::string cpu = "cpu" + std::to_string(r.unit);
  spec.name = cpu + " workers";
  const int workers =
      options.host_workers_per_unit > 0 ? options.host_workers_per_unit : default_host_workers(options.profile);
  for (int k = 0; k < workers; ++k) spec.tracks.push_back(platform::host_worker_track(r.unit, k));
  spec.host = r.cpu;
  spec.threads_per_item = static_cast<int>(options.profile.cpu.threads_per_worker.value);
  spec.cores = &cores;
  const double slowdown = static_cast<std::size_t>(r.unit) < options.host_slowdown.size()
                              ? options.host_slowdown[static_cast<std::size_t>(r.unit)]
                              : 1.0;
  spec.charge = [&costs, slowdown](const platform::Cost& cost) {
    hw::CostModel::Charge charge = costs.host_worker_charge(cost);
    charge.compute_seconds *= slowdown;  // a straggler's host (simulation_options.hpp)
    return charge;
  };
  spec.memory = r.cpu_memory;
  spec.run_bodies = options.numerics != platform::Numerics::shapes;
  spec.activities = sink;
  return spec;
}

}  // namespace

SimPlatform::SimPlatform(const SimulationOptions& options, const UnitResources& resources,
                         const hw::CostModel& costs, Recorder& recorder, CommHub* hub)
    : unit_(resources.unit),
      board_(sync_, &clock_),
      activities_(options.activities ? options.activities(resources.unit) : nullptr),
      cores_(resources.cpu) {
  MemorySpec memory;
  memory.resources = resources;
  memory.budgets = options.budgets ? *options.budgets : budgets_from(options.profile);
  memory.holds_data = options.numerics != platform::Numerics::shapes;
  memory.nvme_latency = options.profile.nvme.latency.value;
  memory.activities = activities_;
  memory.copies_use_cores = options.profile.device == hw::DeviceKind::cpu;
  memory.cores = &cores_;
  memory_ = std::make_unique<SimMemory>(memory, board_, recorder);
  host_ = std::make_unique<ActorPoolExecutor>(host_workers_spec(options, resources, costs, activities_, cores_), board_,
                                              recorder);
  ActorPoolSpec device = device_stream_spec(options, resources, costs, activities_, cores_);
  if (TimedStreamExecutor::serves(device))
    device_timed_ = std::make_unique<TimedStreamExecutor>(std::move(device), board_, recorder);
  else
    device_ = std::make_unique<ActorPoolExecutor>(std::move(device), board_, recorder);
  if (hub != nullptr)
    comm_ = std::make_unique<SimComm>(*hub, RankContext{unit_, resources.cpu, &board_, activities_}, options.units);
}

SimPlatform::~SimPlatform() = default;

void SimPlatform::start_services() {
  if (device_timed_) device_timed_->start();
  else device_->start();
  host_->start();
}

void SimPlatform::stop_services() {
  if (device_timed_) device_timed_->stop();
  clock_.stop();
}

}  // namespace asteria::sim

#pragma once
// The platform of a run in this process: the real backend for measured or modelled time (threads,
// the device stream paced by a device model or run on a CPU thread, NVMe files), or the fake
// backend (one thread, every duration modelled) for simulated time. The simulator's platforms
// are the Simulation's (sim/).
#include <functional>
#include <memory>
#include <string>

#include "apps/asteria/run_config_options.hpp"
#include "core/platform/platform.hpp"

namespace asteria::cli {

// How long device work lasts when time is modelled or simulated, and how it is described.
struct DeviceTime {
  std::function<platform::Seconds(const platform::Cost&)> seconds;
  std::string description;       // "device kernels modelled as 67 TFLOP/s, ..."
  double fake_host_flops = 20e9;  // simulated time: refresh speed of one host worker
};

class RunPlatform {
 public:
  // From the spec: time, tier budgets, host workers, NVMe directory. `activities` may be null;
  // `comm` (not owned, outlives the platform): the data-parallel ranks of a real run (null: one).
  // `use_gpu`: on the real backend, the device tier is a GPU's memory and the optimizer's math on
  // state resting there runs on that GPU, when one answers (a model trained on it).
  RunPlatform(const RunConfig& spec, const DeviceTime& device, platform::ActivitySink* activities,
              platform::Comm* comm = nullptr, platform::Comm* side_comm = nullptr, bool use_gpu = false);
  ~RunPlatform();
  RunPlatform(const RunPlatform&) = delete;
  RunPlatform& operator=(const RunPlatform&) = delete;
  platform::Platform& get() noexcept { return *platform_; }
  int host_workers() const noexcept { return host_workers_; }
  // "real backend (wall clock): emulated device kernels (...), 1 host worker thread, ..." for reports.
  const std::string& description() const noexcept { return description_; }

 private:
  struct Nvme;
  std::unique_ptr<Nvme> nvme_;  // before the platform: outlives it
  std::unique_ptr<platform::Platform> platform_;
  int host_workers_ = 1;
  std::string description_;
};

}  // namespace asteria::cli

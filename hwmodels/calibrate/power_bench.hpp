#pragma once
// Power from the machine's own energy counters (core/real/energy_counters.hpp: RAPL for the CPU
// packages, NVML for the GPUs): the mean draw while the machine rests and while a workload runs,
// for a calibrated profile's power section. A machine without a counter this process may read
// gives no measurement (the base profile's figures are then copied).
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "hwmodels/calibrate/measurement.hpp"

namespace asteria::hw::calibrate {

struct PowerPlan {
  double idle_seconds = 1.0;  // the rest measured
  double busy_seconds = 1.0;  // at least this long for the CPU's all-cores load
  std::filesystem::path powercap_root = "/sys/class/powercap";  // RAPL zones (tests: a fake tree)
  bool nvml = true;           // look for NVIDIA's library
};

struct PowerMeasurements {
  Measured cpu_idle;       // W, every CPU package at rest (RAPL)
  Measured cpu_all_cores;  // W, every CPU package with every core running SGEMM (RAPL)
  Measured gpu_idle;       // W, every GPU together at rest (NVML)
  Measured gpu_busy;       // W, every GPU together while the GPU benchmarks run on device 0 (NVML)
};

// The machine's counters split by kind, each read around a piece of work.
class PowerMeter {
 public:
  explicit PowerMeter(const PowerPlan& plan);
  ~PowerMeter();
  PowerMeter(const PowerMeter&) = delete;
  PowerMeter& operator=(const PowerMeter&) = delete;

  bool has_cpu() const noexcept;
  bool has_gpu() const noexcept;
  // Runs `work`, and gives the mean power (W) of the CPU packages / the GPUs meanwhile; invalid
  // when that counter is absent or reads no energy. `what` names the work in the method text.
  Measured cpu_while(const std::function<void()>& work, const std::string& what);
  Measured gpu_while(const std::function<void()>& work, const std::string& what);

 private:
  struct Counters;
  std::unique_ptr<Counters> counters_;
};

}  // namespace asteria::hw::calibrate

#include "hwmodels/calibrate/power_bench.hpp"

#include <cstdio>

#include "core/real/energy_counters.hpp"

namespace asteria::hw::calibrate {

struct PowerMeter::Counters {
  real::EnergyCounters cpu;  // RAPL only
  real::EnergyCounters gpu;  // NVML only: an empty powercap root holds no zone
  explicit Counters(const PowerPlan& plan)
      : cpu(plan.powercap_root, /*nvml=*/false), gpu(std::filesystem::path{}, plan.nvml) {}
};

namespace {

Measured mean_power(real::EnergyCounters& counters, const std::function<void()>& work, const std::string& what) {
  counters.restart();
  const WallClock::time_point start = WallClock::now();
  work();  // always: the caller wants the work done, measured or not
  const double seconds = seconds_between(start, WallClock::now());
  if (!counters.available()) return {};
  const double joules = counters.joules();
  if (!(seconds > 0.0) || !(joules > 0.0)) return {};
  char text[64];
  std::snprintf(text, sizeof text, " over %.2f s", seconds);
  return Measured{joules / seconds, counters.description() + ", " + what + text};
}

}  // namespace

PowerMeter::PowerMeter(const PowerPlan& plan) : counters_(std::make_unique<Counters>(plan)) {}
PowerMeter::~PowerMeter() = default;
bool PowerMeter::has_cpu() const noexcept { return counters_->cpu.available(); }
bool PowerMeter::has_gpu() const noexcept { return counters_->gpu.available(); }

Measured PowerMeter::cpu_while(const std::function<void()>& work, const std::string& what) {
  return mean_power(counters_->cpu, work, what);
}
Measured PowerMeter::gpu_while(const std::function<void()>& work, const std::string& what) {
  return mean_power(counters_->gpu, work, what);
}

}  // namespace asteria::hw::calibrate

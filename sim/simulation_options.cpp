#include "sim/simulation_options.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>

#include "core/common/error.hpp"
#include "core/common/number_text.hpp"

namespace asteria::sim {

namespace {

std::string source_of(const hw::HardwareProfile& profile) {
  if (!profile.origin.empty()) return profile.origin;
  return "profile '" + profile.name + "'";
}

class Checker {
 public:
  explicit Checker(const hw::HardwareProfile& profile) : source_(source_of(profile)) {}

  void positive(const hw::Quantity& q, const char* field) const {
    if (!(q.value > 0.0) || !std::isfinite(q.value))
      throw InputError(source_, field, "expected a positive finite number, found " + std::to_string(q.value));
  }
  void non_negative(const hw::Quantity& q, const char* field) const {
    if (!(q.value >= 0.0) || !std::isfinite(q.value))
      throw InputError(source_, field, "expected a finite number >= 0, found " + std::to_string(q.value));
  }
  void whole_at_least_one(const hw::Quantity& q, const char* field) const {
    if (!(q.value >= 1.0) || q.value != std::floor(q.value))
      throw InputError(source_, field, "expected a whole number >= 1, found " + std::to_string(q.value));
  }
  void link(const hw::LinkSpec& l, const char* bandwidth_field, const char* latency_field) const {
    positive(l.bandwidth, bandwidth_field);
    non_negative(l.latency, latency_field);
  }

 private:
  std::string source_;
};

}  // namespace

long long max_simulated_actors() {
  long long maps = 65530;  // Linux's default vm.max_map_count
  if (std::ifstream in("/proc/sys/vm/max_map_count"); in) in >> maps;
  // Two mappings per actor (its stack and a guard page), a tenth kept for everything else.
  return std::max(1LL, maps / 2 - maps / 10);
}

int max_platform_units() {
  return static_cast<int>(std::sqrt(kPlatformBuildBudgetSeconds / kPlatformSecondsPerUnitSquared));
}

void check_platform_units(int units, const hw::HardwareProfile& p, const std::string& source,
                          const std::string& field) {
  // Every unit's links and hosts are built, mirrors' too: refuse a platform that takes ages.
  const int most = max_platform_units();
  if (units <= most) return;
  const int per_node = std::max(1, p.units_per_node());
  const double seconds = kPlatformSecondsPerUnitSquared * static_cast<double>(units) * units;
  throw InputError(source, field,
                   "at most " + std::to_string(most) + " units, mirrors included (" + std::to_string(most / per_node) +
                       " nodes of " + p.name + "): SimGrid builds the platform in about " +
                       significant(kPlatformSecondsPerUnitSquared, 2) + " s x units^2 (" +
                       significant(kPlatformBuildBudgetSeconds, 3) + " s at " + std::to_string(most) + "); found " +
                       std::to_string(units) + " units (" + std::to_string((units + per_node - 1) / per_node) +
                       " nodes, about " + significant(seconds / 3600.0, 3) +
                       " h to build); use fewer --nodes or --units (--simulated-nodes does not help: every node's "
                       "links are built)");
}

int running_units(const SimulationOptions& options) {
  return options.simulated_units > 0 && options.simulated_units < options.units ? options.simulated_units
                                                                                 : options.units;
}

void validate(const SimulationOptions& options) {
  const hw::HardwareProfile& p = options.profile;
  const Checker check(p);
  for (double s : options.host_slowdown)
    if (!(s >= 1.0) || !std::isfinite(s))
      throw InputError("simulation options", "host_slowdown", "expected factors >= 1, found " + std::to_string(s));
  if (options.units < 1)
    throw InputError("simulation options", "units", "expected at least 1 unit, found " + std::to_string(options.units));
  if (options.simulated_units < 0 || options.simulated_units > options.units)
    throw InputError("simulation options", "simulated_units",
                     "expected 0 (every unit) to units (" + std::to_string(options.units) + "), found " +
                         std::to_string(options.simulated_units));
  if (options.host_workers_per_unit < 0)
    throw InputError("simulation options", "host_workers_per_unit",
                     "expected 0 (the default) or more, found " + std::to_string(options.host_workers_per_unit));
  check_platform_units(options.units, p, "simulation options", "units");
  // Every simulated actor has its own stack mapping: past the process's mapping limit SimGrid
  // aborts while creating them. A unit's host workers start as their work needs them (the
  // Recorder's budget fails a run that needs more); its fixed actors and one worker each must fit.
  const long long actors = static_cast<long long>(running_units(options)) * (1 + kActorsPerUnit);
  if (const long long most = options.max_actors > 0 ? options.max_actors : max_simulated_actors(); actors > most)
    throw InputError("simulation options", "host_workers_per_unit",
                     "at most " + std::to_string(most) + " simulated actors (each a stack mapping; vm.max_map_count / 2), "
                         "found " + std::to_string(running_units(options)) + " running units x (1 host worker + " +
                         std::to_string(kActorsPerUnit) + ") = " + std::to_string(actors) +
                         "; use fewer --units/--nodes, or --simulated-nodes");

  check.positive(p.gpu.fp32_flops, "gpu.fp32_flops");
  check.positive(p.gpu.bf16_flops, "gpu.bf16_flops");
  for (std::size_t i = 0; i < hw::GemmEfficiency::kClasses; ++i)
    check.positive(p.gpu.gemm_efficiency.by_class(i),
                   ("gpu.gemm_efficiency." + std::string(hw::GemmEfficiency::kNames[i])).c_str());
  check.positive(p.gpu.memory_bandwidth, "gpu.memory_bandwidth");
  check.non_negative(p.gpu.launch_latency, "gpu.launch_latency");
  check.non_negative(p.gpu.wake_latency, "gpu.wake_latency");
  check.non_negative(p.gpu.eigh_seconds_per_n3, "gpu.eigh_seconds_per_n3");
  check.non_negative(p.gpu.qr_seconds_per_n3, "gpu.qr_seconds_per_n3");

  check.whole_at_least_one(p.cpu.cores, "cpu.cores");
  check.whole_at_least_one(p.cpu.threads_per_worker, "cpu.threads_per_worker");
  if (p.cpu.threads_per_worker.value > p.cpu.cores.value)
    throw InputError(source_of(p), "cpu.threads_per_worker", "expected at most cpu.cores threads per worker");
  check.positive(p.cpu.gemm_flops_per_core, "cpu.gemm_flops_per_core");
  check.positive(p.cpu.memory_bandwidth, "cpu.memory_bandwidth");
  check.non_negative(p.cpu.eigh_seconds_per_n3, "cpu.eigh_seconds_per_n3");
  check.non_negative(p.cpu.qr_seconds_per_n3, "cpu.qr_seconds_per_n3");
  check.non_negative(p.cpu.task_latency, "cpu.task_latency");
  if (p.device == hw::DeviceKind::cpu) {  // the device stream runs on host cores, in host memory
    check.whole_at_least_one(p.gpu.device_threads, "gpu.device_threads");
    if (!p.host_memory.unified)
      throw InputError(source_of(p), "host_memory.unified", "expected true with device: cpu");
  }

  check.link(p.host_to_device, "host_to_device.bandwidth", "host_to_device.latency");
  check.link(p.device_to_host, "device_to_host.bandwidth", "device_to_host.latency");
  check.positive(p.nvme.read_bandwidth, "nvme.read_bandwidth");
  check.positive(p.nvme.write_bandwidth, "nvme.write_bandwidth");
  check.non_negative(p.nvme.latency, "nvme.latency");

  check.whole_at_least_one(p.node.units_per_node, "node.units_per_node");
  if (options.units > p.units_per_node()) {  // several nodes: they talk through NICs
    check.whole_at_least_one(p.node.nics_per_node, "node.nics_per_node");
    check.link(p.node.nic, "node.nic.bandwidth", "node.nic.latency");
  }
  if (std::min(options.units, p.units_per_node()) > 1)
    check.link(p.node.gpu_link, "node.gpu_link.bandwidth", "node.gpu_link.latency");
  if (running_units(options) < options.units) {
    if (options.simulated_units % p.units_per_node() != 0)
      throw InputError("simulation options", "simulated_units",
                       "expected whole nodes of " + std::to_string(p.units_per_node()) + " units, found " +
                           std::to_string(options.simulated_units));
    if (options.numerics != platform::Numerics::shapes)
      throw InputError("simulation options", "simulated_units",
                       "representative ranks hold no values: expected numerics shapes (data-free)");
  }
}

}  // namespace asteria::sim

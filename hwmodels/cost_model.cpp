#include "hwmodels/cost_model.hpp"

#include <algorithm>
#include <utility>

namespace asteria::hw {
namespace {

double cube(std::int64_t n) {
  const auto d = static_cast<double>(n);
  return d * d * d;
}

}  // namespace

CostModel::CostModel(HardwareProfile profile, Precision gemm_precision)
    : profile_(std::move(profile)), gemm_precision_(gemm_precision) {}

double CostModel::reduced_peak() const noexcept {
  return gemm_precision_ == Precision::bf16 ? profile_.gpu.bf16_flops.value : profile_.gpu.fp32_flops.value;
}

CostModel::Charge CostModel::device_charge_at(const platform::Cost& cost, double gemm_peak) const {
  const GpuSpec& gpu = profile_.gpu;
  const double launch = gpu.launch_latency.value;
  switch (cost.kind) {
    case platform::WorkKind::gemm:
    case platform::WorkKind::newton:
      return {cost.flops / (gemm_peak * gpu.efficiency_for(cost.dimension)) + launch, cost.bytes};
    case platform::WorkKind::eigh: return {gpu.eigh_seconds_per_n3.value * cube(cost.dimension) + launch, 0.0};
    case platform::WorkKind::qr: return {gpu.qr_seconds_per_n3.value * cube(cost.dimension) + launch, 0.0};
    case platform::WorkKind::elementwise:
      return {cost.flops * gpu.elementwise_seconds_per_flop.value + launch, cost.bytes};
    case platform::WorkKind::other: break;
  }
  return {std::max(cost.flops / gpu.fp32_flops.value, cost.bytes / gpu.memory_bandwidth.value) + launch, 0.0};
}

CostModel::Charge CostModel::device_charge(const platform::Cost& cost) const {
  return device_charge_at(cost, cost.reduced_precision ? reduced_peak() : profile_.gpu.fp32_flops.value);
}

CostModel::Charge CostModel::host_worker_charge(const platform::Cost& cost) const {
  const CpuSpec& cpu = profile_.cpu;
  const double task = cpu.task_latency.value;
  const double compute = cost.flops / (cpu.gemm_flops_per_core.value * cpu.threads_per_worker.value);
  switch (cost.kind) {
    case platform::WorkKind::eigh: return {cpu.eigh_seconds_per_n3.value * cube(cost.dimension) + task, 0.0};
    case platform::WorkKind::qr: return {cpu.qr_seconds_per_n3.value * cube(cost.dimension) + task, 0.0};
    case platform::WorkKind::gemm:
    case platform::WorkKind::newton: return {compute + task, cost.bytes};
    case platform::WorkKind::elementwise:
      return {cost.flops * cpu.elementwise_seconds_per_flop.value + task, cost.bytes};
    case platform::WorkKind::other: break;
  }
  return {std::max(compute, cost.bytes / cpu.memory_bandwidth.value) + task, 0.0};
}

double CostModel::gpu_step_seconds(const platform::Cost& cost) const {
  return device_charge_at(cost, reduced_peak()).seconds_alone(device_memory_bandwidth());
}

double CostModel::gpu_optimizer_seconds(const platform::Cost& cost) const {
  return device_charge_at(cost, profile_.gpu.fp32_flops.value).seconds_alone(device_memory_bandwidth());
}

double CostModel::cpu_worker_seconds(const platform::Cost& cost) const {
  return host_worker_charge(cost).seconds_alone(host_memory_bandwidth());
}

double CostModel::transfer_seconds(const LinkSpec& link, double bytes) {
  return link.latency.value + bytes / link.bandwidth.value;
}

double CostModel::nvme_read_seconds(double bytes) const {
  return profile_.nvme.latency.value + bytes / profile_.nvme.read_bandwidth.value;
}

double CostModel::nvme_write_seconds(double bytes) const {
  return profile_.nvme.latency.value + bytes / profile_.nvme.write_bandwidth.value;
}

}  // namespace asteria::hw

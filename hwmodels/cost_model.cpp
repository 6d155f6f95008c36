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

double CostModel::gpu_seconds(const platform::Cost& cost, double gemm_peak) const {
  const GpuSpec& gpu = profile_.gpu;
  const double launch = gpu.launch_latency.value;
  switch (cost.kind) {
    case platform::WorkKind::gemm:
    case platform::WorkKind::newton:
      return cost.flops / (gemm_peak * gpu.gemm_efficiency.value) + launch;
    case platform::WorkKind::eigh: return gpu.eigh_seconds_per_n3.value * cube(cost.dimension);
    case platform::WorkKind::qr: return gpu.qr_seconds_per_n3.value * cube(cost.dimension);
    case platform::WorkKind::elementwise: return cost.bytes / gpu.memory_bandwidth.value + launch;
    case platform::WorkKind::other: break;
  }
  return std::max(cost.flops / gpu.fp32_flops.value, cost.bytes / gpu.memory_bandwidth.value) + launch;
}

double CostModel::gpu_step_seconds(const platform::Cost& cost) const {
  const GpuSpec& gpu = profile_.gpu;
  return gpu_seconds(cost, gemm_precision_ == Precision::bf16 ? gpu.bf16_flops.value : gpu.fp32_flops.value);
}

double CostModel::gpu_optimizer_seconds(const platform::Cost& cost) const {
  return gpu_seconds(cost, profile_.gpu.fp32_flops.value);
}

double CostModel::cpu_worker_seconds(const platform::Cost& cost) const {
  const CpuSpec& cpu = profile_.cpu;
  const double compute = cost.flops / (cpu.gemm_flops_per_core.value * cpu.threads_per_worker.value);
  const double memory = cost.bytes / cpu.memory_bandwidth.value;
  switch (cost.kind) {
    case platform::WorkKind::eigh: return cpu.eigh_seconds_per_n3.value * cube(cost.dimension);
    case platform::WorkKind::qr: return cpu.qr_seconds_per_n3.value * cube(cost.dimension);
    case platform::WorkKind::gemm:
    case platform::WorkKind::newton: return compute;
    case platform::WorkKind::elementwise: return memory;
    case platform::WorkKind::other: break;
  }
  return std::max(compute, memory);
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

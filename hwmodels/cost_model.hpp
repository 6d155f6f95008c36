#pragma once
// What a work item costs on a profile's resources, in seconds when it runs alone. The simulator
// turns these into amounts of work on simulated hosts and links (so concurrent work shares
// them); the emulating real backend sleeps for them.
//
//   GPU kernel   gemm / newton:   flops / (bf16-or-fp32 peak · gemm_efficiency) + launch latency
//                eigh:            gpu.eigh_seconds_per_n3 · n³ (n = Cost::dimension)
//                qr:              gpu.qr_seconds_per_n3 · n³
//                elementwise:     bytes / gpu.memory_bandwidth + launch latency
//                other:           max(flops / fp32 peak, bytes / bandwidth) + launch latency
//   refresh worker (one host worker, cpu.threads_per_worker threads)
//                eigh / qr:       cpu.{eigh,qr}_seconds_per_n3 · n³
//                gemm / newton:   flops / (gemm_flops_per_core · threads_per_worker)
//                elementwise:     bytes / cpu.memory_bandwidth
//                other:           max of the two above
//   transfer     latency + bytes / bandwidth on the link
#include "core/platform/cost.hpp"
#include "hwmodels/profile.hpp"

namespace asteria::hw {

enum class Precision { fp32, bf16 };

class CostModel {
 public:
  // `gemm_precision`: which GPU peak the training step's GEMMs run at (bf16 mixed precision by
  // default; optimizer kernels are fp32 and always use the fp32 peak).
  explicit CostModel(HardwareProfile profile, Precision gemm_precision = Precision::bf16);

  const HardwareProfile& profile() const noexcept { return profile_; }

  // Training-step kernels (forward, backward): GEMMs at `gemm_precision`.
  double gpu_step_seconds(const platform::Cost& cost) const;
  // Optimizer kernels on the GPU (accumulate, apply, publish; a GPU refresh): fp32.
  double gpu_optimizer_seconds(const platform::Cost& cost) const;
  // A refresh (or any host work) on one host worker.
  double cpu_worker_seconds(const platform::Cost& cost) const;
  // Time of `bytes` alone on `link`.
  static double transfer_seconds(const LinkSpec& link, double bytes);
  // NVMe request of `bytes` alone.
  double nvme_read_seconds(double bytes) const;
  double nvme_write_seconds(double bytes) const;

 private:
  double gpu_seconds(const platform::Cost& cost, double gemm_peak) const;
  HardwareProfile profile_;
  Precision gemm_precision_;
};

}  // namespace asteria::hw

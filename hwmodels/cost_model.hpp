#pragma once
// What a work item costs on a profile's resources. Each piece is charged as compute time plus
// memory traffic, so the simulator can let concurrent work share memory bandwidth; alone, a piece
// takes compute_seconds + memory_bytes / bandwidth. The emulating real backend sleeps for that.
//
//   device stream (GPU, or host cores with device: cpu); peak = bf16 for reduced-precision pieces,
//   else fp32; eff(n) = gpu.gemm_efficiency of the size class of n = Cost::dimension
//                  compute                                           memory bytes
//   gemm, newton   flops / (peak · eff(n)) + launch_latency          bytes
//   eigh           gpu.eigh_seconds_per_n3 · n³ + launch_latency     0
//   qr             gpu.qr_seconds_per_n3 · n³ + launch_latency       0
//   elementwise    flops · gpu.elementwise_seconds_per_flop + launch  bytes
//   other          max(flops / fp32 peak, bytes / bandwidth) + launch_latency   0
//   memory bandwidth: gpu.memory_bandwidth
//
//   host worker (cpu.threads_per_worker threads; rate = cpu.gemm_flops_per_core · threads)
//   gemm, newton   flops / rate + task_latency                       bytes
//   eigh, qr       cpu.{eigh,qr}_seconds_per_n3 · n³ + task_latency  0
//   elementwise    flops · cpu.elementwise_seconds_per_flop + task    bytes
//   other          max(flops / rate, bytes / bandwidth) + task_latency   0
//   memory bandwidth: cpu.memory_bandwidth
//
// A gemm-kind piece is a fused sequence: its GEMMs and the memory-bound kernels around them
// (norms, activations, softmax, optimizer elementwise), whose declared traffic is charged at
// memory bandwidth on top of the GEMM time.
//
//   transfer       latency + bytes / bandwidth on the link
//   NVMe           latency + bytes / read (write) bandwidth
#include "core/platform/cost.hpp"
#include "hwmodels/profile.hpp"

namespace asteria::hw {

enum class Precision { fp32, bf16 };

class CostModel {
 public:
  // What one piece costs a stream: its time alone is compute_seconds + memory_bytes / bandwidth.
  struct Charge {
    double compute_seconds = 0.0;
    double memory_bytes = 0.0;

    double seconds_alone(double memory_bandwidth) const { return compute_seconds + memory_bytes / memory_bandwidth; }
    bool operator==(const Charge&) const = default;
  };

  // `gemm_precision`: the peak reduced-precision GEMMs (the training step's, Cost::
  // reduced_precision) run at: bf16 mixed precision by default; fp32 charges them at the fp32
  // peak. Other pieces always use the fp32 peak.
  explicit CostModel(HardwareProfile profile, Precision gemm_precision = Precision::bf16);

  const HardwareProfile& profile() const noexcept { return profile_; }

  // A piece on the device stream; its GEMM peak follows cost.reduced_precision.
  Charge device_charge(const platform::Cost& cost) const;
  // A piece on one host worker (cpu.threads_per_worker threads).
  Charge host_worker_charge(const platform::Cost& cost) const;
  double device_memory_bandwidth() const noexcept { return profile_.gpu.memory_bandwidth.value; }
  double host_memory_bandwidth() const noexcept { return profile_.cpu.memory_bandwidth.value; }

  // Seconds alone (compute + memory / bandwidth). Training-step kernels: GEMMs at
  // `gemm_precision` whatever the piece says.
  double gpu_step_seconds(const platform::Cost& cost) const;
  // Optimizer kernels on the device (accumulate, apply, publish; a device refresh): fp32.
  double gpu_optimizer_seconds(const platform::Cost& cost) const;
  // A refresh (or any host work) on one host worker.
  double cpu_worker_seconds(const platform::Cost& cost) const;
  // Time of `bytes` alone on `link`.
  static double transfer_seconds(const LinkSpec& link, double bytes);
  // NVMe request of `bytes` alone.
  double nvme_read_seconds(double bytes) const;
  double nvme_write_seconds(double bytes) const;

 private:
  Charge device_charge_at(const platform::Cost& cost, double gemm_peak) const;
  double reduced_peak() const noexcept;

  HardwareProfile profile_;
  Precision gemm_precision_;
};

}  // namespace asteria::hw

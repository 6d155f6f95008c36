// The cost model on a hand-made profile with round numbers; every expected time is worked out
// by hand in the comment beside it.
#include "hwmodels/cost_model.hpp"

#include <gtest/gtest.h>

namespace asteria::hw {
namespace {

using platform::Cost;
using platform::WorkKind;
using Charge = CostModel::Charge;

Quantity q(double value) { return Quantity{value, Provenance::derived, "test"}; }

HardwareProfile tiny_machine() {
  HardwareProfile p;
  p.name = "tiny";
  p.gpu.fp32_flops = q(10e12);
  p.gpu.bf16_flops = q(100e12);
  p.gpu.gemm_efficiency.below_256 = q(0.125);
  p.gpu.gemm_efficiency.below_1024 = q(0.25);
  p.gpu.gemm_efficiency.below_4096 = q(0.4);
  p.gpu.gemm_efficiency.from_4096 = q(0.5);
  p.gpu.memory_bandwidth = q(2e12);
  p.gpu.launch_latency = q(5e-6);
  p.gpu.eigh_seconds_per_n3 = q(1e-11);
  p.gpu.qr_seconds_per_n3 = q(2e-12);
  p.cpu.gemm_flops_per_core = q(50e9);
  p.cpu.threads_per_worker = q(2);
  p.cpu.memory_bandwidth = q(100e9);
  p.cpu.eigh_seconds_per_n3 = q(1e-10);
  p.cpu.qr_seconds_per_n3 = q(5e-11);
  p.cpu.task_latency = q(20e-6);
  p.nvme.read_bandwidth = q(4e9);
  p.nvme.write_bandwidth = q(2e9);
  p.nvme.latency = q(1e-4);
  p.host_to_device = LinkSpec{q(50e9), q(10e-6)};
  return p;
}

Cost work(WorkKind kind, double flops, double bytes, std::int64_t n = 0, bool reduced = false) {
  return Cost{kind, flops, bytes, n, reduced};
}

void expect_seconds(double actual, double expected) { EXPECT_NEAR(actual, expected, expected * 1e-12); }

void expect_charge(const Charge& actual, double compute_seconds, double memory_bytes) {
  expect_seconds(actual.compute_seconds, compute_seconds);
  EXPECT_EQ(actual.memory_bytes, memory_bytes);
}

TEST(CostModel, DeviceGemmIsComputeAtItsClassEfficiencyPlusItsTraffic) {
  const CostModel model(tiny_machine());
  // Reduced precision, n = 4096 (class from_4096, 0.5): 1e12 / (100e12 x 0.5) + 5 us; 4e9 bytes.
  const Charge bf16 = model.device_charge(work(WorkKind::gemm, 1e12, 4e9, 4096, true));
  expect_charge(bf16, 0.020005, 4e9);
  // Alone: 0.020005 + 4e9 / 2e12.
  expect_seconds(bf16.seconds_alone(model.device_memory_bandwidth()), 0.022005);
  // fp32 (optimizer): 1e12 / (10e12 x 0.5) + 5 us.
  expect_charge(model.device_charge(work(WorkKind::gemm, 1e12, 4e9, 4096)), 0.200005, 4e9);
  expect_charge(model.device_charge(work(WorkKind::newton, 2e11, 0, 8192)), 0.040005, 0);  // 2e11 / 5e12 + 5 us
}

TEST(CostModel, GemmEfficiencyFollowsTheSizeClassOfTheDimension) {
  const CostModel model(tiny_machine());
  auto compute = [&](std::int64_t n) {
    return model.device_charge(work(WorkKind::gemm, 1e12, 0, n, true)).compute_seconds;
  };
  expect_seconds(compute(100), 0.080005);   // 1e12 / (100e12 x 0.125) + 5 us
  expect_seconds(compute(255), 0.080005);
  expect_seconds(compute(256), 0.040005);   // 1e12 / (100e12 x 0.25) + 5 us
  expect_seconds(compute(1023), 0.040005);
  expect_seconds(compute(1024), 0.025005);  // 1e12 / (100e12 x 0.4) + 5 us
  expect_seconds(compute(4095), 0.025005);
  expect_seconds(compute(4096), 0.020005);  // 1e12 / (100e12 x 0.5) + 5 us
  expect_seconds(compute(0), 0.020005);     // no size given: the large-GEMM class
  const GpuSpec& gpu = model.profile().gpu;
  EXPECT_EQ(gpu.efficiency_for(255), 0.125);
  EXPECT_EQ(gpu.efficiency_for(256), 0.25);
  EXPECT_EQ(gpu.efficiency_for(100000), 0.5);
  EXPECT_EQ(GemmEfficiency::class_of(-1), 3u);
}

TEST(CostModel, AFp32ModelChargesReducedPrecisionAtTheFp32Peak) {
  const CostModel model(tiny_machine(), Precision::fp32);
  // 1e12 / (10e12 x 0.5) + 5 us, although the piece is reduced precision
  expect_charge(model.device_charge(work(WorkKind::gemm, 1e12, 0, 4096, true)), 0.200005, 0);
}

TEST(CostModel, DeviceFactorizationsAreCubicPlusALaunch) {
  const CostModel model(tiny_machine());
  expect_charge(model.device_charge(work(WorkKind::eigh, 0, 0, 1000)), 0.010005, 0);  // 1e-11 x 1e9 + 5 us
  expect_charge(model.device_charge(work(WorkKind::qr, 0, 0, 1000)), 0.002005, 0);    // 2e-12 x 1e9 + 5 us
  // 1e-11 x 1e15 + 5 us: no overflow; the flops and bytes of a factorization are not charged.
  expect_charge(model.device_charge(work(WorkKind::eigh, 5e12, 5e9, 100000)), 1e4 + 5e-6, 0);
}

TEST(CostModel, DeviceMemoryBoundAndOtherKernels) {
  const CostModel model(tiny_machine());
  // Elementwise: the launch, and its bytes as traffic; alone 5 us + 4e9 / 2e12.
  const Charge elementwise = model.device_charge(work(WorkKind::elementwise, 1e15, 4e9));
  expect_charge(elementwise, 5e-6, 4e9);
  expect_seconds(elementwise.seconds_alone(2e12), 0.002005);
  // Other: max(1e10 / 10e12, 1e9 / 2e12) + 5 us = 1 ms + 5 us, no separate traffic.
  expect_charge(model.device_charge(work(WorkKind::other, 1e10, 1e9)), 0.001005, 0);
  // max(1e9 / 10e12, 1e10 / 2e12) + 5 us = 5 ms + 5 us
  expect_charge(model.device_charge(work(WorkKind::other, 1e9, 1e10, 0, true)), 0.005005, 0);
  expect_charge(model.device_charge(Cost{}), 5e-6, 0);  // an empty piece still launches
}

TEST(CostModel, HostWorker) {
  const CostModel model(tiny_machine());
  expect_charge(model.host_worker_charge(work(WorkKind::eigh, 0, 0, 2000)), 0.80002, 0);  // 1e-10 x 8e9 + 20 us
  expect_charge(model.host_worker_charge(work(WorkKind::qr, 0, 0, 2000)), 0.40002, 0);    // 5e-11 x 8e9 + 20 us
  // 1e11 / (50e9 x 2 threads) + 20 us, 1e12 bytes of traffic
  expect_charge(model.host_worker_charge(work(WorkKind::gemm, 1e11, 1e12)), 1.00002, 1e12);
  expect_charge(model.host_worker_charge(work(WorkKind::newton, 1e10, 0)), 0.10002, 0);  // 1e10 / 100e9 + 20 us
  expect_charge(model.host_worker_charge(work(WorkKind::elementwise, 1e15, 1e9)), 20e-6, 1e9);
  // max(1e10 / 100e9, 1e8 / 100e9) + 20 us and max(1e8 / 100e9, 2e10 / 100e9) + 20 us
  expect_charge(model.host_worker_charge(work(WorkKind::other, 1e10, 1e8)), 0.10002, 0);
  expect_charge(model.host_worker_charge(work(WorkKind::other, 1e8, 2e10)), 0.20002, 0);
  EXPECT_EQ(model.host_memory_bandwidth(), 100e9);
  EXPECT_EQ(model.device_memory_bandwidth(), 2e12);
}

TEST(CostModel, SecondsAloneAreComputePlusTrafficOverBandwidth) {
  const CostModel model(tiny_machine());
  // Step kernels use the bf16 peak whatever the piece says: 1e12 / (100e12 x 0.5) + 5 us + 4e9 / 2e12.
  expect_seconds(model.gpu_step_seconds(work(WorkKind::gemm, 1e12, 4e9, 4096)), 0.022005);
  expect_seconds(model.gpu_step_seconds(work(WorkKind::eigh, 5e12, 5e9, 2000)), 0.080005);  // 1e-11 x 8e9 + 5 us
  // Optimizer kernels use fp32 whatever the piece says: 1e12 / (10e12 x 0.5) + 5 us.
  expect_seconds(model.gpu_optimizer_seconds(work(WorkKind::gemm, 1e12, 0, 4096, true)), 0.200005);
  expect_seconds(model.gpu_optimizer_seconds(work(WorkKind::elementwise, 0, 4e9)), 0.002005);  // 5 us + 4e9 / 2e12
  const CostModel fp32_model(tiny_machine(), Precision::fp32);
  expect_seconds(fp32_model.gpu_step_seconds(work(WorkKind::gemm, 1e12, 0, 4096)), 0.200005);
  // Host: 1e11 / 100e9 + 20 us + 1e12 / 100e9 and 20 us + 1e9 / 100e9
  expect_seconds(model.cpu_worker_seconds(work(WorkKind::gemm, 1e11, 1e12)), 11.00002);
  expect_seconds(model.cpu_worker_seconds(work(WorkKind::elementwise, 0, 1e9)), 0.01002);
}

TEST(CostModel, TransfersAndNvme) {
  const CostModel model(tiny_machine());
  // 10 us + 1e9 / 50e9
  expect_seconds(CostModel::transfer_seconds(model.profile().host_to_device, 1e9), 0.02001);
  expect_seconds(CostModel::transfer_seconds(model.profile().host_to_device, 0), 10e-6);
  // 100 us + 8e9 / 4e9 and 100 us + 8e9 / 2e9
  expect_seconds(model.nvme_read_seconds(8e9), 2.0001);
  expect_seconds(model.nvme_write_seconds(8e9), 4.0001);
}

TEST(CostModel, ACpuDeviceIsChargedByItsGpuSection) {
  HardwareProfile p = tiny_machine();
  p.device = DeviceKind::cpu;
  p.gpu.fp32_flops = p.gpu.bf16_flops = q(400e9);  // 4 threads at 100 GFLOP/s
  p.gpu.gemm_efficiency = q(0.8);                  // one figure for every class
  p.gpu.memory_bandwidth = q(40e9);
  p.gpu.launch_latency = q(1e-6);
  const CostModel model(p);
  // 4e9 / (400e9 x 0.8) + 1 us, 2e8 bytes; alone + 2e8 / 40e9
  const Charge charge = model.device_charge(work(WorkKind::gemm, 4e9, 2e8, 512, true));
  expect_charge(charge, 0.012501, 2e8);
  expect_seconds(charge.seconds_alone(model.device_memory_bandwidth()), 0.017501);
}

TEST(CostModel, KeepsItsProfile) {
  const CostModel model(tiny_machine());
  EXPECT_EQ(model.profile(), tiny_machine());
}

}  // namespace
}  // namespace asteria::hw

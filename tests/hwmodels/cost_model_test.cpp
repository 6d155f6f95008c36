// The cost model on a hand-made profile with round numbers; every expected time is worked out
// by hand in the comment beside it.
#include "hwmodels/cost_model.hpp"

#include <gtest/gtest.h>

namespace asteria::hw {
namespace {

using platform::Cost;
using platform::WorkKind;

Quantity q(double value) { return Quantity{value, Provenance::derived, "test"}; }

HardwareProfile tiny_machine() {
  HardwareProfile p;
  p.name = "tiny";
  p.gpu.fp32_flops = q(10e12);
  p.gpu.bf16_flops = q(100e12);
  p.gpu.gemm_efficiency = q(0.5);
  p.gpu.memory_bandwidth = q(2e12);
  p.gpu.launch_latency = q(5e-6);
  p.gpu.eigh_seconds_per_n3 = q(1e-11);
  p.gpu.qr_seconds_per_n3 = q(2e-12);
  p.cpu.gemm_flops_per_core = q(50e9);
  p.cpu.threads_per_worker = q(2);
  p.cpu.memory_bandwidth = q(100e9);
  p.cpu.eigh_seconds_per_n3 = q(1e-10);
  p.cpu.qr_seconds_per_n3 = q(5e-11);
  p.nvme.read_bandwidth = q(4e9);
  p.nvme.write_bandwidth = q(2e9);
  p.nvme.latency = q(1e-4);
  p.host_to_device = LinkSpec{q(50e9), q(10e-6)};
  return p;
}

Cost work(WorkKind kind, double flops, double bytes, std::int64_t n = 0) { return Cost{kind, flops, bytes, n}; }

void expect_seconds(double actual, double expected) { EXPECT_NEAR(actual, expected, expected * 1e-12); }

TEST(CostModel, StepGemmRunsAtTheBf16PeakTimesEfficiency) {
  const CostModel model(tiny_machine());
  // 1e12 / (100e12 x 0.5) + 5 us
  expect_seconds(model.gpu_step_seconds(work(WorkKind::gemm, 1e12, 0)), 0.020005);
  expect_seconds(model.gpu_step_seconds(work(WorkKind::newton, 1e12, 0)), 0.020005);
  const CostModel fp32_model(tiny_machine(), Precision::fp32);
  // 1e12 / (10e12 x 0.5) + 5 us
  expect_seconds(fp32_model.gpu_step_seconds(work(WorkKind::gemm, 1e12, 0)), 0.200005);
}

TEST(CostModel, OptimizerKernelsUseTheFp32Peak) {
  const CostModel model(tiny_machine());  // bf16 steps, yet optimizer GEMMs are fp32
  expect_seconds(model.gpu_optimizer_seconds(work(WorkKind::gemm, 1e12, 0)), 0.200005);
  expect_seconds(model.gpu_optimizer_seconds(work(WorkKind::newton, 2e11, 0)), 0.040005);
}

TEST(CostModel, GpuFactorizationsAreCubicInTheDimension) {
  const CostModel model(tiny_machine());
  expect_seconds(model.gpu_optimizer_seconds(work(WorkKind::eigh, 0, 0, 1000)), 0.01);   // 1e-11 x 1e9
  expect_seconds(model.gpu_optimizer_seconds(work(WorkKind::qr, 0, 0, 1000)), 0.002);    // 2e-12 x 1e9
  expect_seconds(model.gpu_optimizer_seconds(work(WorkKind::eigh, 0, 0, 100000)), 1e4);  // no overflow
  expect_seconds(model.gpu_step_seconds(work(WorkKind::eigh, 5e12, 5e9, 2000)), 0.08);   // 1e-11 x 8e9
}

TEST(CostModel, GpuMemoryBoundAndOtherKernels) {
  const CostModel model(tiny_machine());
  // 4e9 / 2e12 + 5 us
  expect_seconds(model.gpu_optimizer_seconds(work(WorkKind::elementwise, 1e15, 4e9)), 0.002005);
  // max(1e10 / 10e12, 1e9 / 2e12) + 5 us = 1 ms + 5 us
  expect_seconds(model.gpu_optimizer_seconds(work(WorkKind::other, 1e10, 1e9)), 0.001005);
  // max(1e9 / 10e12, 1e10 / 2e12) + 5 us = 5 ms + 5 us
  expect_seconds(model.gpu_step_seconds(work(WorkKind::other, 1e9, 1e10)), 0.005005);
}

TEST(CostModel, HostWorker) {
  const CostModel model(tiny_machine());
  expect_seconds(model.cpu_worker_seconds(work(WorkKind::eigh, 0, 0, 2000)), 0.8);  // 1e-10 x 8e9
  expect_seconds(model.cpu_worker_seconds(work(WorkKind::qr, 0, 0, 2000)), 0.4);    // 5e-11 x 8e9
  // 1e11 / (50e9 x 2 threads)
  expect_seconds(model.cpu_worker_seconds(work(WorkKind::gemm, 1e11, 1e12)), 1.0);
  expect_seconds(model.cpu_worker_seconds(work(WorkKind::newton, 1e10, 0)), 0.1);
  // 1e9 / 100e9
  expect_seconds(model.cpu_worker_seconds(work(WorkKind::elementwise, 1e15, 1e9)), 0.01);
  // max(1e10 / 100e9, 1e8 / 100e9) and max(1e8 / 100e9, 1e10 / 100e9)
  expect_seconds(model.cpu_worker_seconds(work(WorkKind::other, 1e10, 1e8)), 0.1);
  expect_seconds(model.cpu_worker_seconds(work(WorkKind::other, 1e8, 1e10)), 0.1);
  expect_seconds(model.cpu_worker_seconds(work(WorkKind::other, 1e8, 2e10)), 0.2);
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

TEST(CostModel, KeepsItsProfile) {
  const CostModel model(tiny_machine());
  EXPECT_EQ(model.profile(), tiny_machine());
}

}  // namespace
}  // namespace asteria::hw

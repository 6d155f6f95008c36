#include "hwmodels/calibrate/device_bench.hpp"

#include <algorithm>
#include <ostream>
#include <string>

#include "core/common/error.hpp"
#include "hwmodels/calibrate/latency_bench.hpp"
#include "hwmodels/calibrate/memory_bench.hpp"

namespace asteria::hw::calibrate {

double CpuDeviceMeasurements::peak_flops() const noexcept {
  double peak = sgemm_sized.valid() ? sgemm_sized.value : 0.0;
  for (const SizedRate& sized : sgemm_by_class)
    if (sized.rate.valid()) peak = std::max(peak, sized.rate.value);
  return peak;
}

CpuDeviceMeasurements measure_cpu_device(const CpuDevicePlan& plan, std::ostream& progress) {
  if (plan.threads < 1) throw InputError("--device-threads", "device threads", "expected at least 1 thread");
  auto say = [&](const std::string& what) { progress << "calibrate: CPU device, " << what << '\n' << std::flush; };
  const std::string threads = std::to_string(plan.threads) + (plan.threads == 1 ? " thread" : " threads");
  CpuDeviceMeasurements m;
  m.threads = plan.threads;

  say("SGEMM on " + threads + " at each size class");
  SgemmPlan sized = plan.sgemm;
  sized.threads = plan.threads;
  m.sgemm_sized = measure_sgemm(sized);
  for (std::size_t i = 0; i < GemmEfficiency::kClasses; ++i)
    m.sgemm_by_class[i] = measure_sgemm_at(plan.class_sizes[i], plan.threads, plan.gemm_repeats);

  say("memcpy, per-call and per-copy overheads on " + threads);
  m.memory_bandwidth = measure_memcpy(plan.memcpy_bytes, plan.threads, plan.memcpy_repeats);
  m.call_latency = measure_call_latency(plan.threads, plan.calls, 3);
  m.copy_latency = measure_copy_latency(64, plan.calls * 10, 3);
  say("wake latency of the idle device stream");
  m.wake_latency = measure_wake_latency(plan.wake_samples);

  say("eigh (ssyevd) and QR (sgeqrf + sorgqr) on " + threads);
  m.eigh = measure_eigh(plan.solver_sizes, plan.solver_repeats, plan.threads);
  m.qr = measure_qr(plan.solver_sizes, plan.solver_repeats, plan.threads);
  return m;
}

}  // namespace asteria::hw::calibrate

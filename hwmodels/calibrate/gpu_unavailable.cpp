// The GPU measurements of a build without the CUDA toolkit: there is nothing to measure.
#ifndef ASTERIA_CALIBRATE_WITH_CUDA
#include "hwmodels/calibrate/gpu_bench.hpp"

namespace asteria::hw::calibrate {

GpuPresence probe_gpu() {
  GpuPresence presence;
  presence.reason = "built without CUDA (no toolkit found at configure time)";
  return presence;
}

GpuMeasurements measure_gpu(const GpuPlan&, std::ostream&) {
  GpuMeasurements result;
  result.presence = probe_gpu();
  return result;
}

}  // namespace asteria::hw::calibrate
#endif

#pragma once
// Calibration from a recorded run: a native trace (traces/native_trace.hpp) holds, per record,
// how long it took and what it was charged for, piece by piece. Every cost-model rule is linear in
// one coefficient per term (seconds per flop at a size class's efficiency, per byte, per call,
// per n³), so each measured interval is one linear observation and the coefficients follow by
// non-negative least squares on relative error (least_squares.hpp).
//
//   group        observations                                  coefficients
//   device       per step: its forward and backward records    1/gemm_efficiency per size class
//                (a model may compute them all in one record);  (features: flops / peak at the
//                per launch on the device stream: its interval  piece's precision), 1/memory
//                (and each refresh job run there: --refresh-on  bandwidth, launch latency,
//                device)                                        eigh and QR c, elementwise s/flop
//   host worker  each refresh job and host update launch        1/(gemm_flops_per_core · threads),
//                                                               1/memory bandwidth, eigh and QR c,
//                                                               task latency
//   stream gap   each short gap of the device stream between    gpu.wake_latency (the idle
//                two items: the ops issued in between           stream waking), cpu.issue_latency
//                                                               per plan op issued
//   contention   the intervals on the unit's cores (host        cpu.contention_slowdown, with the
//                workers; a CPU device's stream) and the share  device and host worker terms
//                of the other cores busy during each            (core_contention.hpp)
//   links        each copy host->device, device->host           latency, 1/bandwidth
//   NVMe         each write (->nvme) and read (nvme->)          latency, 1/bandwidth
//
// A coefficient the trace does not identify (no work of its kind, or collinear with another)
// keeps the base profile's value and says so.
#include <string>
#include <vector>

#include "hwmodels/calibrate/least_squares.hpp"
#include "hwmodels/profile.hpp"
#include "traces/native_trace.hpp"

namespace asteria::hw::calibrate {

struct FittedCoefficient {
  std::string field;      // the profile field: "gpu.gemm_efficiency.below_256", "cpu.eigh_seconds_per_n3"
  std::string group;      // "device", "host worker", "stream gap", "h2d", "d2h", "nvme write", "nvme read"
  double value = 0.0;     // in the profile's unit (efficiency, bytes/s, s, s per n³, FLOP/s)
  double relative_error = 0.0;  // standard error / value (NaN when not identified)
  bool identified = false;
  bool applied = false;   // written into the profile (identified and physically valid)
  std::string note;       // why not applied, or a clamp
};

struct GroupFit {
  std::string group;
  std::size_t observations = 0;
  double rms_relative_residual = 0.0;
  double max_relative_residual = 0.0;
};

struct TraceCalibration {
  HardwareProfile profile;  // the base with the fitted fields replaced (provenance measured)
  std::vector<FittedCoefficient> coefficients;
  std::vector<GroupFit> groups;
};

// A fit needs this many recorded steps, and applies a coefficient the trace identifies only when
// its standard error is at most this share of it (otherwise the base value stays, said so in
// the coefficient's note), unless forced.
inline constexpr std::size_t kMinFitSteps = 3;
inline constexpr double kMaxRelativeError = 0.5;

struct TraceFitOptions {
  int unit = 0;        // the unit (rank) whose records are fitted
  bool force = false;  // fit fewer steps and apply uncertain coefficients anyway
};

// Fits the coefficients to the records of `options.unit` in `trace` (`source` names it in the
// fields' provenance and in errors) on top of `base`. Throws InputError when the trace holds
// nothing to fit (no step, no timed work) or, unless forced, fewer than kMinFitSteps steps.
TraceCalibration calibrate_from_trace(const traces::NativeTrace& trace, const std::string& source,
                                      const HardwareProfile& base, const TraceFitOptions& options = {});

}  // namespace asteria::hw::calibrate

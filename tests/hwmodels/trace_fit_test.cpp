// Calibration from a trace: records timed by known coefficients give them back.
#include "hwmodels/calibrate/trace_fit.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <stdexcept>
#include <string>

#include "core/common/error.hpp"
#include "hwmodels/cost_model.hpp"
#include "hwmodels/profile_loader.hpp"

namespace asteria::hw::calibrate {
namespace {

using platform::Cost;
using platform::WorkKind;

traces::TraceRecord record(std::string kind, std::string resource, std::int64_t step, double seconds,
                           platform::Costs cost, std::int32_t launch = -1, std::string label = "") {
  traces::TraceRecord r;
  r.kind = std::move(kind);
  r.resource = std::move(resource);
  r.step = step;
  r.start_s = 0.0;
  r.end_s = seconds;
  r.cost = std::move(cost);
  r.launch = launch;
  r.label = std::move(label);
  return r;
}

HardwareProfile base_profile() { return load_profile(find_profile("h100-pcie-host")); }

// The base with no measured figure: its values are only a faint prior, and exact data decide.
HardwareProfile unmeasured_base() {
  HardwareProfile p = base_profile();
  for (Quantity* q : {&p.gpu.memory_bandwidth, &p.gpu.launch_latency, &p.gpu.eigh_seconds_per_n3,
                      &p.gpu.qr_seconds_per_n3, &p.gpu.elementwise_seconds_per_flop, &p.cpu.gemm_flops_per_core,
                      &p.cpu.memory_bandwidth, &p.cpu.eigh_seconds_per_n3, &p.cpu.qr_seconds_per_n3,
                      &p.cpu.task_latency, &p.cpu.elementwise_seconds_per_flop, &p.host_to_device.latency,
                      &p.host_to_device.bandwidth, &p.device_to_host.latency, &p.device_to_host.bandwidth,
                      &p.nvme.latency, &p.nvme.read_bandwidth, &p.nvme.write_bandwidth})
    q->provenance = Provenance::derived;
  for (std::size_t k = 0; k < GemmEfficiency::kClasses; ++k)
    p.gpu.gemm_efficiency.by_class(k).provenance = Provenance::derived;
  return p;
}

// A trace whose durations the cost model of `truth` gives exactly.
traces::NativeTrace synthetic_trace(const HardwareProfile& truth) {
  const CostModel model(truth);
  traces::NativeTrace t;
  for (std::int64_t step = 1; step <= 6; ++step) {
    // Device compute of three sizes (all classes but one) and an optimizer launch per step.
    const Cost small{WorkKind::gemm, 2e10 * static_cast<double>(step), 1e6, 128, true};
    const Cost medium{WorkKind::gemm, 3e10, 4e7 * static_cast<double>(step), 512, true};
    const Cost large{WorkKind::gemm, 5e11 / static_cast<double>(step), 2e8, 2048, true};
    double compute = 0.0;
    for (const Cost& c : {small, medium, large}) {
      compute += model.device_charge(c).seconds_alone(model.device_memory_bandwidth());
      t.records.push_back(record("backward", "gpu0 stream", step, 0.0, c));
    }
    t.records.back().end_s = compute;  // as a model that runs every layer in its last record
    const Cost update{WorkKind::elementwise, 0, 3e6 * static_cast<double>(step * step), 1024};
    const Cost accumulate{WorkKind::gemm, 1e9 * static_cast<double>(step), 1e5, 1024};
    const double launch = model.device_charge(update).seconds_alone(model.device_memory_bandwidth()) +
                          model.device_charge(accumulate).seconds_alone(model.device_memory_bandwidth());
    t.records.push_back(record("update", "gpu0 stream", step, launch, update, 0));
    t.records.push_back(record("accumulate", "gpu0 stream", step, launch, accumulate, 0));
    // Refresh jobs: an eigh of one size, a QR of another, a GEMM of a third shape and one or two
    // pieces more (task latency), on a host worker.
    for (std::int64_t n : {64 * step, 300 + 50 * step}) {
      const auto d = static_cast<double>(n);
      const std::int64_t qr_n = (n + step) % 3 == 0 ? 500 : 150;
      platform::Costs job{Cost{WorkKind::eigh, 0, 0, n}, Cost{WorkKind::qr, 0, 0, qr_n},
                          Cost{WorkKind::gemm, 1e9 * static_cast<double>(step * step), 8.0 * d * d, n}};
      if (step % 2 == 0) job.add(Cost{WorkKind::elementwise, 0, 4.0 * d * d, n});
      double seconds = 0.0;
      for (const Cost& c : job.pieces()) seconds += model.cpu_worker_seconds(c);
      t.records.push_back(record("refresh_job", "cpu0 worker 0", step, seconds, job));
    }
    // Copies of a few sizes each way.
    for (double bytes : {1e3, 1e6 * static_cast<double>(step)}) {
      t.records.push_back(record("transfer", "link h2d0", step, CostModel::transfer_seconds(truth.host_to_device, bytes),
                                 Cost{WorkKind::other, 0, bytes, 0}, -1, "copy host->device: a -> b"));
    }
  }
  return t;
}

TEST(TraceFit, RecoversTheCoefficientsThatTimedTheTrace) {
  HardwareProfile truth = base_profile();
  truth.gpu.gemm_efficiency.below_256.value = 0.05;
  truth.gpu.gemm_efficiency.below_1024.value = 0.2;
  truth.gpu.gemm_efficiency.below_4096.value = 0.6;
  truth.gpu.memory_bandwidth.value = 1.5e12;
  truth.gpu.launch_latency.value = 7e-6;
  truth.cpu.eigh_seconds_per_n3.value = 3e-10;
  truth.cpu.qr_seconds_per_n3.value = 4e-11;
  truth.cpu.task_latency.value = 25e-6;
  truth.host_to_device.bandwidth.value = 2e10;
  truth.host_to_device.latency.value = 3e-6;
  const TraceCalibration fit = calibrate_from_trace(synthetic_trace(truth), "synthetic", unmeasured_base());
  auto expect = [&](const std::string& field, double value, double tolerance = 1e-3) {
    for (const FittedCoefficient& c : fit.coefficients)
      if (c.field == field) {
        EXPECT_TRUE(c.applied) << field << ": " << c.note;
        EXPECT_NEAR(c.value / value, 1.0, tolerance) << field << " (" << c.note << ")";
        return;
      }
    ADD_FAILURE() << "no coefficient " << field;
  };
  expect("gpu.gemm_efficiency.below_256", 0.05);
  expect("gpu.gemm_efficiency.below_1024", 0.2);
  expect("gpu.gemm_efficiency.below_4096", 0.6);
  expect("gpu.memory_bandwidth", 1.5e12);
  expect("gpu.launch_latency", 7e-6);
  expect("cpu.eigh_seconds_per_n3", 3e-10);
  expect("cpu.qr_seconds_per_n3", 4e-11, 5e-3);
  // 3-4 calls of 25 µs are at most a few % of a job, and the short jobs where they matter weigh
  // little (intervals weigh by their length): the weakest term.
  expect("cpu.task_latency", 25e-6, 1e-1);
  expect("host_to_device.bandwidth", 2e10);
  expect("host_to_device.latency", 3e-6);
  EXPECT_NEAR(fit.profile.gpu.gemm_efficiency.below_1024.value, 0.2, 2e-4);
  EXPECT_EQ(fit.profile.gpu.gemm_efficiency.below_1024.provenance, Provenance::measured);
  // The large class saw no work: its base value moves as the nearest fitted class moved.
  const GemmEfficiency& was = unmeasured_base().gpu.gemm_efficiency;
  expect("gpu.gemm_efficiency.from_4096", std::min(1.0, was.from_4096.value * 0.6 / was.below_4096.value));
  EXPECT_NE(fit.profile.gpu.gemm_efficiency.from_4096.source.find("below_4096"), std::string::npos)
      << fit.profile.gpu.gemm_efficiency.from_4096.source;
  for (const GroupFit& g : fit.groups) EXPECT_LT(g.rms_relative_residual, 1e-6) << g.group;
}

// A measured base figure weighs as one interval: a dozen exact intervals that barely involve a
// coefficient leave it near the measurement, where an unmeasured base lets them decide.
TEST(TraceFit, AMeasuredBaseHoldsWhatTheTraceBarelyDetermines) {
  HardwareProfile truth = base_profile();
  truth.cpu.task_latency.value = 60e-6;  // a few % of each job
  HardwareProfile measured = unmeasured_base();
  measured.cpu.task_latency = Quantity{20e-6, Provenance::measured, "a task hand-off benchmark"};
  HardwareProfile unmeasured = unmeasured_base();
  unmeasured.cpu.task_latency = Quantity{20e-6, Provenance::derived, "assumed"};
  auto fitted = [&](const HardwareProfile& base) {
    return calibrate_from_trace(synthetic_trace(truth), "synthetic", base).profile.cpu.task_latency.value;
  };
  const double free_fit = fitted(unmeasured);
  EXPECT_NEAR(free_fit, 60e-6, 9e-6);
  EXPECT_LT(fitted(measured), free_fit - 10e-6);
}

// A measured base value weighs as a share of the trace's intervals, so a longer recording of the
// same run does not wear it down. Refresh jobs of about 2 ms whose task latency (60 µs, ~3% of a
// job) the measurement puts at 20 µs: 30 and 300 copies of the recording settle on the same
// compromise (with one interval's weight, the longer recording pulls it towards the jobs).
TEST(TraceFit, AMeasuredBaseKeepsItsShareHoweverLongTheRecording) {
  HardwareProfile truth = base_profile();
  truth.cpu.task_latency.value = 60e-6;
  truth.cpu.eigh_seconds_per_n3.value = 3e-10;
  HardwareProfile measured = unmeasured_base();
  measured.cpu.task_latency = Quantity{20e-6, Provenance::measured, "a task hand-off benchmark"};
  const CostModel model(truth);
  auto fitted = [&](int copies) {
    traces::NativeTrace t;
    for (int k = 0; k < copies; ++k)
      for (std::int64_t n : {150, 180, 210}) {
        const platform::Costs job{Cost{WorkKind::eigh, 0, 0, n}};
        t.records.push_back(record("refresh_job", "cpu0 worker 0", k, model.cpu_worker_seconds(job.pieces()[0]), job));
      }
    return calibrate_from_trace(t, "copies", measured).profile.cpu.task_latency.value;
  };
  const double shorter = fitted(30);
  const double longer = fitted(300);
  EXPECT_GE(shorter, 20e-6);
  EXPECT_LT(shorter, 40e-6);
  EXPECT_NEAR(longer / shorter, 1.0, 0.01) << shorter << " vs " << longer;
}

// Device-stream items whose gaps are the idle stream's wake (`wake` s) plus the issuing
// thread's time for the ops issued in between (`issue` s per op, 1 to 4 ops: the counts vary,
// so the two terms are told apart); one gap per step is a wait of 1 ms, which says nothing.
traces::NativeTrace stream_gap_trace(double wake, double issue) {
  traces::NativeTrace t;
  double clock = 0.0;
  std::int32_t op = 0;
  for (int step = 1; step <= 3; ++step)
    for (int item = 0; item < 8; ++item) {
      const int between = 1 + (item % 4);  // ops issued since the previous item
      clock += item == 5 ? 1e-3 : wake + issue * between;
      op += between;
      traces::TraceRecord r = record("update", "gpu0 stream", step, 0.0, Cost{WorkKind::elementwise, 0, 1e3, 8});
      r.op = op;
      r.start_s = clock;
      r.end_s = clock += 2e-5;
      t.records.push_back(r);
    }
  return t;
}

const FittedCoefficient& coefficient(const TraceCalibration& fit, const std::string& field) {
  for (const FittedCoefficient& c : fit.coefficients)
    if (c.field == field) return c;
  throw std::logic_error("no coefficient " + field);
}

// A short gap of the device stream is gpu.wake_latency + cpu.issue_latency x ops issued between
// the two items: 10 µs of wake and 3 µs per op here.
TEST(TraceFit, WakeAndIssueLatencyComeFromTheStreamsShortGaps) {
  const TraceCalibration fit = calibrate_from_trace(stream_gap_trace(10e-6, 3e-6), "gaps", unmeasured_base());
  EXPECT_NEAR(fit.profile.gpu.wake_latency.value / 10e-6, 1.0, 0.05) << fit.profile.gpu.wake_latency.value;
  EXPECT_NEAR(fit.profile.cpu.issue_latency.value / 3e-6, 1.0, 0.05) << fit.profile.cpu.issue_latency.value;
  for (const char* field : {"gpu.wake_latency", "cpu.issue_latency"}) {
    const FittedCoefficient& c = coefficient(fit, field);
    EXPECT_TRUE(c.identified && c.applied) << field << ": " << c.note;
    EXPECT_EQ(c.group, "stream gap");
  }
  EXPECT_EQ(fit.profile.gpu.wake_latency.provenance, Provenance::measured);
  EXPECT_EQ(fit.profile.cpu.issue_latency.provenance, Provenance::measured);
}

// Gaps that are all issue time: 3 µs per op, and a wake of (rounding error above) 0.
TEST(TraceFit, IssueLatencyComesFromTheStreamsShortGaps) {
  const TraceCalibration fit = calibrate_from_trace(stream_gap_trace(0.0, 3e-6), "gaps", unmeasured_base());
  EXPECT_NEAR(fit.profile.cpu.issue_latency.value, 3e-6, 1e-12);
  EXPECT_EQ(fit.profile.cpu.issue_latency.provenance, Provenance::measured);
  EXPECT_LT(fit.profile.gpu.wake_latency.value, 1e-10);
}

// A CPU device of two cores whose steps' compute took 1 + s as long on the steps where a host
// worker was busy throughout (`contended(step)`), as the simulator charges it.
traces::NativeTrace contended_trace(const HardwareProfile& truth, double s, bool (*contended)(std::int64_t)) {
  const CostModel model(truth);
  traces::NativeTrace t;
  for (std::int64_t step = 1; step <= 8; ++step) {
    const Cost gemm{WorkKind::gemm, 4e11 * static_cast<double>(step), 1e6, 512, true};
    const Cost norm{WorkKind::elementwise, 1e5, 2e8 * static_cast<double>(step * step), 512};
    const double alone = model.device_charge(gemm).seconds_alone(model.device_memory_bandwidth()) +
                         model.device_charge(norm).seconds_alone(model.device_memory_bandwidth());
    const double start = 10.0 * static_cast<double>(step);
    const double seconds = alone * (contended(step) ? 1.0 + s : 1.0);
    t.records.push_back(record("backward", "cpu0 stream", step, 0.0, gemm));
    t.records.push_back(record("backward", "cpu0 stream", step, 0.0, norm));
    t.records[t.records.size() - 2].start_s = t.records[t.records.size() - 2].end_s = start;
    t.records.back().start_s = start;  // as a model that runs every layer in its last record
    t.records.back().end_s = start + seconds;
    if (contended(step)) {  // a worker busy throughout (a snapshot copy; not itself a fitted interval)
      traces::TraceRecord busy = record("snapshot", "cpu0 worker 0", step, 0.0, {});
      busy.start_s = start - 1e-3;
      busy.end_s = start + seconds + 1e-3;
      t.records.push_back(busy);
    }
  }
  return t;
}

HardwareProfile two_core_cpu_device() {
  HardwareProfile p = unmeasured_base();
  p.device = DeviceKind::cpu;
  p.cpu.cores.value = 2;
  p.gpu.device_threads.value = 1;
  p.cpu.threads_per_worker.value = 1;
  return p;
}

TEST(TraceFit, ContentionComesFromStepsBesideABusyWorker) {
  const HardwareProfile base = two_core_cpu_device();
  HardwareProfile truth = base;
  truth.gpu.gemm_efficiency.below_1024.value = 0.3;
  truth.gpu.elementwise_seconds_per_flop.value = 2e-9;
  const TraceCalibration fit = calibrate_from_trace(
      contended_trace(truth, 0.3, [](std::int64_t step) { return step % 2 == 0; }), "contended", base);
  const FittedCoefficient& c = coefficient(fit, "cpu.contention_slowdown");
  EXPECT_TRUE(c.applied) << c.note;
  EXPECT_NEAR(fit.profile.cpu.contention_slowdown.value, 0.3, 1e-3);
  EXPECT_EQ(fit.profile.cpu.contention_slowdown.provenance, Provenance::measured);
  // The rates are fitted to what the steps took alone (launch latency and the elementwise rate,
  // constant per step, split as the base splits them: a few % on the GEMM efficiency).
  EXPECT_NEAR(fit.profile.gpu.gemm_efficiency.below_1024.value, 0.3, 0.02);
}

// Every step beside a busy worker: the slowdown and the rates trade off, so the fit keeps the
// base's slowdown and fits the rates to the steps with it taken out.
TEST(TraceFit, ContentionThatNeverVariesIsNotIdentified) {
  HardwareProfile base = two_core_cpu_device();
  base.cpu.contention_slowdown.value = 0.1;
  HardwareProfile truth = base;
  truth.gpu.gemm_efficiency.below_1024.value = 0.3;
  const TraceCalibration fit =
      calibrate_from_trace(contended_trace(truth, 0.1, [](std::int64_t) { return true; }), "always", base);
  const FittedCoefficient& c = coefficient(fit, "cpu.contention_slowdown");
  EXPECT_FALSE(c.applied);
  EXPECT_NE(c.note.find("not identified"), std::string::npos) << c.note;
  EXPECT_EQ(fit.profile.cpu.contention_slowdown, base.cpu.contention_slowdown);
  EXPECT_NEAR(fit.profile.gpu.gemm_efficiency.below_1024.value, 0.3, 0.02);
}

// A GPU's stream is not on the cores: a busy worker beside it says nothing of contention.
TEST(TraceFit, AGpuStreamDoesNotContendForCores) {
  HardwareProfile base = two_core_cpu_device();
  base.device = DeviceKind::gpu;
  const traces::NativeTrace trace = contended_trace(base, 0.3, [](std::int64_t step) { return step % 2 == 0; });
  traces::NativeTrace on_gpu = trace;
  for (traces::TraceRecord& r : on_gpu.records)
    if (r.resource == "cpu0 stream") r.resource = "gpu0 stream";
  const TraceCalibration fit = calibrate_from_trace(on_gpu, "gpu", base);
  const FittedCoefficient& c = coefficient(fit, "cpu.contention_slowdown");
  EXPECT_FALSE(c.applied);
  EXPECT_NE(c.note.find("fewer than"), std::string::npos) << c.note;
}

// One or two steps say nothing steady: refused unless forced, naming the steps and the way out.
TEST(TraceFit, ATraceOfTooFewStepsIsRefusedUnlessForced) {
  const HardwareProfile truth = base_profile();
  traces::NativeTrace two = synthetic_trace(truth);
  std::erase_if(two.records, [](const traces::TraceRecord& r) { return r.step > 2; });
  try {
    (void)calibrate_from_trace(two, "two.csv", unmeasured_base());
    ADD_FAILURE() << "a trace of two steps was fitted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("two.csv: steps: at least 3 recorded steps"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--force"), std::string::npos) << e.what();
  }
  TraceFitOptions force;
  force.force = true;
  EXPECT_NO_THROW((void)calibrate_from_trace(two, "two.csv", unmeasured_base(), force));
}

// A coefficient the trace identifies but leaves uncertain (a noisy copy time) keeps the base
// value, saying why; forced, it is applied.
TEST(TraceFit, AnUncertainCoefficientKeepsTheBaseValueUnlessForced) {
  const HardwareProfile truth = base_profile();
  traces::NativeTrace t = synthetic_trace(truth);
  // Copies whose times scatter far more than their sizes explain.
  double jitter = 0.2;
  for (traces::TraceRecord& r : t.records)
    if (r.kind == "transfer") {
      r.end_s *= jitter;
      jitter = jitter > 1.0 ? 0.2 : jitter * 5.0;
    }
  const TraceCalibration fit = calibrate_from_trace(t, "noisy.csv", unmeasured_base());
  const FittedCoefficient& latency = coefficient(fit, "host_to_device.latency");
  ASSERT_TRUE(latency.identified);
  ASSERT_GT(latency.relative_error, kMaxRelativeError);
  EXPECT_FALSE(latency.applied);
  EXPECT_NE(latency.note.find("kept the base value (--force applies it)"), std::string::npos) << latency.note;
  EXPECT_EQ(fit.profile.host_to_device.latency.value, unmeasured_base().host_to_device.latency.value);
  TraceFitOptions force;
  force.force = true;
  EXPECT_TRUE(coefficient(calibrate_from_trace(t, "noisy.csv", unmeasured_base(), force), "host_to_device.latency").applied);
}

TEST(TraceFit, ATraceWithNothingTimedIsAnError) {
  traces::NativeTrace t;
  t.records.push_back(record("step", "cpu0 main", 1, 0.5, {}));
  EXPECT_THROW(calibrate_from_trace(t, "empty.csv", base_profile()), InputError);
}

}  // namespace
}  // namespace asteria::hw::calibrate

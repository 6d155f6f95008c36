// One `asteria synth` configuration: build the platform, the synthetic stack and the step
// driver, run warm-up and measured steps, summarize.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ostream>

#include "apps/asteria/synth.hpp"
#include "core/runtime/driver/step_driver.hpp"

namespace asteria::cli {

namespace {

using WallClock = std::chrono::steady_clock;

// Progress lines, only once a run has lasted more than a second and then at most once a second.
class Progress {
 public:
  Progress(std::ostream& out, std::string name, bool enabled)
      : out_(out), name_(std::move(name)), enabled_(enabled), start_(WallClock::now()), last_(start_) {}

  void step(const runtime::StepRecord& r, int total) {
    if (!enabled_) return;
    const WallClock::time_point now = WallClock::now();
    if (seconds(start_, now) < 1.0 || seconds(last_, now) < 1.0) return;
    last_ = now;
    char line[160];
    std::snprintf(line, sizeof line, "synth: %s step %lld/%d%s, %.1f s, last step %.1f ms\n", name_.c_str(),
                  static_cast<long long>(r.step), total, r.warmup ? " (warm-up)" : "", seconds(start_, now),
                  r.step_time_s * 1e3);
    out_ << line << std::flush;
  }

 private:
  static double seconds(WallClock::time_point a, WallClock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  }
  std::ostream& out_;
  std::string name_;
  bool enabled_;
  WallClock::time_point start_;
  WallClock::time_point last_;
};

}  // namespace

SynthRun run_synth(const SynthSettings& s, const std::string& name, std::ostream& progress_out) {
  validate(s);
  // Refresh workers already run in parallel with each other: one BLAS thread each keeps them
  // from oversubscribing the cores (OPENBLAS_NUM_THREADS=1).
  openblas_set_num_threads(1);
  SynthRun run;
  run.name = name;
  run.settings = s;
  SynthPlatform platform(s);
  run.platform = platform.description();
  run.settings.host_threads = platform.host_threads();
  runtime::SyntheticModel<float> model(model_spec(s));

  runtime::DriverOptions o;
  o.mode = s.mode;
  o.warmup_steps = s.warmup_steps;
  if (s.warmup_to_first_publication)
    o.warmup_steps = std::max<int>(
        o.warmup_steps, static_cast<int>(runtime::first_publication_step(s.optimizer, s.hp, s.staleness)));
  run.settings.warmup_steps = o.warmup_steps;
  o.store.policy = s.placement;
  o.store.lookahead = s.lookahead;
  o.service = runtime::service_options(s.hp, s.staleness, s.publish);
  const real::DeviceModel device = s.device_model;
  o.device_seconds = [device](const platform::Cost& cost) { return device.duration(cost); };

  runtime::StepDriver<float> driver(platform.get(), model, s.optimizer, s.hp, o);
  run.state_bytes = driver.state_bytes();
  run.blocks = driver.block_count();
  Progress progress(progress_out, name, s.progress);
  const int total = o.warmup_steps + s.steps;
  run.records.reserve(static_cast<std::size_t>(total));
  for (int t = 1; t <= total; ++t) {
    run.records.push_back(driver.run_step());
    progress.step(run.records.back(), total);
  }
  driver.finish();
  run.summary = runtime::summarize(run.records);
  run.refresh_failures = driver.service().totals().failures;
  return run;
}

}  // namespace asteria::cli

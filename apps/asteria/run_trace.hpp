#pragma once
// The trace of one run (--trace): a TraceRecorder whose sinks the platform's executors report
// to, a window of steps fixed once the plan is known (--trace-steps, or the first measured steps
// that fit --trace-max-bytes), and the files written after the run: trace.csv (the native trace)
// and trace.json (the Chrome trace drawn from it).
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "core/plan/step_plan.hpp"
#include "apps/asteria/run_report.hpp"
#include "apps/asteria/run_config_options.hpp"
#include "traces/trace_recorder.hpp"

namespace asteria::cli {

class TraceSession {
 public:
  // Records nothing unless spec.trace.enabled. `units`: how many ranks will record; the window
  // starts at `first_measured_step` and ends at most at `last_step`.
  TraceSession(const RunConfig& spec, int units, std::int64_t first_measured_step, std::int64_t last_step);
  bool enabled() const noexcept { return recorder_ != nullptr; }
  // The sink of unit u (null when not recording).
  platform::ActivitySink* sink(int unit);
  // The plan unit u runs; the first call fixes the window. Call before the unit's first step.
  // `site`: where the run computes host-placed optimizer ops (written to the trace's metadata).
  void set_plan(int unit, const plan::StepPlan& plan, plan::NumericsSite site);
  // Writes trace.csv and trace.json into `dir` and says what they hold.
  TraceInfo write(const std::filesystem::path& dir, std::map<std::string, std::string> metadata) const;

 private:
  RunConfig spec_;
  int units_;
  std::int64_t first_;
  std::int64_t last_;
  std::unique_ptr<traces::TraceRecorder> recorder_;
  std::once_flag window_fixed_;
  plan::NumericsSite site_ = plan::NumericsSite::own_launch;
};

}  // namespace asteria::cli

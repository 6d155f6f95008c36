#include "apps/asteria/run_trace.hpp"

#include "core/io/atomic_file.hpp"
#include "traces/chrome_trace.hpp"

namespace asteria::cli {

TraceSession::TraceSession(const RunSpec& spec, int units, std::int64_t first_measured_step, std::int64_t last_step)
    : spec_(spec), units_(units), first_(first_measured_step), last_(last_step) {
  if (!spec.trace.enabled) return;
  traces::RecorderOptions options;
  // Nothing is kept until the plan fixes the window (placement before step 1 is step 0).
  options.window = {first_measured_step, first_measured_step - 1};
  options.max_bytes = spec.trace.max_bytes;
  recorder_ = std::make_unique<traces::TraceRecorder>(options);
}

platform::ActivitySink* TraceSession::sink(int unit) { return recorder_ ? &recorder_->sink(unit) : nullptr; }

void TraceSession::set_plan(int unit, const plan::StepPlan& plan, plan::NumericsSite site) {
  if (!recorder_) return;
  site_ = site;
  std::call_once(window_fixed_, [&] {
    // Whatever the user chose, the default sizes the rest to the byte budget.
    const std::int64_t first = spec_.trace.steps ? spec_.trace.steps->first : first_;
    const std::int64_t last = spec_.trace.steps ? spec_.trace.steps->second : last_;
    const int units = spec_.trace.units ? std::min(*spec_.trace.units, units_) : units_;
    traces::TraceWindow window = traces::default_window(first, last, units, plan, spec_.trace.max_bytes);
    if (spec_.trace.steps) window.last_step = last;
    if (spec_.trace.units) window.units = units;
    recorder_->set_window(window);
  });
  recorder_->set_plan(unit, plan, site);
}

TraceInfo TraceSession::write(const std::filesystem::path& dir, std::map<std::string, std::string> metadata) const {
  TraceInfo info;
  if (!recorder_) return info;
  metadata["numerics_site"] = std::string(plan::to_string(site_));  // what a replay charges where
  const traces::NativeTrace trace = recorder_->trace(std::move(metadata));
  const std::string native = traces::native_trace_text(trace);
  io::write_file_atomically(dir / "trace.csv", native);
  traces::ChromeTraceOptions chrome;
  chrome.source = (dir / "trace.json").string();
  for (const auto& [key, value] : trace.metadata) chrome.other_data[key] = value;
  const std::string chrome_text = traces::chrome_trace_text(traces::chrome_timeline(trace), chrome);
  io::write_file_atomically(dir / "trace.json", chrome_text);
  const traces::TraceWindow window = recorder_->window();
  info.written = true;
  info.first_step = window.first_step;
  info.last_step = std::min(window.last_step, last_);
  info.units = std::min(window.units, units_);
  info.records = trace.records.size();
  info.dropped_records = recorder_->dropped_records();
  info.native_bytes = native.size();
  info.chrome_bytes = chrome_text.size();
  return info;
}

}  // namespace asteria::cli

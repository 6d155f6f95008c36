#include "apps/asteria/run_trace.hpp"

#include <algorithm>

#include "core/common/error.hpp"
#include "core/io/atomic_file.hpp"
#include "traces/chrome_trace.hpp"

namespace asteria::cli {

TraceSession::TraceSession(const RunConfig& spec, int units, std::int64_t first_measured_step, std::int64_t last_step)
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

namespace {

struct TraceTexts {
  std::string native;
  std::string chrome;
  std::size_t larger() const noexcept { return std::max(native.size(), chrome.size()); }
};

TraceTexts texts_of(const traces::NativeTrace& trace, const std::filesystem::path& dir) {
  traces::ChromeTraceOptions chrome;
  chrome.source = (dir / "trace.json").string();
  for (const auto& [key, value] : trace.metadata) chrome.other_data[key] = value;
  return {traces::native_trace_text(trace), traces::chrome_trace_text(traces::chrome_timeline(trace), chrome)};
}

}  // namespace

TraceInfo TraceSession::write(const std::filesystem::path& dir, std::map<std::string, std::string> metadata) const {
  TraceInfo info;
  if (!recorder_) return info;
  metadata["numerics_site"] = std::string(plan::to_string(site_));  // what a replay charges where
  traces::NativeTrace trace = recorder_->trace(std::move(metadata));
  TraceTexts texts = texts_of(trace, dir);
  // The recorder kept records by an estimate of their size; the bound holds for each file as
  // written: the latest records go (counted as dropped) until both fit.
  const std::size_t bound = spec_.trace.max_bytes;
  std::size_t dropped = 0;
  if (texts.larger() > bound) {
    traces::NativeTrace all = trace;
    std::size_t fits = 0, fails = all.records.size();  // kept records: fits fits, fails does not
    const auto with = [&](std::size_t kept) {
      traces::NativeTrace t = all;
      t.records.resize(kept);
      t.metadata["dropped_records"] = std::to_string(recorder_->dropped_records() + all.records.size() - kept);
      return t;
    };
    if (texts_of(with(0), dir).larger() > bound)
      throw InputError("command line", "--trace-max-bytes",
                       "a bound the trace's header (the run's settings and model layers) fits in: " +
                           std::to_string(texts_of(with(0), dir).larger()) + " bytes without a record, found " +
                           std::to_string(bound));
    while (fails - fits > 1) {
      const std::size_t mid = fits + (fails - fits) / 2;
      (texts_of(with(mid), dir).larger() <= bound ? fits : fails) = mid;
    }
    trace = with(fits);
    texts = texts_of(trace, dir);
    dropped = all.records.size() - fits;
  }
  io::write_file_atomically(dir / "trace.csv", texts.native);
  io::write_file_atomically(dir / "trace.json", texts.chrome);
  const traces::TraceWindow window = recorder_->window();
  info.written = true;
  info.first_step = window.first_step;
  info.last_step = std::min(window.last_step, last_);
  info.units = std::min(window.units, units_);
  info.records = trace.records.size();
  info.dropped_records = recorder_->dropped_records() + dropped;
  info.native_bytes = texts.native.size();
  info.chrome_bytes = texts.chrome.size();
  return info;
}

}  // namespace asteria::cli

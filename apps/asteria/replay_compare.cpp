// The recorded and the predicted steps of a replay, side by side, and the errors over them.
#include <algorithm>
#include <cmath>
#include <map>

#include "apps/asteria/replay.hpp"
#include "core/common/error.hpp"
#include "core/platform/activity.hpp"
#include "core/runtime/driver/run_summary.hpp"

namespace asteria::cli {

namespace {

using Spans = std::vector<std::pair<double, double>>;

// The spans merged into disjoint ones, in time order.
Spans merged(Spans spans) {
  std::sort(spans.begin(), spans.end());
  Spans out;
  for (const auto& [start, end] : spans) {
    if (!out.empty() && start <= out.back().second) out.back().second = std::max(out.back().second, end);
    else out.emplace_back(start, end);
  }
  return out;
}

// Seconds of `busy` (disjoint, in order) not covered by `covering` (disjoint, in order).
double uncovered(const Spans& busy, const Spans& covering) {
  double total = 0.0;
  std::size_t c = 0;
  for (const auto& [start, end] : busy) {
    double at = start;
    while (c < covering.size() && covering[c].second <= at) ++c;
    for (std::size_t k = c; k < covering.size() && covering[k].first < end; ++k) {
      total += std::max(0.0, covering[k].first - at);
      at = std::max(at, covering[k].second);
    }
    total += std::max(0.0, end - at);
  }
  return total;
}

}  // namespace

std::vector<TracedStep> traced_steps(const traces::NativeTrace& trace, int unit) {
  std::map<std::int64_t, TracedStep> steps;
  for (const traces::TraceRecord& r : trace.records) {
    if (r.unit != unit) continue;
    if (r.kind == "step") {
      TracedStep& s = steps[r.step];
      s.step = r.step;
      s.step_s = r.end_s - r.start_s;
    }
  }
  // Per step: the device stream's work and the collectives (reduce and gather ops).
  std::map<std::int64_t, std::pair<Spans, Spans>> spans;
  const std::string stream = platform::device_stream_track(unit);
  for (const traces::TraceRecord& r : trace.records) {
    if (r.unit != unit) continue;
    const auto it = steps.find(r.step);
    if (it == steps.end()) continue;
    if (r.kind == "forward" || r.kind == "backward") it->second.compute_s += r.end_s - r.start_s;
    if (r.resource == stream) spans[r.step].first.emplace_back(r.start_s, r.end_s);
    else if (r.kind == "reduce" || r.kind == "gather" || r.kind == "scatter") spans[r.step].second.emplace_back(r.start_s, r.end_s);
  }
  std::vector<TracedStep> out;
  for (auto& [step, s] : steps) {
    auto& [device, network] = spans[step];
    s.exposed_communication_s = uncovered(merged(std::move(network)), merged(std::move(device)));
    s.visible_optimizer_s = std::max(0.0, s.step_s - s.compute_s - s.exposed_communication_s);
    out.push_back(s);
  }
  return out;
}

std::vector<StepComparison> compare_steps(const std::vector<TracedStep>& recorded,
                                          const std::vector<TracedStep>& predicted, const std::string& source) {
  std::map<std::int64_t, const TracedStep*> by_step;
  for (const TracedStep& p : predicted) by_step[p.step] = &p;
  std::vector<StepComparison> out;
  for (const TracedStep& r : recorded) {
    const auto it = by_step.find(r.step);
    if (it == by_step.end() || r.step_s <= 0.0) continue;
    out.push_back({r.step, r, *it->second, it->second->step_s / r.step_s - 1.0});
  }
  if (out.empty())
    throw InputError(source, "steps", "steps recorded in both the trace and the replay (the trace holds " +
                                          std::to_string(recorded.size()) + " steps)");
  return out;
}

ReplayErrors replay_errors(const std::vector<StepComparison>& steps) {
  ReplayErrors e;
  e.steps = steps.size();
  std::vector<double> errors;
  double recorded = 0.0, predicted = 0.0, recorded_visible = 0.0, predicted_visible = 0.0, abs_sum = 0.0;
  for (const StepComparison& s : steps) {
    errors.push_back(std::abs(s.step_error));
    abs_sum += std::abs(s.step_error);
    recorded += s.recorded.step_s;
    predicted += s.predicted.step_s;
    recorded_visible += s.recorded.visible_optimizer_s;
    predicted_visible += s.predicted.visible_optimizer_s;
  }
  if (steps.empty()) return e;
  e.median_abs_step_error = runtime::percentile(errors, 0.5);
  e.p99_abs_step_error = runtime::percentile(errors, 0.99);
  e.mean_abs_step_error = abs_sum / static_cast<double>(steps.size());
  e.total_step_error = recorded > 0.0 ? predicted / recorded - 1.0 : 0.0;
  e.visible_optimizer_error = recorded_visible > 0.0 ? predicted_visible / recorded_visible - 1.0 : 0.0;
  e.visible_optimizer_error_of_step = recorded > 0.0 ? std::abs(predicted_visible - recorded_visible) / recorded : 0.0;
  return e;
}

}  // namespace asteria::cli

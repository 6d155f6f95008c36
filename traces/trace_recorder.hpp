#pragma once
// The one recorder every backend reports to. Each unit (rank) gets a platform::ActivitySink;
// executors, copy engines and the plan interpreter append activities tagged with the step and
// the plan op they served. After the run, trace() joins them with the plans the units ran into
// the native trace (native_trace.hpp): one record per operation with its kind, step, layer and
// block, resource, start, end, bytes, FLOPs and dependencies.
//
// A trace can be limited to a window of steps, and is bounded in size: records past `max_bytes`
// (as estimated for the written files) are counted, not kept, so a long or wide run cannot
// exhaust memory through its trace. default_window() sizes a window to a byte budget before the
// run starts, from the plan.
#include <cstddef>
#include <atomic>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/plan/step_plan.hpp"
#include "core/platform/activity.hpp"
#include "traces/native_trace.hpp"

namespace asteria::traces {

// The steps a trace keeps, of units 0 .. units-1.
struct TraceWindow {
  std::int64_t first_step = 1;
  std::int64_t last_step = std::numeric_limits<std::int64_t>::max();
  int units = std::numeric_limits<int>::max();
  bool contains(std::int64_t step) const noexcept { return step >= first_step && step <= last_step; }
  bool contains(int unit, std::int64_t step) const noexcept { return unit < units && contains(step); }
};

struct RecorderOptions {
  TraceWindow window;
  std::size_t max_bytes = 0;  // bound on the written trace files (estimated); 0: none
};

// Bytes a record is estimated to take in the written files, native CSV and Chrome JSON together
// (measured on a 64-GPU OLMo-2 7B simulation: 168 + 215 bytes per record).
inline constexpr std::size_t kRecordBytesEstimate = 400;

// The records one unit makes in one step of `plan`: every op, and about six more per block
// (copies between tiers and their disk legs, occupancy samples at each allocation and release, a
// refresh now and then; measured: 1.01 x this on a tiered OLMo-2 7B step).
std::size_t records_per_unit_step(const plan::StepPlan& plan);

// A window that fits `max_bytes` when `units` units each run `plan`: whole steps of every unit
// from `first_step` (at most up to `last_step`) when one step of all of them fits, otherwise one
// step of as many units as fit (at least one).
TraceWindow default_window(std::int64_t first_step, std::int64_t last_step, int units, const plan::StepPlan& plan,
                           std::size_t max_bytes);

class TraceRecorder {
 public:
  explicit TraceRecorder(RecorderOptions options = {});
  ~TraceRecorder();
  TraceRecorder(const TraceRecorder&) = delete;
  TraceRecorder& operator=(const TraceRecorder&) = delete;

  // The sink of unit u, created on first use (thread-safe; the reference stays valid).
  platform::ActivitySink& sink(int unit);
  // The plan unit u runs (copied). Its records get kind, layer, block, micro-batch and
  // dependencies from it, and its launches are expanded into one record per fused op.
  void set_plan(int unit, const plan::StepPlan& plan, plan::NumericsSite site = plan::NumericsSite::own_launch);

  // The native trace of everything kept, records by unit, then start time. Call once the run is
  // over (nothing records any more). `metadata` is copied into it, with the window and counts.
  NativeTrace trace(std::map<std::string, std::string> metadata = {}) const;

  // Changes the window; call before the first step of any unit is recorded (e.g. once the plan
  // is known, to size it with default_window).
  void set_window(TraceWindow window) noexcept;
  TraceWindow window() const noexcept;
  std::size_t max_bytes() const noexcept { return max_bytes_; }
  std::size_t kept_records() const;
  std::size_t dropped_records() const;  // past max_bytes
  std::size_t estimated_bytes() const;

 private:
  class UnitSink;
  struct UnitPlan {
    plan::StepPlan plan;
    std::vector<std::vector<std::int32_t>> members;  // per launch: the ops charged to it
  };
  struct Raw {
    int unit = 0;
    std::uint32_t track = 0;  // index into tracks_
    platform::OpTag tag;
    platform::Costs cost;
    double bytes = 0.0;  // a counter's value
    double start = 0.0;
    double end = 0.0;
    bool ok = true;
    bool counter = false;
    std::string label;  // kept for records whose name the plan cannot give
  };

  void add(int unit, const platform::Activity& activity);
  void add_counter(int unit, const std::string& name, double time, double value);
  std::uint32_t track_id(const std::string& track);  // mutex held
  bool admit(std::size_t rows, std::size_t extra_bytes);  // mutex held
  std::int64_t current_step(int unit) const;            // mutex held

  std::atomic<std::int64_t> first_step_;
  std::atomic<std::int64_t> last_step_;
  std::atomic<int> units_;
  std::size_t max_bytes_;
  mutable std::mutex mutex_;
  std::map<int, std::unique_ptr<UnitSink>> sinks_;
  std::map<int, UnitPlan> plans_;
  std::map<int, std::int64_t> current_steps_;
  std::vector<std::string> tracks_;
  std::map<std::string, std::uint32_t> track_ids_;
  std::vector<Raw> raws_;
  std::size_t bytes_ = 0;
  std::size_t dropped_ = 0;
};

}  // namespace asteria::traces

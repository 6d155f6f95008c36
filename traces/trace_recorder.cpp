#include "traces/trace_recorder.hpp"

#include <algorithm>

#include "core/common/number_text.hpp"

namespace asteria::traces {

class TraceRecorder::UnitSink final : public platform::ActivitySink {
 public:
  UnitSink(TraceRecorder& recorder, int unit) : recorder_(recorder), unit_(unit) {}
  int unit() const noexcept override { return unit_; }
  void record(platform::Activity activity) override { recorder_.add(unit_, activity); }
  void counter(const std::string& name, platform::Seconds time, double value) override {
    recorder_.add_counter(unit_, name, time, value);
  }
  void begin_step(std::int64_t step) override {
    std::lock_guard lock(recorder_.mutex_);
    recorder_.current_steps_[unit_] = step;
  }
  bool recording(std::int64_t step) const override { return recorder_.window().contains(unit_, step); }

 private:
  TraceRecorder& recorder_;
  int unit_;
};

std::size_t records_per_unit_step(const plan::StepPlan& plan) { return plan.ops.size() + 6 * plan.blocks.size() + 1; }

TraceWindow default_window(std::int64_t first_step, std::int64_t last_step, int units, const plan::StepPlan& plan,
                           std::size_t max_bytes) {
  TraceWindow window{first_step, last_step};
  if (max_bytes == 0 || last_step < first_step) return window;
  const double unit_step = static_cast<double>(records_per_unit_step(plan) * kRecordBytesEstimate);
  // A tenth of the budget is left for the estimate's error, so the bound rarely cuts a step.
  const double budget = 0.9 * static_cast<double>(max_bytes);
  units = std::max(1, units);
  if (unit_step * units <= budget) {
    const auto steps = static_cast<std::int64_t>(budget / (unit_step * units));
    window.last_step = std::min(last_step, first_step + steps - 1);
  } else {
    window.last_step = first_step;
    window.units = std::max(1, static_cast<int>(budget / unit_step));
  }
  return window;
}

TraceRecorder::TraceRecorder(RecorderOptions options)
    : first_step_(options.window.first_step),
      last_step_(options.window.last_step),
      units_(options.window.units),
      max_bytes_(options.max_bytes) {}

void TraceRecorder::set_window(TraceWindow window) noexcept {
  first_step_ = window.first_step;
  last_step_ = window.last_step;
  units_ = window.units;
}

TraceWindow TraceRecorder::window() const noexcept { return {first_step_.load(), last_step_.load(), units_.load()}; }
TraceRecorder::~TraceRecorder() = default;

platform::ActivitySink& TraceRecorder::sink(int unit) {
  std::lock_guard lock(mutex_);
  auto& slot = sinks_[unit];
  if (!slot) slot = std::make_unique<UnitSink>(*this, unit);
  return *slot;
}

void TraceRecorder::set_plan(int unit, const plan::StepPlan& plan, plan::NumericsSite site) {
  // A launch's record expands into the ops charged to it where the run computed them.
  UnitPlan entry{plan, plan::launch_charges(plan, site)};
  std::lock_guard lock(mutex_);
  plans_[unit] = std::move(entry);
}

std::uint32_t TraceRecorder::track_id(const std::string& track) {
  auto [it, inserted] = track_ids_.emplace(track, static_cast<std::uint32_t>(tracks_.size()));
  if (inserted) tracks_.push_back(track);
  return it->second;
}

bool TraceRecorder::admit(std::size_t rows, std::size_t extra_bytes) {
  const std::size_t bytes = rows * kRecordBytesEstimate + extra_bytes;
  if (max_bytes_ != 0 && bytes_ + bytes > max_bytes_) {
    dropped_ += rows;
    return false;
  }
  bytes_ += bytes;
  return true;
}

std::int64_t TraceRecorder::current_step(int unit) const {
  auto it = current_steps_.find(unit);
  return it == current_steps_.end() ? 0 : it->second;
}

void TraceRecorder::add(int unit, const platform::Activity& a) {
  if (!window().contains(unit, a.tag.step)) return;
  std::lock_guard lock(mutex_);
  // A launch becomes one row per fused op; the plan names ops, other records keep their label.
  std::size_t rows = 1;
  const bool named_by_plan = a.tag.role == platform::ActivityRole::op || a.tag.role == platform::ActivityRole::launch;
  if (a.tag.role == platform::ActivityRole::launch) {
    auto plan = plans_.find(unit);
    if (plan != plans_.end() && a.tag.launch >= 0 &&
        static_cast<std::size_t>(a.tag.launch) < plan->second.members.size())
      rows = std::max<std::size_t>(1, plan->second.members[static_cast<std::size_t>(a.tag.launch)].size());
  }
  if (!admit(rows, named_by_plan ? 0 : a.label.size())) return;
  Raw r;
  r.unit = unit;
  r.track = track_id(a.track);
  r.tag = a.tag;
  r.cost = a.cost;
  r.start = a.start;
  r.end = a.end;
  r.ok = a.ok;
  if (!named_by_plan || plans_.find(unit) == plans_.end()) r.label = a.label;
  raws_.push_back(std::move(r));
}

void TraceRecorder::add_counter(int unit, const std::string& name, double time, double value) {
  std::lock_guard lock(mutex_);
  const std::int64_t step = current_step(unit);
  if (!window().contains(unit, step) || !admit(1, 0)) return;
  Raw r;
  r.unit = unit;
  r.track = track_id(name);
  r.tag = {step, -1, -1, platform::ActivityRole::other};
  r.bytes = value;
  r.start = r.end = time;
  r.counter = true;
  raws_.push_back(std::move(r));
}

std::size_t TraceRecorder::kept_records() const {
  std::lock_guard lock(mutex_);
  return raws_.size();
}

std::size_t TraceRecorder::dropped_records() const {
  std::lock_guard lock(mutex_);
  return dropped_;
}

std::size_t TraceRecorder::estimated_bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

namespace {

std::string op_label(const plan::StepPlan& plan, const plan::Op& op) {
  std::string label(plan::to_string(op.kind));
  label += ' ';
  if (op.block >= 0) label += plan.blocks[static_cast<std::size_t>(op.block)].label;
  else if (op.layer >= 0) label += plan.layers[static_cast<std::size_t>(op.layer)].name;
  if (plan::is_collective_op(op.kind)) label += " bucket " + std::to_string(op.bucket);
  if (plan.micro_batches > 1 && op.micro_batch >= 0) label += " mb " + std::to_string(op.micro_batch);
  return label;
}

void fill_from_op(TraceRecord& t, const plan::StepPlan& plan, std::int32_t id) {
  if (id < 0 || static_cast<std::size_t>(id) >= plan.ops.size()) return;
  const plan::Op& op = plan.ops[static_cast<std::size_t>(id)];
  t.layer = op.layer;
  t.block = op.block;
  t.micro_batch = op.micro_batch;
}

// Removes the pieces of `cost` from `pieces` when all of them are there (one each), and says
// whether it did: what a launch's pieces hold of one of its ops.
bool take_pieces(std::vector<platform::Cost>& pieces, const platform::Costs& cost) {
  std::vector<platform::Cost> left = pieces;
  for (const platform::Cost& piece : cost.pieces()) {
    const auto it = std::find(left.begin(), left.end(), piece);
    if (it == left.end()) return false;
    left.erase(it);
  }
  pieces = std::move(left);
  return true;
}

}  // namespace

NativeTrace TraceRecorder::trace(std::map<std::string, std::string> metadata) const {
  std::lock_guard lock(mutex_);
  NativeTrace out;
  out.metadata = std::move(metadata);
  out.metadata["format"] = "asteria-trace";
  const TraceWindow w = window();
  out.metadata["window_first_step"] = std::to_string(w.first_step);
  if (w.last_step != std::numeric_limits<std::int64_t>::max())
    out.metadata["window_last_step"] = std::to_string(w.last_step);
  if (w.units != std::numeric_limits<int>::max()) out.metadata["window_units"] = std::to_string(w.units);
  out.metadata["dropped_records"] = std::to_string(dropped_);
  out.records.reserve(raws_.size());
  for (const Raw& r : raws_) {
    const auto found = plans_.find(r.unit);
    const plan::StepPlan* plan = found == plans_.end() ? nullptr : &found->second.plan;
    const auto* members = found == plans_.end() ? nullptr : &found->second.members;
    TraceRecord t;
    t.unit = r.unit;
    t.step = r.tag.step;
    t.op = r.tag.op;
    t.resource = tracks_[r.track];
    t.start_s = r.start;
    t.end_s = r.end;
    t.bytes = r.counter ? r.bytes : r.cost.bytes();
    t.flops = r.cost.flops();
    t.cost = r.cost;
    t.ok = r.ok;
    t.label = r.label;
    if (r.counter) {
      t.kind = "counter";
      t.label = t.resource;
      out.records.push_back(std::move(t));
      continue;
    }
    using platform::ActivityRole;
    switch (r.tag.role) {
      case ActivityRole::op:
        if (plan != nullptr && r.tag.op >= 0 && static_cast<std::size_t>(r.tag.op) < plan->ops.size()) {
          const plan::Op& op = plan->ops[static_cast<std::size_t>(r.tag.op)];
          t.kind = std::string(plan::to_string(op.kind));
          t.launch = op.launch;
          t.deps = op.deps;
          t.label = op_label(*plan, op);
          fill_from_op(t, *plan, r.tag.op);
        } else {
          t.kind = "other";
        }
        break;
      case ActivityRole::launch: {
        t.launch = r.tag.launch;
        bool expanded = false;
        // A publish op is charged only when it installed a refresh: the launch's pieces beyond its
        // other ops' are those installs, each equal to its publish op's cost.
        std::vector<platform::Cost> installs;
        if (members != nullptr && r.tag.launch >= 0 && static_cast<std::size_t>(r.tag.launch) < members->size()) {
          installs.assign(r.cost.pieces().begin(), r.cost.pieces().end());
          for (std::int32_t i : (*members)[static_cast<std::size_t>(r.tag.launch)]) {
            const plan::Op& op = plan->ops[static_cast<std::size_t>(i)];
            if (op.kind == plan::OpKind::publish) continue;
            take_pieces(installs, op.cost);
          }
        }
        if (members != nullptr && r.tag.launch >= 0 && static_cast<std::size_t>(r.tag.launch) < members->size())
          for (std::int32_t i : (*members)[static_cast<std::size_t>(r.tag.launch)]) {
            const plan::Op& op = plan->ops[static_cast<std::size_t>(i)];
            TraceRecord m = t;
            m.op = i;
            m.kind = std::string(plan::to_string(op.kind));
            m.deps = op.deps;
            m.cost = {};
            if (op.kind != plan::OpKind::publish) {
              m.cost = op.cost;
            } else if (take_pieces(installs, op.cost)) {
              m.cost = op.cost;
            }
            m.bytes = m.cost.bytes();
            m.flops = m.cost.flops();
            m.label = op_label(*plan, op);
            fill_from_op(m, *plan, m.op);
            out.records.push_back(std::move(m));
            expanded = true;
          }
        if (expanded) continue;
        t.kind = "launch";
        if (plan != nullptr && r.tag.launch >= 0 && static_cast<std::size_t>(r.tag.launch) < plan->launches.size())
          t.label = plan->launches[static_cast<std::size_t>(r.tag.launch)].label;
        break;
      }
      case ActivityRole::refresh_job:
      case ActivityRole::transfer:
      case ActivityRole::io:
        t.kind = std::string(platform::to_string(r.tag.role));
        if (r.tag.op >= 0) t.deps = {r.tag.op};
        if (plan != nullptr) fill_from_op(t, *plan, r.tag.op);
        break;
      case ActivityRole::step: t.kind = "step"; break;
      case ActivityRole::other: t.kind = "other"; break;
    }
    out.records.push_back(std::move(t));
  }
  std::stable_sort(out.records.begin(), out.records.end(), [](const TraceRecord& a, const TraceRecord& b) {
    return a.unit != b.unit ? a.unit < b.unit : a.start_s < b.start_s;
  });
  return out;
}

}  // namespace asteria::traces

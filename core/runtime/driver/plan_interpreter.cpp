#include "core/runtime/driver/plan_interpreter.hpp"

#include <algorithm>
#include <stdexcept>
#include <span>
#include <string>
#include <type_traits>
#include <utility>

#include "core/common/error.hpp"
#include "core/runtime/driver/operand_staging.hpp"

namespace asteria::runtime {

using plan::Op;
using plan::OpId;
using plan::OpKind;
using plan::Resource;

template <linalg::Real T>
PlanInterpreter<T>::PlanInterpreter(const plan::StepPlan& plan, platform::Platform& platform, TrainingModel<T>& model,
                                    PreconditionerService<T>& service, StateStore& store, std::vector<PlanBlock> blocks,
                                    DeviceSeconds device_seconds, platform::Seconds issue_seconds_per_op,
                                    plan::NumericsSite numerics_site)
    : plan_(plan), platform_(platform), model_(model), service_(service), store_(store), blocks_(std::move(blocks)),
      seconds_(std::move(device_seconds)),
      // A measured run's issuing thread spends its own time.
      issue_seconds_(platform.time_source() == platform::TimeSource::measured ? 0.0 : issue_seconds_per_op),
      sink_(platform.activities()),
      charges_(plan::launch_charges(plan_, numerics_site)) {
  plan::validate(plan_, "step plan (" + plan_.schedule + ")");
  unpacks_ = first_arrivals();
  layer_verdicts_.resize(model_.layer_count());
  if (blocks_.size() != plan_.blocks.size())
    throw std::invalid_argument("PlanInterpreter: " + std::to_string(blocks_.size()) + " bound blocks for a plan of " +
                                std::to_string(plan_.blocks.size()));
  if (plan_.layers.size() != model_.layer_count())
    throw std::invalid_argument("PlanInterpreter: the plan has " + std::to_string(plan_.layers.size()) +
                                " layers, the model " + std::to_string(model_.layer_count()));
  submit_points_ = plan::launch_submit_points(plan_);
  launches_after_.resize(plan_.ops.size());
  charged_launch_.assign(plan_.ops.size(), -1);
  for (std::size_t l = 0; l < charges_.size(); ++l)
    for (OpId m : charges_[l]) charged_launch_[static_cast<std::size_t>(m)] = static_cast<int>(l);
  numerics_of_.resize(plan_.launches.size());
  for (std::size_t i = 0; i < plan_.ops.size(); ++i) {
    const Op& op = plan_.ops[i];
    // At one op, its own launch goes first, then the hook that carries its numerics.
    for (int l : {op.launch, op.hook})
      if (l >= 0 && submit_points_[static_cast<std::size_t>(l)] == static_cast<OpId>(i) &&
          std::find(launches_after_[i].begin(), launches_after_[i].end(), l) == launches_after_[i].end())
        launches_after_[i].push_back(l);
    if (op.hook >= 0) numerics_of_[static_cast<std::size_t>(op.hook)].push_back(static_cast<OpId>(i));
  }
  launch_carried_.assign(plan_.launches.size(), 0);
  last_backward_.assign(plan_.layers.size(), -1);
  publish_cost_.assign(plan_.blocks.size(), platform::Costs{});
  for (std::size_t i = 0; i < plan_.ops.size(); ++i) {
    const Op& op = plan_.ops[i];
    for (int l : {op.launch, op.hook})
      if (l >= 0 && op.carried) launch_carried_[static_cast<std::size_t>(l)] = 1;  // uniform (validated)
    if (op.kind == OpKind::backward) last_backward_[static_cast<std::size_t>(op.layer)] = static_cast<OpId>(i);
    if (op.kind == OpKind::publish) publish_cost_[static_cast<std::size_t>(op.block)] = op.cost;
  }
  // Only blocks this rank runs have refresh ops (others' service ids mean nothing here).
  for (const Op& op : plan_.ops) {
    if (op.kind != OpKind::refresh) continue;
    const BlockId id = blocks_[static_cast<std::size_t>(op.block)].service_id;
    if (plan_block_of_.size() <= id) plan_block_of_.resize(id + 1, 0);
    plan_block_of_[id] = static_cast<std::size_t>(op.block);
  }
}

template <linalg::Real T>
bool PlanInterpreter<T>::skipped_op(const Op& op) const noexcept {
  return op.carried ? step_ <= 1 : carried_only_;
}

template <linalg::Real T>
PlanInterpreter<T>::~PlanInterpreter() {
  wait_in_flight();
}

template <linalg::Real T>
void PlanInterpreter<T>::wait_in_flight() noexcept {
  for (auto* list : {&in_flight_, &network_in_flight_}) {
    for (platform::Pending& p : *list) {
      try {
        if (p.valid()) p.wait();
      } catch (...) {  // a backend that cannot wait any more: nothing left to protect
      }
    }
    list->clear();
  }
}

template <linalg::Real T>
PlanTotals PlanInterpreter<T>::run(Step t, platform::Numerics numerics, bool warmup,
                                   const std::function<void()>& boundary, bool carried_only) {
  step_ = t;
  carried_only_ = carried_only;
  values_ = numerics != platform::Numerics::shapes;
  device_numerics_ = values_ && (numerics == platform::Numerics::values || warmup);
  body_ = numerics == platform::Numerics::values;
  totals_ = {};
  unpack_pending_.assign(plan_.ops.size(), 0);
  packed_.resize(plan_.ops.size());
  wire_.resize(plan_.ops.size());
  finished_.assign(plan_.ops.size(), {});
  launch_state_.assign(plan_.launches.size(), {});
  skipped_.assign(plan_.blocks.size(), 0);
  body_skipped_.assign(plan_.blocks.size(), 0);
  bool boundary_passed = !boundary;
  // The previous step's optimizer work (the carried ops, numerics in launch bodies) is over.
  auto pass_boundary = [&] {
    for (std::size_t i = 0; i < plan_.ops.size(); ++i)
      if (plan_.ops[i].carried)
        for (const platform::Pending& p : finished_[i])
          if (p.valid()) wait_ok(p, "carried " + std::string(plan::to_string(plan_.ops[i].kind)));
    boundary();
    boundary_passed = true;
  };
  for (std::size_t i = 0; i < plan_.ops.size(); ++i) {
    const Op& op = plan_.ops[i];
    if (skipped_op(op)) continue;  // nothing to wait for: its finished_ stays empty
    if (!boundary_passed && !op.carried && plan::is_optimizer_op(op.kind)) pass_boundary();
    execute(static_cast<OpId>(i));
    for (int l : launches_after_[i])
      if (!(launch_carried_[static_cast<std::size_t>(l)] ? step_ <= 1 : carried_only_)) submit_launch(l);
  }
  if (!boundary_passed) pass_boundary();
  // The step ends when everything it submitted has (the device stream has drained); the
  // collectives still running once the rest has finished are exposed communication.
  for (const platform::Pending& p : in_flight_) wait_ok(p, "step work");
  in_flight_.clear();
  const platform::Seconds drained = platform_.clock().now();
  for (const platform::Pending& p : network_in_flight_) wait_ok(p, "step collective");
  if (!network_in_flight_.empty()) totals_.exposed_communication += device_idle_since(drained);
  network_in_flight_.clear();
  if (body_error_) std::rethrow_exception(std::exchange(body_error_, nullptr));
  // Values of collectives nothing waited for (sharded state's new weights): in place before the
  // next step.
  for (std::size_t i = 0; i < plan_.ops.size(); ++i)
    if (std::exchange(unpack_pending_[i], 0)) unpack(static_cast<OpId>(i));
  return totals_;
}

template <linalg::Real T>
platform::Pending PlanInterpreter<T>::submit(platform::Executor& executor, platform::Work work) {
  platform::Pending p = executor.submit(std::move(work));
  in_flight_.push_back(p);
  if (&executor == &platform_.device_stream()) device_tail_ = p;
  return p;
}

template <linalg::Real T>
void PlanInterpreter<T>::wait_ok(const platform::Pending& pending, const std::string& what) {
  const Status status = pending.status();
  if (body_error_) std::rethrow_exception(std::exchange(body_error_, nullptr));
  if (!status.ok())
    throw NumericalError("step plan: " + what + " failed at step " + std::to_string(step_) + ": " + status.message());
}

template <linalg::Real T>
void PlanInterpreter<T>::await(OpId dep) {
  const Op& d = plan_.ops[static_cast<std::size_t>(dep)];
  const platform::Seconds start = d.on == Resource::network ? platform_.clock().now() : 0.0;
  for (const platform::Pending& p : finished_[static_cast<std::size_t>(dep)])
    if (p.valid()) wait_ok(p, std::string(plan::to_string(d.kind)) + " (op " + std::to_string(dep) + ")");
  if (d.on == Resource::network) totals_.exposed_communication += device_idle_since(start);
  // A collective started after the collectives it depends on had finished: their values too.
  if (plan::is_collective_op(d.kind))
    for (OpId before : d.deps)
      if (plan::is_collective_op(plan_.ops[static_cast<std::size_t>(before)].kind)) await(before);
  if (std::exchange(unpack_pending_[static_cast<std::size_t>(dep)], 0)) unpack(dep);
}

// Nothing reaches the device stream while the issuing thread waits, so it is idle from when its
// last work finished (or the wait's start, if later) until now; 0 while that work still runs.
template <linalg::Real T>
platform::Seconds PlanInterpreter<T>::device_idle_since(platform::Seconds start) const {
  const platform::Seconds now = platform_.clock().now();
  if (!device_tail_.valid()) return now - start;
  if (!device_tail_.test()) return 0.0;
  return std::max(0.0, now - std::max(start, device_tail_.finished_at().value_or(start)));
}

// Whether `dep` is certain to have run before `op` (a member of `launch`, or -1) starts, so that
// no wait is needed: the two share a launch or a hook (plan order is run order there), or both
// run on the device stream (stream order).
template <linalg::Real T>
bool PlanInterpreter<T>::ordered_before(const Op& op, int launch, OpId dep) const {
  const Op& d = plan_.ops[static_cast<std::size_t>(dep)];
  for (int l : {launch, op.launch, op.hook})
    if (l >= 0 && (d.launch == l || d.hook == l)) return true;
  const bool on_stream = launch >= 0 ? plan_.launches[static_cast<std::size_t>(launch)].on == Resource::device
                                     : op.on == Resource::device;
  return on_stream && d.on == Resource::device;
}

template <linalg::Real T>
linalg::MatrixView<T> PlanInterpreter<T>::weights(const Op& op) {
  if (!values_) return {};
  return block_weights(op.block);
}

template <linalg::Real T>
linalg::MatrixView<T> PlanInterpreter<T>::block_weights(int block) {
  const PlanBlock& b = blocks_[static_cast<std::size_t>(block)];
  const optim::BlockRegion& r = b.region;
  return optim::reshaped(model_.weight_matrix(static_cast<std::size_t>(plan_.blocks[static_cast<std::size_t>(block)].layer)),
                         b.view)
      .block(r.row0, r.col0, r.rows, r.cols);
}

template <linalg::Real T>
linalg::ConstMatrixView<T> PlanInterpreter<T>::gradient(const Op& op) {
  if (!values_) return {};
  const PlanBlock& b = blocks_[static_cast<std::size_t>(op.block)];
  const optim::BlockRegion& r = b.region;
  return optim::reshaped(model_.gradient_matrix(static_cast<std::size_t>(op.layer)), b.view)
      .block(r.row0, r.col0, r.rows, r.cols);
}

template <linalg::Real T>
bool PlanInterpreter<T>::layer_gradient_finite(const Op& op) {
  if (!values_) return false;
  const auto l = static_cast<std::size_t>(op.layer);
  LayerVerdict& v = layer_verdicts_.at(l);
  if (v.step != step_of(op)) {
    v.step = step_of(op);
    v.finite = ops::all_finite(platform_.math(model_.tensor_tier()), model_.gradient_matrix(l));
  }
  return v.finite;
}

template <linalg::Real T>
ops::Device* PlanInterpreter<T>::staged_state_side(const Op& op) {
  if (!values_) return nullptr;
  ops::Device& state_side = platform_.math(store_.location(blocks_[static_cast<std::size_t>(op.block)].store_id));
  return &state_side == &platform_.math(model_.tensor_tier()) ? nullptr : &state_side;
}

template <linalg::Real T>
void PlanInterpreter<T>::record_issuer(OpId i, platform::Seconds start, bool in_launch_body) {
  if (sink_ == nullptr || !sink_->recording(step_)) return;
  const Op& op = plan_.ops[static_cast<std::size_t>(i)];
  std::string label(plan::to_string(op.kind));
  label += ' ';
  label += op.block >= 0 ? plan_.blocks[static_cast<std::size_t>(op.block)].label
                         : plan_.layers[static_cast<std::size_t>(op.layer)].name;
  sink_->record({in_launch_body ? platform::device_stream_track(sink_->unit()) : platform::issuer_track(sink_->unit()),
                 std::move(label),
                 {step_, i, -1, platform::ActivityRole::op}, op.cost, start, platform_.clock().now(), true});
}

template <linalg::Real T>
void PlanInterpreter<T>::execute(OpId i) {
  const Op& op = plan_.ops[static_cast<std::size_t>(i)];
  if (issue_seconds_ > 0.0) platform_.clock().sleep_for(issue_seconds_);
  switch (op.kind) {
    case OpKind::forward:
    case OpKind::backward: {
      for (OpId d : op.deps)
        if (!ordered_before(op, -1, d)) await(d);
      platform::Work work;
      work.label = std::string(plan::to_string(op.kind)) + ' ' + plan_.layers[static_cast<std::size_t>(op.layer)].name;
      if (plan_.micro_batches > 1) work.label += " mb " + std::to_string(op.micro_batch);
      work.cost = op.cost;
      work.tag = {step_, i, -1, platform::ActivityRole::op};
      const auto layer = static_cast<std::size_t>(op.layer);
      if (device_numerics_ && model_.pass() == ModelPass::per_micro_batch) {
        work.body = [this, layer, m = op.micro_batch, t = step_, forward = op.kind == OpKind::forward] {
          if (forward) model_.forward_pass(layer, m, t);
          else model_.backward_pass(layer, m, t);
          return Status::success();
        };
      } else if (op.kind == OpKind::backward && device_numerics_ && last_backward_[layer] == i) {
        work.body = [this, layer, t = step_] {
          model_.compute_gradient(layer, t);
          return Status::success();
        };
      }
      if (seconds_) totals_.compute += platform::total_seconds(op.cost, seconds_);
      finished_[static_cast<std::size_t>(i)].push_back(submit(platform_.device_stream(), std::move(work)));
      return;
    }
    case OpKind::reduce: run_reduce(i); return;
    case OpKind::gather: run_gather(i); return;
    case OpKind::scatter: run_scatter(i); return;
    case OpKind::prefetch:
    case OpKind::acquire:
    case OpKind::release: run_store_op(i); return;
    case OpKind::transfer: run_transfer(i); return;
    case OpKind::publish:
    case OpKind::accumulate:
    case OpKind::refresh:
    case OpKind::update:
      if (body_) return;  // runs inside its hook launch (every optimizer op has one)
      run_optimizer_op(i, false);
      return;
  }
}

template <linalg::Real T>
void PlanInterpreter<T>::run_store_op(OpId i) {
  const Op& op = plan_.ops[static_cast<std::size_t>(i)];
  for (OpId d : op.deps) await(d);
  const platform::Seconds start = platform_.clock().now();
  const BlockId id = blocks_[static_cast<std::size_t>(op.block)].store_id;
  store_.set_cause({step_, i, -1, platform::ActivityRole::transfer});
  switch (op.kind) {
    case OpKind::prefetch: store_.prefetch(id); break;
    case OpKind::acquire: totals_.state_move_wait += store_.acquire(id); break;
    case OpKind::release: store_.release(id, /*dirty=*/true); break;
    default: throw std::logic_error("PlanInterpreter: not a store op");
  }
  record_issuer(i, start);
}

// Starts the modelled move once every dep has finished; the issuing thread goes on while it runs.
template <linalg::Real T>
void PlanInterpreter<T>::run_transfer(OpId i) {
  const Op& op = plan_.ops[static_cast<std::size_t>(i)];
  for (OpId d : op.deps) await(d);
  std::string label = "transfer " + std::string(plan::to_string(op.payload)) + " " +
                      std::string(platform::to_string(op.from)) + "->" + std::string(platform::to_string(op.to)) +
                      " " +
                      (op.block >= 0 ? plan_.blocks[static_cast<std::size_t>(op.block)].label
                                     : plan_.layers[static_cast<std::size_t>(op.layer)].name);
  const platform::Pending moved =
      platform_.memory().transfer(op.from, op.to, static_cast<std::size_t>(op.cost.bytes()), std::move(label),
                                  {step_, i, -1, platform::ActivityRole::transfer});
  finished_[static_cast<std::size_t>(i)].push_back(moved);
  in_flight_.push_back(moved);
  totals_.transferred.at(op.from, op.to) += static_cast<std::size_t>(op.cost.bytes());
}

template <linalg::Real T>
void PlanInterpreter<T>::run_optimizer_op(OpId i, bool body) {
  const Op& op = plan_.ops[static_cast<std::size_t>(i)];
  if (!body)
    for (OpId d : op.deps)
      if (!ordered_before(op, -1, d)) await(d);
  const platform::Seconds start = platform_.clock().now();
  const BlockId id = blocks_[static_cast<std::size_t>(op.block)].service_id;
  char& skipped = (body ? body_skipped_ : skipped_)[static_cast<std::size_t>(op.block)];
  switch (op.kind) {
    case OpKind::publish: {
      const std::int64_t before = service_.version(id).publications;
      service_.publication_point(id, step_of(op));
      // Installing costs device (or host) work; known here only when the service runs now.
      if (const int charged = charged_launch_[static_cast<std::size_t>(i)];
          !body && charged >= 0 && service_.version(id).publications > before)
        launch_state_[static_cast<std::size_t>(charged)].installs.add(op.cost);
      break;
    }
    case OpKind::accumulate: {
      const bool finite = layer_gradient_finite(op);  // else each block's part is checked
      if (ops::Device* state_side = staged_state_side(op)) {
        OperandStaging<T> staged(platform_.math(model_.tensor_tier()), *state_side, gradient(op), {});
        if (!service_.accumulate(id, staged.gradient(), step_of(op), finite)) skipped = 1;
      } else if (!service_.accumulate(id, gradient(op), step_of(op), finite)) {
        skipped = 1;
      }
      break;
    }
    case OpKind::refresh:
      if (!skipped) service_.submit_refresh(id, step_of(op), {step_, i, -1, platform::ActivityRole::refresh_job});
      // Jobs installed early to make room for this snapshot: their installs' work goes to this
      // hook's launch (known here only when the service runs on the issuing thread).
      for (BlockId installed : service_.take_early_installs())
        if (!body && op.hook >= 0)
          launch_state_[static_cast<std::size_t>(op.hook)].installs.add(
              publish_cost_[static_cast<std::size_t>(plan_block_of_[installed])]);
      break;
    case OpKind::update:
      if (skipped) break;
      if (ops::Device* state_side = staged_state_side(op)) {
        OperandStaging<T> staged(platform_.math(model_.tensor_tier()), *state_side, gradient(op), weights(op));
        service_.apply(id, staged.weights(), staged.gradient(), step_of(op));
        staged.write_back();
      } else {
        service_.apply(id, weights(op), gradient(op), step_of(op));
      }
      break;
    default: throw std::logic_error("PlanInterpreter: not an optimizer op");
  }
  // Ops charged nowhere else are recorded where they ran: this thread, or the launch body.
  if (op.on == Resource::issuer) record_issuer(i, start, body);
}

template <linalg::Real T>
platform::Costs PlanInterpreter<T>::launch_cost(int launch) const {
  // A multi-tensor launch: each op is a kernel of its own, charged by its own rule.
  // Ops that do no work (AdamW's accumulate) add nothing: no kernel, no launch latency.
  platform::Costs total;
  for (OpId m : charges_[static_cast<std::size_t>(launch)]) {
    const Op& op = plan_.ops[static_cast<std::size_t>(m)];
    if (op.kind != OpKind::publish) total.add_work(op.cost);
  }
  total.add_work(launch_state_[static_cast<std::size_t>(launch)].installs);
  return total;
}

template <linalg::Real T>
double PlanInterpreter<T>::modelled_seconds(const platform::Costs& cost) const {
  return platform::total_seconds(cost, seconds_);
}

template <linalg::Real T>
void PlanInterpreter<T>::submit_launch(int launch) {
  const plan::Launch& spec = plan_.launches[static_cast<std::size_t>(launch)];
  LaunchState& state = launch_state_[static_cast<std::size_t>(launch)];
  // What the launch's ops depend on outside it must have finished before it starts.
  const auto& members = charges_[static_cast<std::size_t>(launch)];
  const auto& carried = numerics_of_[static_cast<std::size_t>(launch)];
  for (const auto* ops : {&members, body_ ? &carried : nullptr}) {
    if (ops == nullptr) continue;
    for (OpId m : *ops)
      for (OpId d : plan_.ops[static_cast<std::size_t>(m)].deps)
        if (!ordered_before(plan_.ops[static_cast<std::size_t>(m)], launch, d)) await(d);
  }
  platform::Work work;
  work.label = spec.label;
  work.cost = launch_cost(launch);
  work.tag = {step_, -1, launch, platform::ActivityRole::launch};
  if (spec.on == Resource::device) {
    const bool has_body = body_ && !numerics_of_[static_cast<std::size_t>(launch)].empty();
    if (!has_body && !work.cost.any_work()) {
      // Nothing to compute and nothing to charge: no submission at all.
      state.done = platform::Pending::ready();
      for (OpId m : members) finished_[static_cast<std::size_t>(m)].push_back(state.done);
      return;
    }
    if (has_body)
      work.body = [this, launch] {
        try {
          for (OpId m : numerics_of_[static_cast<std::size_t>(launch)]) run_optimizer_op(m, /*body=*/true);
        } catch (...) {
          body_error_ = std::current_exception();  // rethrown on the issuing thread with its own type
          throw;
        }
        return Status::success();
      };
    if (seconds_) totals_.optimizer_device += modelled_seconds(work.cost);
    state.done = submit(platform_.device_stream(), std::move(work));
  } else if (spec.on == Resource::host) {
    // Ahead of queued refreshes: the step's own update must not wait behind background work.
    work.urgent = true;
    if (!work.cost.any_work()) {
      state.done = platform::Pending::ready();
    } else if (spec.pieces > 1) {
      // A multi-threaded CPU kernel: equal pieces on as many workers; the launch ends with all.
      const platform::Costs piece = work.cost.scaled(1.0 / spec.pieces);
      for (int k = 0; k < spec.pieces; ++k) {
        platform::Work part = work;
        part.cost = piece;
        part.label = work.label + " [" + std::to_string(k + 1) + "/" + std::to_string(spec.pieces) + "]";
        state.done = submit(platform_.host_workers(), std::move(part));
        if (k + 1 < spec.pieces)
          for (OpId m : members) finished_[static_cast<std::size_t>(m)].push_back(state.done);
      }
    } else {
      state.done = submit(platform_.host_workers(), std::move(work));
    }
  } else {
    throw std::logic_error("PlanInterpreter: launches run on the device or the host workers");
  }
  for (OpId m : members) finished_[static_cast<std::size_t>(m)].push_back(state.done);
  if (body_)
    for (OpId m : carried)
      if (plan_.ops[static_cast<std::size_t>(m)].launch != launch) finished_[static_cast<std::size_t>(m)].push_back(state.done);
}

template class PlanInterpreter<float>;
template class PlanInterpreter<double>;

}  // namespace asteria::runtime

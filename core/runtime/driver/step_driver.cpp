#include "core/runtime/driver/step_driver.hpp"

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <utility>

#include "core/common/error.hpp"

namespace asteria::runtime {

std::string_view to_string(NumericsMode mode) noexcept {
  switch (mode) {
    case NumericsMode::full: return "full";
    case NumericsMode::emulated: return "emulated";
    case NumericsMode::shapes: return "shapes";
  }
  return "full";
}

NumericsMode parse_numerics_mode(std::string_view text, const std::string& source) {
  if (text == "full") return NumericsMode::full;
  if (text == "emulated") return NumericsMode::emulated;
  if (text == "shapes") return NumericsMode::shapes;
  throw InputError(source, "mode",
                   "expected \"full\", \"emulated\" or \"shapes\", found \"" + std::string(text) + "\"");
}

void validate(const DriverOptions& options, const std::string& source) {
  if (options.warmup_steps < 0) throw InputError(source, "warmup_steps", "expected an integer >= 0");
  if (options.store.lookahead < 0) throw InputError(source, "lookahead", "expected an integer >= 0");
  if (options.mode == NumericsMode::shapes && !options.shapes)
    throw InputError(source, "shapes", "expected a shape model (block costs and state bytes) in shapes mode");
  validate(options.service, source);
}

template <linalg::Real T>
StepDriver<T>::StepDriver(platform::Platform& platform, TrainingModel<T>& model, optim::OptimizerKind kind,
                          const optim::Hyperparameters& hp, DriverOptions options)
    : platform_(platform), model_(model), kind_(kind), options_(std::move(options)) {
  validate(options_, "step driver");
  service_ = std::make_unique<PreconditionerService<T>>(platform_, options_.service);
  for (std::size_t l = 0; l < model_.layer_count(); ++l) {
    const LayerSpec& spec = model_.layer(l);
    const std::vector<index> shape = spec.vector ? std::vector<index>{spec.cols} : std::vector<index>{spec.rows, spec.cols};
    Layer layer;
    if (options_.mode == NumericsMode::shapes) {
      add_shape_blocks(l, kind, hp, shape, layer);
      layers_.push_back(std::move(layer));
      continue;
    }
    layer.tensor = std::make_unique<optim::TensorOptimizer<T>>(kind, hp, shape, spec.name);
    for (std::size_t b = 0; b < layer.tensor->blocks().size(); ++b) {
      auto& tb = layer.tensor->blocks()[b];
      Block block;
      block.layer = l;
      block.label = layer.tensor->describe(b);
      block.region = tb.region;
      block.numerics = tb.optimizer.get();
      if (options_.mode == NumericsMode::emulated) {
        auto wrapper = std::make_unique<ModelledBlock<T>>(std::move(tb.optimizer), kind, hp);
        block.modelled = wrapper.get();
        tb.optimizer = std::move(wrapper);
      }
      block.costs = phase_costs(kind, tb.region.rows, tb.region.cols, sizeof(T));
      block.service_id = service_->register_block(*tb.optimizer, block.label);
      block.bytes = std::make_unique<BlockStateRelocatable<T>>(block.numerics->state());
      layer.blocks.push_back(blocks_.size());
      blocks_.push_back(std::move(block));
    }
    layers_.push_back(std::move(layer));
  }
  store_ = std::make_unique<StateStore>(platform_, options_.store);
  for (Block& b : blocks_) b.store_id = store_->add(*b.bytes, b.label);
  for (std::size_t l = layers_.size(); l-- > 0;)
    for (std::size_t b : layers_[l].blocks) use_order_.push_back(blocks_[b].store_id);
  store_->set_use_order(use_order_);
  store_->place();
}

template <linalg::Real T>
void StepDriver<T>::add_shape_blocks(std::size_t l, optim::OptimizerKind kind, const optim::Hyperparameters& hp,
                                     const std::vector<index>& shape, Layer& layer) {
  optim::validate(hp, model_.layer(l).name);
  const std::vector<optim::BlockPlan> plan = optim::plan_blocks(kind, hp, shape);
  for (std::size_t b = 0; b < plan.size(); ++b) {
    const optim::BlockPlan& p = plan[b];
    const ShapeFigures figures = options_.shapes(p.kind, p.hp, p.region.rows, p.region.cols);
    auto optimizer = std::make_unique<ShapeOnlyBlock<T>>(p.kind, p.hp, p.region.rows, p.region.cols, figures.refresh);
    Block block;
    block.layer = l;
    block.label = optim::describe_block(model_.layer(l).name, b, p.region);
    block.region = p.region;
    block.numerics = optimizer.get();
    block.costs = phase_costs(p.kind, p.region.rows, p.region.cols, sizeof(T));
    block.service_id = service_->register_block(*optimizer, block.label);
    block.bytes = std::make_unique<DeclaredBytes>(figures.state_bytes);
    layer.shape_blocks.push_back(std::move(optimizer));
    layer.blocks.push_back(blocks_.size());
    blocks_.push_back(std::move(block));
  }
}

template <linalg::Real T>
StepDriver<T>::~StepDriver() {
  wait_in_flight();
}

template <linalg::Real T>
void StepDriver<T>::wait_in_flight() noexcept {
  for (platform::Pending& p : in_flight_) {
    try {
      if (p.valid()) p.wait();
    } catch (...) {  // a backend that cannot wait any more: nothing left to protect
    }
  }
  in_flight_.clear();
  for (auto& [layer, p] : host_updates_) {
    try {
      if (p.valid()) p.wait();
    } catch (...) {
    }
  }
  host_updates_.clear();
}

template <linalg::Real T>
std::size_t StepDriver<T>::state_bytes() const noexcept {
  std::size_t sum = 0;
  for (const Block& b : blocks_) sum += b.bytes->bytes();
  return sum;
}

template <linalg::Real T>
platform::Seconds StepDriver<T>::modelled(const platform::Cost& cost) const {
  return options_.device_seconds ? options_.device_seconds(cost) : 0.0;
}

template <linalg::Real T>
platform::Pending StepDriver<T>::submit(platform::Work work) {
  platform::Pending p = platform_.device_stream().submit(std::move(work));
  in_flight_.push_back(p);
  return p;
}

template <linalg::Real T>
void StepDriver<T>::wait_ok(platform::Pending& pending, const char* what) {
  const Status status = pending.status();
  // Device work is in order: everything submitted before it has finished too.
  std::erase_if(in_flight_, [](const platform::Pending& p) { return p.test(); });
  if (body_error_) std::rethrow_exception(std::exchange(body_error_, nullptr));
  if (!status.ok())
    throw NumericalError(std::string("step driver: ") + what + " failed at step " + std::to_string(step_) + ": " +
                         status.message());
}

template <linalg::Real T>
void StepDriver<T>::forward(optim::Step /*t*/, StepTotals& totals) {
  const std::size_t n = layers_.size();
  for (std::size_t l = 0; l < n; ++l) {
    const LayerSpec& spec = model_.layer(l);
    submit({"forward " + spec.name, spec.forward, {}});
    totals.compute += modelled(spec.forward);
    // Forward hooks: start moving the state of the blocks updated first (backward order).
    for (std::size_t b : layers_[n - 1 - l].blocks) store_->prefetch(blocks_[b].store_id);
  }
}

template <linalg::Real T>
platform::Pending StepDriver<T>::backward(std::size_t l, optim::Step t, StepTotals& totals) {
  const LayerSpec& spec = model_.layer(l);
  platform::Work work{"backward " + spec.name, spec.backward, {}};
  const bool numerics = options_.mode == NumericsMode::full ||
                        (options_.mode == NumericsMode::emulated && t <= options_.warmup_steps);
  if (numerics)
    work.body = [this, l, t] {
      model_.compute_gradient(l, t);
      return Status::success();
    };
  totals.compute += modelled(spec.backward);
  return submit(std::move(work));
}

template <linalg::Real T>
void StepDriver<T>::run_hooks(std::size_t l, optim::Step t) {
  if (options_.mode == NumericsMode::shapes) {
    // No values: the blocks ignore them, the service checks a finite 1 x 1 stand-in.
    for (std::size_t bi : layers_[l].blocks) {
      const Block& b = blocks_[bi];
      const linalg::ConstMatrixView<T> g(&shape_gradient_, 1, 1);
      if (service_->after_backward(b.service_id, g, t))
        service_->apply(b.service_id, linalg::MatrixView<T>(&shape_weight_, 1, 1), g, t);
    }
    return;
  }
  const linalg::MatrixView<T> weights = model_.weight_matrix(l);
  const linalg::ConstMatrixView<T> grads = model_.gradient_matrix(l);
  for (std::size_t bi : layers_[l].blocks) {
    const Block& b = blocks_[bi];
    const optim::BlockRegion& r = b.region;
    const auto g = grads.block(r.row0, r.col0, r.rows, r.cols);
    if (service_->after_backward(b.service_id, g, t))
      service_->apply(b.service_id, weights.block(r.row0, r.col0, r.rows, r.cols), g, t);
  }
}

template <linalg::Real T>
platform::Pending StepDriver<T>::update(std::size_t l, optim::Step t, StepTotals& totals) {
  platform::Work work{"optimizer " + model_.layer(l).name, {}, {}};
  // Blocks the store updates on the host (host and nvme policies) are charged on the host
  // workers, one urgent Work per block (ahead of queued refreshes, spread over the workers);
  // their numerics, if any, still run with the others.
  const auto on_host = [&](const Block& b) { return store_->update_tier(b.store_id) == platform::Tier::host; };
  std::vector<platform::Cost> host_costs(layers_[l].blocks.size());
  for (std::size_t i = 0; i < layers_[l].blocks.size(); ++i) {
    const Block& b = blocks_[layers_[l].blocks[i]];
    const platform::Cost cost = combine(b.costs.accumulate, b.costs.apply);
    if (on_host(b))
      host_costs[i] = cost;
    else
      work.cost = combine(work.cost, cost);
  }
  if (options_.mode == NumericsMode::full) {
    // The hooks run on the device stream; exceptions come back through the Pending's Status.
    work.body = [this, l, t] {
      try {
        run_hooks(l, t);
      } catch (...) {
        body_error_ = std::current_exception();  // rethrown on this thread with its own type
        throw;
      }
      return Status::success();
    };
  } else {
    std::vector<std::int64_t> before;
    for (std::size_t bi : layers_[l].blocks) before.push_back(service_->version(blocks_[bi].service_id).publications);
    run_hooks(l, t);
    // Installing a finished refresh is device work too (a copy; SOAP rotates its momentum).
    for (std::size_t i = 0; i < layers_[l].blocks.size(); ++i) {
      const Block& b = blocks_[layers_[l].blocks[i]];
      if (service_->version(b.service_id).publications <= before[i]) continue;
      if (on_host(b))
        host_costs[i] = combine(host_costs[i], b.costs.publish);
      else
        work.cost = combine(work.cost, b.costs.publish);
    }
  }
  for (std::size_t i = 0; i < host_costs.size(); ++i) {
    if (host_costs[i].flops <= 0.0 && host_costs[i].bytes <= 0.0) continue;
    platform::Work host_work{"host optimizer " + blocks_[layers_[l].blocks[i]].label, host_costs[i], {}};
    host_work.urgent = true;
    host_updates_.push_back({l, platform_.host_workers().submit(std::move(host_work))});
  }
  totals.optimizer_device += modelled(work.cost);
  return submit(std::move(work));
}

template <linalg::Real T>
void StepDriver<T>::wait_host_updates(std::size_t l) {
  for (auto it = host_updates_.begin(); it != host_updates_.end();) {
    if (it->first != l) {
      ++it;
      continue;
    }
    const Status status = it->second.status();
    it = host_updates_.erase(it);
    if (!status.ok())
      throw NumericalError("step driver: host optimizer update failed at step " + std::to_string(step_) + ": " +
                           status.message());
  }
}

template <linalg::Real T>
void StepDriver<T>::release_layer(std::size_t l) {
  wait_host_updates(l);  // the block's state may move only once its update has ended
  for (std::size_t bi : layers_[l].blocks) store_->release(blocks_[bi].store_id, /*dirty=*/true);
}

template <linalg::Real T>
StepRecord StepDriver<T>::run_step() {
  if (finished_) throw std::logic_error("step driver: run_step() after finish()");
  const optim::Step t = step_ + 1;
  const bool warmup = t <= options_.warmup_steps;
  for (Block& b : blocks_)
    if (b.modelled != nullptr) b.modelled->set_numerics(warmup);

  const platform::Seconds start = platform_.clock().now();
  service_->on_step_begin(t);
  step_ = t;
  StepTotals totals;
  forward(t, totals);

  std::size_t previous = layers_.size();  // layer whose blocks are still acquired
  platform::Pending last_update;
  for (std::size_t l = layers_.size(); l-- > 0;) {
    platform::Pending grad_ready = backward(l, t, totals);
    wait_ok(grad_ready, "backward");  // also ends the previous layer's optimizer work
    if (previous < layers_.size()) release_layer(previous);
    for (std::size_t bi : layers_[l].blocks) totals.acquire_wait += store_->acquire(blocks_[bi].store_id);
    last_update = update(l, t, totals);
    previous = l;
  }
  wait_ok(last_update, "optimizer update");
  if (previous < layers_.size()) release_layer(previous);

  const StepMetrics metrics = service_->on_step_end(t);
  const StoreStepStats moved = store_->end_step();
  store_->take_moves();  // the per-move log is not needed here; keep long runs bounded
  const platform::Seconds end = platform_.clock().now();

  StepRecord r;
  r.step = t;
  r.warmup = warmup;
  r.step_time_s = end - start;
  r.compute_s = totals.compute;
  r.visible_optimizer_s = r.step_time_s - r.compute_s;
  r.refresh_wait_s = metrics.visible_wait_s;
  r.acquire_wait_s = totals.acquire_wait;
  r.optimizer_device_s = totals.optimizer_device;
  r.refreshes_submitted = metrics.submitted;
  r.refreshes_published = metrics.published;
  r.queue_depth = metrics.queue_depth;
  r.max_staleness = metrics.max_staleness;
  r.shadow_bytes = metrics.shadow_bytes;
  for (std::size_t tier = 0; tier < platform::kTierCount; ++tier) {
    r.resident_bytes[tier] = moved.usage[tier].resident;
    r.peak_bytes[tier] = moved.usage[tier].peak_resident;
    r.capacity_bytes[tier] = moved.usage[tier].capacity;
  }
  r.bytes_moved = moved.bytes_moved;
  history_.push_back(r);
  return r;
}

template <linalg::Real T>
void StepDriver<T>::finish() {
  if (finished_) return;
  wait_in_flight();
  store_->drain();
  store_->unplace();
  service_->settle();
  finished_ = true;
}

template class StepDriver<float>;
template class StepDriver<double>;

}  // namespace asteria::runtime

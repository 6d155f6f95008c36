#include "core/runtime/driver/step_driver.hpp"

#include <cmath>
#include <algorithm>
#include <stdexcept>
#include <utility>

#include "core/common/error.hpp"
#include "core/optim/shape_block.hpp"
#include "core/optim/shape_model.hpp"
#include "core/plan/schedule.hpp"
#include "core/plan/share_groups.hpp"
#include "core/runtime/driver/shared_step_setup.hpp"
#include "core/runtime/service/shadow_bound.hpp"

namespace asteria::runtime {

namespace {
// A plan names every block, in block order, by its label: a plan made for another model,
// optimizer or blocking (max_precond_dim) is refused here, before anything is placed.
void check_planned_blocks(const std::vector<BlockPlacement>& planned, const std::vector<std::string>& labels,
                          const std::string& source) {
  if (planned.size() != labels.size())
    throw InputError(source, "blocks",
                     "expected " + std::to_string(labels.size()) + " planned blocks (one per optimizer block of this model and "
                     "optimizer), found " + std::to_string(planned.size()));
  for (std::size_t i = 0; i < labels.size(); ++i)
    if (planned[i].label != labels[i])
      throw InputError(source, "blocks[" + std::to_string(i) + "].label",
                       "expected '" + labels[i] + "' (the run's block " + std::to_string(i) + "), found '" + planned[i].label +
                           "'");
}
}  // namespace

void validate(const DriverOptions& options, const std::string& source) {
  if (options.warmup_steps < 0) throw InputError(source, "warmup_steps", "expected an integer >= 0");
  if (!(options.issue_seconds_per_op >= 0.0) || !std::isfinite(options.issue_seconds_per_op))
    throw InputError(source, "issue_seconds_per_op", "expected a finite number of seconds >= 0");
  if (options.store.lookahead < 0) throw InputError(source, "lookahead", "expected an integer >= 0");
  if (options.schedule.micro_batches < 1) throw InputError(source, "micro_batches", "expected an integer >= 1");
  if (options.schedule.data_parallel_ranks < 1)
    throw InputError(source, "data_parallel_ranks", "expected an integer >= 1");
  if (options.sync_period < 1) throw InputError(source, "sync_period", "expected an integer >= 1");
  if (options.schedule.host_release_delay < 0)
    throw InputError(source, "host_release_delay", "expected an integer >= 1 (or 0: chosen by the driver)");
  validate(options.service, source);
}

template <linalg::Real T>
StepDriver<T>::StepDriver(platform::Platform& platform, TrainingModel<T>& model, optim::OptimizerKind kind,
                          const optim::Hyperparameters& hp, DriverOptions options)
    : platform_(platform), model_(model), options_(std::move(options)) {
  const std::string source = "step driver";
  validate(options_, source);
  platform::validate(options_.numerics, platform_.time_source(), source);
  if (options_.numerics != platform::Numerics::shapes && !platform_.memory().holds_data())
    throw InputError(source, "--numerics",
                     "shapes: the " + std::string(platform_.backend()) +
                         " platform's memory holds sizes only (a data-free simulation), no values");
  optim::validate(hp, source);
  service_ = std::make_unique<PreconditionerService<T>>(platform_, options_.service);
  layer_count_ = model_.layer_count();
  add_blocks(kind, hp);
  platform::Comm* comm = platform_.comm();
  if (options_.schedule.data_parallel_ranks > 1 &&
      (comm == nullptr || comm->size() != options_.schedule.data_parallel_ranks))
    throw InputError(source, "data_parallel_ranks",
                     std::to_string(options_.schedule.data_parallel_ranks) + " ranks: the platform's communicator has " +
                         (comm == nullptr ? std::string("none") : std::to_string(comm->size()) + " ranks"));
  // A reduce hands the collectives the model's gradients where they are: the communicator must
  // take buffers of that memory (host memory for MPI, the GPU's for NCCL).
  if (options_.schedule.data_parallel_ranks > 1 && options_.numerics != platform::Numerics::shapes &&
      comm->buffer_tier() != model_.tensor_tier())
    throw InputError(source, "data_parallel_ranks",
                     "a communicator whose collectives take " + std::string(platform::to_string(model_.tensor_tier())) +
                         " memory, where the model keeps its gradients; this one takes " +
                         std::string(platform::to_string(comm->buffer_tier())) + " memory");
  const bool sharded = plan::shards_state(options_.schedule.parallelism);
  if (sharded && model_.tensor_tier() != platform::Tier::host)
    throw InputError(source, "parallelism",
                     "ddp with a model whose weights are not in host memory (" +
                         std::string(plan::to_string(options_.schedule.parallelism)) +
                         " packs and unpacks a sharded block's weights and gradients on the host)");
  if (sharded) {
    if (options_.schedule.data_parallel_ranks < 2)
      throw InputError(source, "parallelism",
                       "ddp with one rank (" + std::string(plan::to_string(options_.schedule.parallelism)) +
                           " shards among data-parallel ranks)");
    // Each block lives on one rank, chosen so that every layer's shares and every rank's total
    // are about even (the collectives of sharded blocks pad each share to the largest).
    const std::vector<int> owners =
        options_.shared_setup ? options_.shared_setup->block_owners(comm->size()) : setup_->block_owners(comm->size());
    for (std::size_t b = 0; b < blocks_.size(); ++b) {
      blocks_[b].owner = owners[b];
      blocks_[b].local = owners[b] == comm->rank();
    }
  }
  for (Block& b : blocks_)
    if (b.local) b.service_id = service_->register_block(*b.optimizer, b.label);
  std::vector<int> refresh_owners;
  if (options_.schedule.data_parallel_ranks > 1 && options_.share_refreshes && !sharded) {
    std::vector<double> costs;
    for (const BlockSetup& b : setup_->blocks) costs.push_back(b.warm_refresh_flops);
    platform::Comm& side = *platform_.side_comm();  // off the gradients' queue
    refresh_owners = assign_refresh_owners(costs, side);
    service_->share_refreshes(side, refresh_owners, options_.sync_period);
  }
  // The refresh jobs' shadow pool stays free on the host, so state that leaves it no room is
  // refused at placement (a PlacementError naming the host), before the first step. Its size
  // depends on the plan (shadow_bound.hpp), which depends on where the store updates the blocks:
  // until the plan exists the per-block bound stands in (the larger, as the host release delay
  // assumed so far), then the pool replaces it.
  // A block whose refresh another rank owns holds receiving jobs: their results' bytes only.
  std::vector<bool> receiving(blocks_.size(), false);
  std::vector<bool> holds(blocks_.size(), false);
  for (std::size_t i = 0; i < blocks_.size(); ++i) {
    holds[i] = blocks_[i].local;
    receiving[i] = !refresh_owners.empty() && refresh_owners[i] != platform_.side_comm()->rank();
  }
  const std::vector<ShadowDemand> demands = setup_->shadow_demands(receiving, !refresh_owners.empty(), holds);
  ShadowPoolSizing sizing;
  sizing.host_workers = platform_.host_workers().concurrency();
  sizing.staleness = options_.service.staleness;
  service_->set_aside_shadow(shadow_pool_bounds(demands, {}, sizing).per_block);
  store_ = std::make_unique<StateStore>(platform_, options_.store);
  store_->keep_free(service_->shadow_room());
  if (options_.store.policy == PlacementPolicy::planned) {
    check_planned_blocks(options_.planned_blocks, setup_->labels(), "placement plan (--placement-file)");
  }
  for (std::size_t i = 0; i < blocks_.size(); ++i) {
    Block& b = blocks_[i];
    if (!b.local) continue;
    BlockOptions block_options;
    if (options_.store.policy == PlacementPolicy::planned) {
      block_options.home = options_.planned_blocks[i].home;
      block_options.update_on_device = options_.planned_blocks[i].update_on_device;
    }
    b.store_id = store_->add(*b.bytes, b.label, block_options);
  }
  // Each block's math runs on the device that addresses its state where the store keeps it.
  std::vector<BlockId> store_of_service(service_->block_count());
  for (const Block& b : blocks_)
    if (b.local) store_of_service[b.service_id] = b.store_id;
  service_->locate_states(
      [this, ids = std::move(store_of_service)](BlockId s) { return store_->location(ids[s]); });
  plan_ = make_plan();
  carries_updates_ = std::any_of(plan_.ops.begin(), plan_.ops.end(), [](const plan::Op& op) { return op.carried; });
  // The store's use order is read off the plan, so prefetch follows whatever the schedule is.
  std::vector<BlockId> use_order;
  for (int b : plan::block_use_order(plan_)) use_order.push_back(blocks_[static_cast<std::size_t>(b)].store_id);
  store_->set_use_order(std::move(use_order));
  // A hook acquires a layer's blocks together: they must fit together where they are updated.
  std::vector<std::vector<BlockId>> held;
  for (const std::vector<int>& set : plan::blocks_held_together(plan_)) {
    held.emplace_back();
    for (int b : set) held.back().push_back(blocks_[static_cast<std::size_t>(b)].store_id);
  }
  store_->set_held_together(std::move(held));
  // An early install may change a block's state away from its own ops where that state never
  // moves (placed where it is updated, under a static policy) or holds no values.
  bool all_pinned = true;
  for (const Block& b : blocks_) {
    if (!b.local) continue;
    const bool pinned = options_.store.policy != PlacementPolicy::tiered &&
                        store_->home_tier(b.store_id) == store_->update_tier(b.store_id);
    all_pinned = all_pinned && pinned;
    service_->allow_installs_anywhere(b.service_id, options_.numerics == platform::Numerics::shapes || pinned);
  }
  sizing.early_installs = installs_anywhere(options_.numerics, options_.warmup_steps, all_pinned);
  const ShadowPoolBounds bounds = shadow_pool_bounds(demands, plan::blocks_refreshed_before_update(plan_), sizing);
  // The in-flight bound must fit beside the state (else the PlacementError); the pool then takes
  // the host room the state leaves, up to every job that can await its point.
  service_->set_aside_shadow(bounds.in_flight);
  service_->set_aside_shadow(shadow_pool_bytes(bounds, store_->room_after_placement(platform::Tier::host)));
  store_->place();
  std::vector<PlanBlock> bound;
  for (std::size_t i = 0; i < blocks_.size(); ++i)
    bound.push_back({blocks_[i].service_id, blocks_[i].store_id, setup_->blocks[i].cut.region, setup_->blocks[i].view});
  if (options_.schedule.parallelism == plan::Parallelism::fsdp) {
    std::vector<int> owners;
    for (const Block& b : blocks_) owners.push_back(b.owner);
    weights_gathers_ = setup_->weights_gather_plan(owners, comm->rank());
    gatherer_ = std::make_unique<PlanInterpreter<T>>(weights_gathers_, platform_, model_, *service_, *store_, bound,
                                                     options_.device_seconds, options_.issue_seconds_per_op,
                                                     options_.numerics_site);
    gatherer_->record_collectives_as(platform::ActivityRole::other);
  }
  interpreter_ = std::make_unique<PlanInterpreter<T>>(plan_, platform_, model_, *service_, *store_, std::move(bound),
                                                      options_.device_seconds, options_.issue_seconds_per_op,
                                                      options_.numerics_site);
}

template <linalg::Real T>
void StepDriver<T>::gather_weights() {
  if (!gatherer_ || step_ == 0 || finished_) return;  // finish() gathered them
  interpreter_->wait_in_flight();
  gatherer_->run(step_, options_.numerics, false);
}

template <linalg::Real T>
void StepDriver<T>::add_blocks(optim::OptimizerKind kind, const optim::Hyperparameters& hp) {
  std::vector<LayerSpec> layers;
  for (std::size_t l = 0; l < layer_count_; ++l) layers.push_back(model_.layer(l));
  StepSetupOptions setup;
  setup.element_bytes = sizeof(T);
  setup.staleness = options_.service.staleness;
  setup.schedule = options_.schedule;
  // A model that keeps its layers' gradients apart reduces each one on its own.
  if (options_.numerics != platform::Numerics::shapes && layer_count_ > 1 &&
      !plan::shards_gradients(options_.schedule.parallelism) && model_.gradient_bucket(0, layer_count_ - 1).empty())
    setup.schedule.bucket_bytes = 0.0;
  setup.host_workers = platform_.host_workers().concurrency();
  setup_ = options_.shared_setup ? options_.shared_setup->get(layers, kind, hp, setup)
                                 : std::make_shared<const StepSetup>(set_up_step(layers, kind, hp, setup));
  // The blocking TensorOptimizer uses (the same plan_blocks): with values each layer's blocks are
  // its TensorOptimizer's (tensors_[layer]), in order.
  if (options_.numerics != platform::Numerics::shapes)
    for (const LayerSpec& spec : layers)
      tensors_.push_back(std::make_unique<optim::TensorOptimizer<T>>(kind, hp, tensor_shape(spec), spec.name));
  std::size_t within = 0;
  for (std::size_t i = 0; i < setup_->blocks.size(); ++i) {
    const BlockSetup& s = setup_->blocks[i];
    within = i > 0 && setup_->blocks[i - 1].layer == s.layer ? within + 1 : 0;
    Block block;
    block.layer = s.layer;
    block.label = s.label;
    if (!tensors_.empty()) {
      block.optimizer = tensors_[s.layer]->blocks().at(within).optimizer.get();
      block.bytes = std::make_unique<BlockStateRelocatable<T>>(block.optimizer->state());
    } else {
      auto shape_block = std::make_unique<optim::ShapeBlock<T>>(s.cut.kind, s.cut.hp, s.cut.region.rows, s.cut.region.cols);
      block.bytes = std::make_unique<DeclaredBytes>(shape_block->state_bytes());
      block.optimizer = shape_block.get();
      shapes_.push_back(std::move(shape_block));
    }
    blocks_.push_back(std::move(block));
  }
}

template <linalg::Real T>
plan::StepPlan StepDriver<T>::make_plan() const {
  std::vector<plan::Resource> sites;
  std::vector<int> owners;
  for (const Block& b : blocks_) {
    const bool on_device = !b.local || store_->update_tier(b.store_id) == platform::Tier::device;
    sites.push_back(on_device ? plan::Resource::device : plan::Resource::host);
    owners.push_back(b.owner);
  }
  platform::Comm* comm = platform_.comm();
  return setup_->plan(sites, owners, host_release_delay(), comm != nullptr ? comm->rank() : 0);
}

namespace {
// Extremes of the sums of `width` consecutive values (width >= 1).
template <class V>
std::pair<V, V> window_sums(const std::vector<V>& values, std::size_t width) {
  V sum{};
  V least{};
  V most{};
  for (std::size_t i = 0; i < values.size(); ++i) {
    sum += values[i];
    if (i >= width) sum -= values[i - width];
    if (i + 1 < width) continue;
    least = i + 1 == width ? sum : std::min(least, sum);
    most = std::max(most, sum);
  }
  return {least, most};
}
}  // namespace

// D of the horizontal schedule: the smallest delay that keeps the host workers busy while the
// issuing thread waits for the oldest layer's updates (every run of D − 1 consecutive layers has
// at least a worker's worth of host-updated blocks queued behind it), and no larger than the
// host can hold of the copies staged there for their updates, which a deferred release pins D
// layers at a time (state resting on NVMe; state resting on the host pins nothing more).
template <linalg::Real T>
int StepDriver<T>::host_release_delay() const {
  if (options_.schedule.host_release_delay > 0) return options_.schedule.host_release_delay;
  std::vector<int> updates(layer_count_, 0);
  std::vector<std::size_t> staged(layer_count_, 0);
  for (const Block& b : blocks_) {
    if (!b.local || store_->update_tier(b.store_id) != platform::Tier::host) continue;
    ++updates[b.layer];
    if (store_->home_tier(b.store_id) != platform::Tier::host) staged[b.layer] += b.bytes->bytes();
  }
  if (std::all_of(updates.begin(), updates.end(), [](int u) { return u == 0; })) return 1;
  const platform::TierUsage host = platform_.memory().usage(platform::Tier::host);
  const std::size_t free = host.capacity > host.resident ? host.capacity - host.resident : 0;
  const std::size_t kept = service_->shadow_room().unused();
  const std::size_t room = free > kept ? free - kept : 0;
  const int workers = platform_.host_workers().concurrency();
  int delay = 1;
  for (std::size_t d = 2; d <= layer_count_; ++d) {
    if (window_sums(staged, d).second > room) break;
    delay = static_cast<int>(d);
    if (window_sums(updates, d - 1).first >= workers) break;
  }
  return delay;
}

template <linalg::Real T>
StepDriver<T>::~StepDriver() {
  if (interpreter_) interpreter_->wait_in_flight();
}

template <linalg::Real T>
std::size_t StepDriver<T>::state_bytes() const noexcept {
  std::size_t sum = 0;
  for (const Block& b : blocks_)
    if (b.local) sum += b.bytes->bytes();
  return sum;
}

template <linalg::Real T>
StepRecord StepDriver<T>::run_step() {
  if (finished_) throw std::logic_error("step driver: run_step() after finish()");
  const optim::Step t = step_ + 1;
  const bool warmup = t <= options_.warmup_steps;
  platform::ActivitySink* sink = platform_.activities();
  if (sink != nullptr) sink->begin_step(t);
  // With refresh numerics the blocks compute only during the warm-up (their statistics are real).
  const auto begin_service_step = [this, t, warmup] {
    service_->set_block_numerics(options_.numerics != platform::Numerics::refresh || warmup);
    service_->on_step_begin(t);
  };

  const platform::Seconds start = platform_.clock().now();
  step_ = t;
  PlanTotals totals;
  StepMetrics metrics;
  if (carries_updates_) {
    // The service's step t - 1 ends inside this plan, once its carried updates are done; its
    // figures go to that step's record; step t's stay open until the next plan (or finish()).
    totals = interpreter_->run(t, options_.numerics, warmup, [&] {
      if (t > 1) add_service_figures(history_.back(), service_->on_step_end(t - 1));
      begin_service_step();
    });
  } else {
    begin_service_step();
    totals = interpreter_->run(t, options_.numerics, warmup);
    metrics = service_->on_step_end(t);
  }
  store_->set_cause({t, -1, -1, platform::ActivityRole::transfer});
  const StoreStepStats moved = store_->end_step();
  store_->take_moves();  // the per-move log is not needed here; keep long runs bounded
  const platform::Seconds end = platform_.clock().now();
  if (sink != nullptr && sink->recording(t))
    sink->record({platform::issuer_track(sink->unit()), "step " + std::to_string(t),
                  {t, -1, -1, platform::ActivityRole::step}, {}, start, end, true});

  StepRecord r;
  r.step = t;
  r.warmup = warmup;
  r.step_time_s = end - start;
  r.compute_s = model_.take_compute_seconds().value_or(totals.compute);
  r.exposed_communication_s = totals.exposed_communication;
  r.visible_optimizer_s = std::max(0.0, r.step_time_s - r.compute_s - r.exposed_communication_s);
  r.state_move_wait_s = totals.state_move_wait;
  r.optimizer_device_s = totals.optimizer_device;
  if (!carries_updates_) add_service_figures(r, metrics);
  for (std::size_t tier = 0; tier < platform::kTierCount; ++tier) {
    r.resident_bytes[tier] = moved.usage[tier].resident;
    r.state_bytes[tier] = moved.store_resident[tier];
    r.peak_bytes[tier] = moved.usage[tier].peak_resident;
    r.capacity_bytes[tier] = moved.usage[tier].capacity;
  }
  // The store's moves of optimizer state and the plan's own transfers of gradients and weights.
  r.bytes_moved = moved.bytes_moved;
  for (std::size_t from = 0; from < platform::kTierCount; ++from)
    for (std::size_t to = 0; to < platform::kTierCount; ++to)
      r.bytes_moved.values[from][to] += totals.transferred.values[from][to];
  r.network_bytes += totals.network_bytes;
  r.shadow_pool_bytes = service_->shadow_room().bytes();
  r.shadow_bytes = service_->shadow_room().held();
  history_.push_back(r);
  return r;
}

template <linalg::Real T>
void StepDriver<T>::add_service_figures(StepRecord& r, const StepMetrics& metrics) {
  r.refresh_wait_s = metrics.visible_wait_s;
  r.refreshes_submitted = metrics.submitted;
  r.refreshes_published = metrics.published;
  r.refresh_backlog = metrics.refresh_backlog;
  r.max_staleness = metrics.max_staleness;
  r.shadow_jobs = metrics.pool_jobs;
  r.shadow_pool_wait_s = metrics.pool_wait_s;
  r.early_installs = metrics.early_installs;
  r.shadow_overflow_bytes = metrics.pool_overflow_bytes;
  r.network_bytes += metrics.exchanged_bytes;
}

template <linalg::Real T>
void StepDriver<T>::finish() {
  if (finished_) return;
  interpreter_->wait_in_flight();
  if (carries_updates_ && step_ > 0) {
    // The last step's deferred updates, then its end in the service.
    interpreter_->run(step_ + 1, options_.numerics, false, {}, /*carried_only=*/true);
    add_service_figures(history_.back(), service_->on_step_end(step_));
  }
  gather_weights();
  store_->set_cause({step_, -1, -1, platform::ActivityRole::transfer});
  store_->drain();
  store_->unplace();
  service_->settle();
  finished_ = true;
}

template class StepDriver<float>;
template class StepDriver<double>;

}  // namespace asteria::runtime

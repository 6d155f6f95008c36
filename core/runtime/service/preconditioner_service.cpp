#include "core/runtime/service/preconditioner_service.hpp"

#include <algorithm>
#include <atomic>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/common/error.hpp"
#include "core/linalg/blas.hpp"

namespace asteria::runtime {

namespace {

std::string step_text(Step t) { return std::to_string(t); }

}  // namespace

template <linalg::Real T>
PreconditionerService<T>::PreconditionerService(platform::Platform& platform, ServiceOptions options)
    : platform_(platform), options_(options),
      shadow_(platform.memory(), platform::Tier::host, "refresh snapshot buffers (shadow state)") {
  validate(options_, "preconditioner service");
}

template <linalg::Real T>
PreconditionerService<T>::~PreconditionerService() {
  wait_all();
}

template <linalg::Real T>
void PreconditionerService<T>::wait_all() noexcept {
  auto wait_quietly = [](Job& job) {
    try {
      if (job.produced.valid()) job.produced.wait();
      if (job.done.valid()) job.done.wait();
    } catch (...) {  // a backend that cannot wait any more: nothing left to protect
    }
  };
  for (auto& b : blocks_)
    for (Job& job : b->jobs) wait_quietly(job);
  for (Job& job : superseded_) wait_quietly(job);
}

template <linalg::Real T>
auto PreconditionerService<T>::block(BlockId b) -> Block& {
  if (b >= blocks_.size()) throw std::out_of_range("preconditioner service: unknown block " + std::to_string(b));
  return *blocks_[b];
}

template <linalg::Real T>
auto PreconditionerService<T>::block(BlockId b) const -> const Block& {
  if (b >= blocks_.size()) throw std::out_of_range("preconditioner service: unknown block " + std::to_string(b));
  return *blocks_[b];
}

template <linalg::Real T>
BlockId PreconditionerService<T>::register_block(optim::BlockOptimizer<T>& optimizer, std::string label) {
  if (in_step_) throw std::logic_error("preconditioner service: register blocks between steps");
  auto b = std::make_unique<Block>();
  b->optimizer = &optimizer;
  b->label = std::move(label);
  b->id = blocks_.size();
  b->delay = optimizer.activation_delay();
  b->statistics_updates = optimizer.statistics_updates();
  if (b->delay != 0 && b->delay != 1)
    throw std::logic_error("preconditioner service: " + b->label + ": activation delay must be 0 or 1");
  blocks_.push_back(std::move(b));
  return blocks_.size() - 1;
}

template <linalg::Real T>
void PreconditionerService<T>::require_step(Step t, const char* hook) const {
  if (!in_step_ || t != current_.step)
    throw std::logic_error(std::string("preconditioner service: ") + hook + " for step " + step_text(t) +
                           (in_step_ ? " inside step " + step_text(current_.step) : " outside a step"));
}

template <linalg::Real T>
void PreconditionerService<T>::on_step_begin(Step t) {
  if (in_step_) throw std::logic_error("preconditioner service: step " + step_text(current_.step) + " has not ended");
  if (t <= last_step_ || t < 1)
    throw std::logic_error("preconditioner service: step " + step_text(t) + " after step " + step_text(last_step_));
  current_ = StepMetrics{};
  current_.step = t;
  in_step_ = true;
}

template <linalg::Real T>
void PreconditionerService<T>::set_block_numerics(bool on) {
  if (in_step_) throw std::logic_error("preconditioner service: set_block_numerics inside a step");
  block_numerics_ = on;
}

template <linalg::Real T>
bool PreconditionerService<T>::after_backward(BlockId id, linalg::ConstMatrixView<T> grad, Step t) {
  require_step(t, "after_backward");
  if (block(id).delay == 1) publication_point(id, t);
  if (!accumulate(id, grad, t)) return false;  // accumulate refuses a second call in the step
  submit_refresh(id, t);
  return true;
}

template <linalg::Real T>
void PreconditionerService<T>::publication_point(BlockId id, Step t) {
  require_step(t, "publication_point");
  reach_point(block(id), t);
}

template <linalg::Real T>
bool PreconditionerService<T>::accumulate(BlockId id, linalg::ConstMatrixView<T> grad, Step t,
                                          bool known_finite) {
  require_step(t, "accumulate");
  Block& b = block(id);
  if (b.accumulated_step >= t)
    throw std::logic_error("preconditioner service: " + b.label + ": accumulate twice in step " + step_text(t));
  b.accumulated_step = t;
  b.backward_step = t;
  if (!known_finite && !ops::all_finite(math(b), grad)) {
    ++current_.skipped_non_finite;
    ++totals_.skipped_non_finite;
    ++b.version.skipped_non_finite;
    ++b.version.consecutive_non_finite;
    if (options_.non_finite == optim::NonFinitePolicy::error)
      throw NumericalError(b.label + ": gradient holds NaN or Inf at step " + step_text(t));
    if (b.version.consecutive_non_finite > options_.max_consecutive_non_finite)
      throw NumericalError(b.label + ": " + std::to_string(b.version.consecutive_non_finite) +
                           " consecutive non-finite gradients (limit " +
                           std::to_string(options_.max_consecutive_non_finite) + ")");
    b.skipped_step = t;
    if (b.delay == 0) reach_point(b, t);  // the skipped update's point still passes
    return false;
  }
  b.version.consecutive_non_finite = 0;
  if (block_numerics_) b.optimizer->accumulate(math(b), grad, t);
  ++b.statistics_updates;
  return true;
}

template <linalg::Real T>
bool PreconditionerService<T>::submit_refresh(BlockId id, Step t, const platform::OpTag& tag) {
  require_step(t, "submit_refresh");
  Block& b = block(id);
  if (b.accumulated_step != t || b.skipped_step == t)
    throw std::logic_error("preconditioner service: " + b.label + ": submit_refresh without an accumulate in step " +
                           step_text(t));
  b.refreshed_step = t;  // its statistics and preconditioner are read, if at all, in this call
  if (!b.optimizer->refresh_due_after(b.statistics_updates)) return false;
  const std::int64_t before = current_.submitted;
  submit(b, t, tag);
  return current_.submitted > before;
}

template <linalg::Real T>
TierSetAside::Hold PreconditionerService<T>::hold_shadow(const Block& b, std::size_t bytes, Step t) {
  const std::string label = "block '" + b.label + "' (snapshot of step " + step_text(t) + ")";
  make_pool_room(bytes);
  TierSetAside::Hold hold = shadow_.try_hold(bytes, label);
  if (hold.bytes() != bytes) {
    // The host tier itself is full. Superseded jobs still running hold buffers no bound counts:
    // their end makes room, and so does giving up the spares.
    for (Job& job : superseded_) job.done.wait();
    reap_superseded();
    while (!spares_.empty()) drop_spare(*blocks_[spares_.begin()->second]);
    hold = shadow_.hold(bytes, label);
  }
  note_pool_use();
  return hold;
}

template <linalg::Real T>
void PreconditionerService<T>::keep_as_spare(Block& b, Job& job) {
  drop_spare(b);
  b.spare = std::move(job.job);
  b.spare_shadow = std::move(job.shadow);
  if (b.spare) {
    b.spare_age = ++next_sequence_;
    spares_.emplace(b.spare_age, b.id);
  }
}

template <linalg::Real T>
void PreconditionerService<T>::drop_spare(Block& b) {
  spares_.erase({b.spare_age, b.id});
  b.spare.reset();
  b.spare_shadow.reset();
}

template <linalg::Real T>
auto PreconditionerService<T>::pop_job(Block& b, std::size_t i) -> Job {
  Job job = std::move(b.jobs[i]);
  b.jobs.erase(b.jobs.begin() + static_cast<std::ptrdiff_t>(i));
  --unresolved_jobs_;
  return job;
}

template <linalg::Real T>
void PreconditionerService<T>::submit(Block& b, Step t, const platform::OpTag& tag) {
  // The spare's buffers (and their place on the host) go to the new job.
  spares_.erase({b.spare_age, b.id});
  TierSetAside::Hold shadow = std::move(b.spare_shadow);
  // A rank that does not own the block's refresh only receives its result: no statistics copied,
  // only the result's bytes held (a block's owner never changes, so spares stay of one kind).
  const bool receiving = comm_ != nullptr && owner_of_[b.id] != comm_->rank();
  std::unique_ptr<optim::RefreshJob<T>> job;
  std::shared_ptr<ops::Fence> copied;  // the snapshot's copies from the device (null: landed)
  if (receiving) {
    job = b.optimizer->receiver(t, std::move(b.spare));
  } else {
    // The copies into the job's (page-locked) buffers stay in flight: the step goes on, and the
    // job's works wait for them.
    ops::Device& device = math(b);
    const ops::Device::AsyncCopies in_flight(device);
    job = b.optimizer->snapshot_reusing(device, t, std::move(b.spare));
    copied = device.fence();
  }
  if (!job) return;
  const std::size_t bytes = job->bytes();
  if (shadow.bytes() != bytes) {
    shadow.reset();
    shadow = hold_shadow(b, bytes, t);
  }
  optim::RefreshJob<T>* raw = job.get();
  const Step active_from = t + b.delay;
  Job entry{std::move(job), {}, active_from, active_from + options_.staleness, false, ++next_sequence_, bytes,
            std::move(shadow), -1, 0, {}, {}};
  const std::size_t result_bytes = raw->result_bytes();
  if (comm_ != nullptr && result_bytes > 0) {
    entry.owner = owner_of_[b.id];
    // Whole 4-byte words: the exchange moves words. Data-free runs move the bytes only.
    if (block_numerics_ && raw->has_values()) entry.image.resize((result_bytes + 3) / 4 * 4);
    // The first step boundary on the sync period's grid from the submitting step on, so that
    // the result travels as soon as the owner has it (the collective waits for the owner's job)
    // and its broadcast overlaps the steps left before it is due; at the latest the last step
    // boundary before it is due.
    const Step due = entry.due;
    const Step latest = due > t ? due - 1 : t;
    const Step k = sync_period_;
    entry.exchange_step = std::min(latest, (t + k - 1) / k * k);
  }
  if (entry.owner < 0 || entry.owner == comm_->rank()) {
    (entry.owner < 0 ? entry.done : entry.produced) = run_job(*raw, b.label, entry.image, t, tag, std::move(copied));
    if (entry.owner >= 0) ++run_here_;
  } else {
    ++received_;
  }
  b.jobs.push_back(std::move(entry));
  ++unresolved_jobs_;
  note_pool_use();
  // Due in this very step (delay 0, S = 0): it cannot wait for the step's end.
  if (b.jobs.back().owner >= 0 && b.jobs.back().due == t) exchange(b.jobs.back(), b.label, t);
  ++current_.submitted;
  ++totals_.submitted;
}

// The job's parts side by side on the host workers, each its own work charged its own pieces; the
// job is done when its last part is (the one that also saves the result to share).
template <linalg::Real T>
platform::Pending PreconditionerService<T>::run_job(optim::RefreshJob<T>& job, const std::string& label,
                                                    std::vector<std::byte>& image, Step t, const platform::OpTag& tag,
                                                    std::shared_ptr<ops::Fence> copied) {
  // On the device stream a job's parts would run one after the other anyway: one work.
  const bool on_device = options_.refresh_site == RefreshSite::device;
  platform::Executor& executor = on_device ? platform_.device_stream() : platform_.host_workers();
  job.solve_with(on_device ? platform_.math(platform::Tier::device).solver() : nullptr);
  const int parts = options_.split_refresh_parts && !on_device ? job.parts() : 1;
  std::byte* saved = image.empty() ? nullptr : image.data();
  const std::size_t result_bytes = job.result_bytes();
  auto work_of = [&](std::string name, std::vector<platform::Cost> cost, std::function<Status()> body) {
    platform::Work work;
    work.label = std::move(name);
    work.cost = platform::Costs(std::move(cost));  // each piece charged by its own rule
    work.body = std::move(body);
    work.tag = tag;
    work.tag.step = t;
    work.tag.role = platform::ActivityRole::refresh_job;
    return work;
  };
  if (parts <= 1)
    return executor.submit(work_of("refresh " + label, job.cost(), [&job, saved, result_bytes, copied] {
      if (copied) copied->wait();  // the snapshot has landed
      Status status = job.run();  // touches only the job's own buffers
      if (status.ok() && saved != nullptr) job.save_result({saved, result_bytes});
      return status;
    }));
  // The part whose body ends last saves the result to share, once every part has succeeded;
  // the job is done when all its works are (a backend may run no bodies: data-free runs).
  struct Parts {
    std::atomic<int> left{0};
    std::atomic<bool> failed{false};
  };
  auto shared = std::make_shared<Parts>();
  shared->left.store(parts);
  std::vector<platform::Pending> done;
  for (int p = 0; p < parts; ++p)
    done.push_back(executor.submit(work_of(
        "refresh " + label + " (part " + std::to_string(p + 1) + "/" + std::to_string(parts) + ")", job.part_cost(p),
        [&job, p, shared, saved, result_bytes, copied] {
          if (copied) copied->wait();  // the snapshot has landed
          const Status status = job.run_part(p);  // the executor turns an exception into a failed status
          if (!status.ok()) shared->failed.store(true);
          // The last part to end sees every earlier part's outcome (the decrement orders them).
          const bool last = shared->left.fetch_sub(1, std::memory_order_acq_rel) == 1;
          if (last && !shared->failed.load() && saved != nullptr) job.save_result({saved, result_bytes});
          return status;
        })));
  return platform_.completions().all_of(done);
}

template <linalg::Real T>
void PreconditionerService<T>::before_update(BlockId id, Step t) {
  require_step(t, "before_update");
  Block& b = block(id);
  if (b.backward_step != t)
    throw std::logic_error("preconditioner service: " + b.label + ": before_update before after_backward in step " +
                           step_text(t));
  if (b.skipped_step == t)
    throw std::logic_error("preconditioner service: " + b.label + " skipped step " + step_text(t) +
                           " (non-finite gradient) and must not be updated");
  if (b.prepared_step == t) return;
  b.prepared_step = t;
  if (b.delay == 0) reach_point(b, t);
  const Step lag = staleness(id, t);
  current_.max_staleness = std::max(current_.max_staleness, lag);
  totals_.max_staleness = std::max(totals_.max_staleness, lag);
}

template <linalg::Real T>
void PreconditionerService<T>::apply(BlockId id, linalg::MatrixView<T> weights, linalg::ConstMatrixView<T> grad,
                                     Step t) {
  before_update(id, t);
  Block& b = block(id);
  b.updated_step = t;  // its last use of the preconditioner in step t
  if (!block_numerics_) return;
  if (!b.optimizer->apply(math(b), weights, grad, t))
    throw NumericalError(b.label + ": the update at step " + step_text(t) +
                         " is non-finite; no non-finite value was written to the weights");
}

template <linalg::Real T>
StepMetrics PreconditionerService<T>::on_step_end(Step t) {
  require_step(t, "on_step_end");
  // Results whose exchange falls on this step boundary, in block and snapshot order (the same
  // order on every rank).
  if (comm_ != nullptr)
    for (auto& b : blocks_)
      for (Job& job : b->jobs)
        if (job.owner >= 0 && !job.done.valid() && job.exchange_step <= t) exchange(job, b->label, t);
  reap_superseded();
  current_.refresh_backlog = static_cast<std::int64_t>(superseded_.size());
  current_.live_job_bytes = 0;
  for (const Job& job : superseded_) current_.live_job_bytes += job.bytes;
  for (auto& b : blocks_)
    for (Job& job : b->jobs) {
      finished(job);  // counts completions seen at the step boundary
      ++current_.refresh_backlog;
      current_.live_job_bytes += job.bytes;
    }
  in_step_ = false;
  last_step_ = t;
  history_.push_back(current_);
  return current_;
}

template <linalg::Real T>
platform::Seconds PreconditionerService<T>::settle() {
  if (in_step_) throw std::logic_error("preconditioner service: settle() inside step " + step_text(current_.step));
  platform::Seconds waited = 0.0;
  for (auto& b : blocks_)
    if (b->delay == 1) publish_due(*b, last_step_ + 1, waited);
  totals_.visible_wait_s += waited;
  return waited;
}

template <linalg::Real T>
Step PreconditionerService<T>::staleness(BlockId id, Step t) const {
  const Block& b = block(id);
  if (b.jobs.empty() || b.jobs.front().active_from > t) return 0;
  return t - b.jobs.front().active_from + 1;
}

template <linalg::Real T>
void PreconditionerService<T>::reach_point(Block& b, Step t) {
  if (b.point_step >= t) return;
  b.point_step = t;
  platform::Seconds waited = 0.0;
  publish_due(b, t, waited);
  current_.visible_wait_s += waited;
  totals_.visible_wait_s += waited;
}

template <linalg::Real T>
void PreconditionerService<T>::publish_due(Block& b, Step t, platform::Seconds& waited) {
  if (options_.policy == PublishPolicy::deterministic)
    publish_deterministic(b, t, waited);
  else
    publish_opportunistic(b, t, waited);
}

template <linalg::Real T>
void PreconditionerService<T>::share_refreshes(platform::Comm& comm, std::vector<int> owner_of_block, int sync_period) {
  if (in_step_ || last_step_ != 0) throw std::logic_error("preconditioner service: share refreshes before the first step");
  if (owner_of_block.size() != blocks_.size())
    throw std::invalid_argument("preconditioner service: " + std::to_string(owner_of_block.size()) + " owners for " +
                                std::to_string(blocks_.size()) + " blocks");
  for (int o : owner_of_block)
    if (o < 0 || o >= comm.size())
      throw std::invalid_argument("preconditioner service: owner " + std::to_string(o) + " is not a rank of " +
                                  std::to_string(comm.size()));
  if (sync_period < 1) throw InputError("preconditioner service", "sync_period", "expected an integer >= 1");
  if (comm.size() == 1) return;  // one rank runs everything itself
  comm_ = &comm;
  owner_of_ = std::move(owner_of_block);
  sync_period_ = sync_period;
}

template <linalg::Real T>
void PreconditionerService<T>::exchange(Job& job, const std::string& label, Step t) {
  current_.exchanged_bytes += static_cast<double>(job.job->result_bytes());
  job.done = share_result(*comm_, job.image, job.job->result_bytes(), job.owner, job.produced,
                          "refresh result " + label, {t, -1, -1, platform::ActivityRole::refresh_job});
}

template <linalg::Real T>
bool PreconditionerService<T>::finished(Job& job) {
  if (!job.done.valid()) return false;  // a shared result not yet sent
  if (!job.seen_finished && job.done.test()) {
    job.seen_finished = true;
    ++current_.finished;
    ++totals_.finished;
  }
  return job.seen_finished;
}

template <linalg::Real T>
void PreconditionerService<T>::wait_for(Job& job, platform::Seconds& waited) {
  if (!job.done.valid())
    throw std::logic_error("preconditioner service: a shared refresh result is awaited before it was sent");
  if (!finished(job)) {
    const platform::Seconds start = platform_.clock().now();
    job.done.wait();
    waited += platform_.clock().now() - start;
    finished(job);
  }
}

template <linalg::Real T>
void PreconditionerService<T>::install(Block& b, Job& job, Step t) {
  // A result computed by its owner elsewhere arrived in the image: the job publishes it as its own.
  if (block_numerics_ && job.owner >= 0 && job.owner != comm_->rank() && !job.image.empty())
    job.job->load_result({job.image.data(), job.job->result_bytes()});
  if (block_numerics_) {
    // The results go up without the host waiting for the device (a device stages them): the
    // block's next work on the same device sees them.
    ops::Device& device = math(b);
    const ops::Device::AsyncCopies staged(device);
    b.optimizer->publish(device, *job.job);
  }
  b.version.stats_step = job.job->stats_step();
  b.version.published_step = t;
  ++b.version.publications;
  b.version.consecutive_failures = 0;
  ++current_.published;
  ++totals_.published;
  keep_as_spare(b, job);  // finished and installed: its buffers serve the next snapshot
}

template <linalg::Real T>
void PreconditionerService<T>::record_failure(Block& b, const Status& status) {
  ++current_.failures;
  ++totals_.failures;
  ++b.version.failures;
  if (++b.version.consecutive_failures > options_.max_consecutive_refresh_failures)
    throw NumericalError(b.label + ": " + std::to_string(b.version.consecutive_failures) +
                         " consecutive preconditioner refreshes failed (limit " +
                         std::to_string(options_.max_consecutive_refresh_failures) + "); last: " + status.message());
}

template <linalg::Real T>
void PreconditionerService<T>::publish_deterministic(Block& b, Step t, platform::Seconds& waited) {
  while (!b.jobs.empty() && b.jobs.front().due <= t) {
    wait_for(b.jobs.front(), waited);
    // Only finished jobs leave the deque: a job whose work may still run is never destroyed.
    Job job = pop_job(b, 0);
    if (const Status status = job.done.status(); status.ok()) {
      install(b, job, t);
    } else {
      keep_as_spare(b, job);
      record_failure(b, status);
    }
  }
}

template <linalg::Real T>
void PreconditionerService<T>::publish_opportunistic(Block& b, Step t, platform::Seconds& waited) {
  // Eligible: the synchronous optimizer would already serve them (a <= t); a prefix, since
  // jobs are in snapshot order. The newest one whose bound has run out must be resolved now.
  std::size_t eligible = 0;
  std::ptrdiff_t required = -1;
  while (eligible < b.jobs.size() && b.jobs[eligible].active_from <= t) {
    if (b.jobs[eligible].due <= t) required = static_cast<std::ptrdiff_t>(eligible);
    ++eligible;
  }
  if (eligible == 0) return;
  // Wait for the newest job out of bound; if it failed, the one before it becomes the newest
  // the bound requires, and so on — every job with a + S <= t ends up resolved.
  for (std::ptrdiff_t r = required; r >= 0; --r) {
    Job& job = b.jobs[static_cast<std::size_t>(r)];
    wait_for(job, waited);
    if (job.done.status().ok()) break;
  }

  std::size_t newest_ok = eligible;  // none
  for (std::size_t i = 0; i < eligible; ++i)
    if (finished(b.jobs[i]) && b.jobs[i].done.status().ok()) newest_ok = i;

  // Resolve in snapshot order. Jobs older than the newest success are superseded (a failed one
  // is counted as a failure), kept alive while their work still runs; then it is installed;
  // then the failed eligible jobs after it are counted.
  if (newest_ok < eligible) {
    for (std::size_t i = 0; i < newest_ok; ++i) {
      Job job = pop_job(b, 0);
      if (!job.seen_finished) {
        superseded_.push_back(std::move(job));
        ++current_.superseded;
        ++totals_.superseded;
      } else if (const Status status = job.done.status(); !status.ok()) {
        record_failure(b, status);
      } else {
        ++current_.superseded;
        ++totals_.superseded;
      }
    }
    Job job = pop_job(b, 0);
    install(b, job, t);
    eligible -= newest_ok + 1;
  }
  for (std::size_t i = 0; i < eligible;) {
    if (b.jobs[i].seen_finished) {  // finished and not ok: a success would have been installed
      Job job = pop_job(b, i);
      --eligible;
      record_failure(b, job.done.status());
    } else {
      ++i;
    }
  }
}

template <linalg::Real T>
void PreconditionerService<T>::reap_superseded() {
  std::erase_if(superseded_, [this](Job& job) { return finished(job); });
}

template class PreconditionerService<float>;
template class PreconditionerService<double>;

}  // namespace asteria::runtime

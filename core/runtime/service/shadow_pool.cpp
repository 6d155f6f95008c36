// The preconditioner service's shadow pool: back-pressure on snapshots that the pool cannot hold
// (preconditioner_service.hpp, "Shadow pool"; the pool's size: shadow_bound.hpp).
#include "core/runtime/service/preconditioner_service.hpp"

#include <algorithm>

namespace asteria::runtime {

// Whether the block has passed its last use of the preconditioner that `job` replaces, so that
// installing the job now gives the numbers of installing it at its point. The policy installs it
// at the point of step p at the earliest: its due step (deterministic) or its activation step
// (opportunistic). A delay-1 block's point of step p precedes its accumulate of p, so its last
// use is its update of step p − 1; a delay-0 block's point precedes its update of p but follows
// its accumulate and snapshot of p (which read the preconditioner: a snapshot carries the
// previous root or basis), so its last use is its refresh op of step p.
template <linalg::Real T>
bool PreconditionerService<T>::past_last_use(const Block& b, const Job& job) const {
  const Step point = options_.policy == PublishPolicy::deterministic ? job.due : job.active_from;
  return b.delay == 1 ? b.updated_step >= point - 1 : b.refreshed_step >= point;
}

// Installs (or counts as failed) the block's oldest jobs that have finished and that the block no
// longer needs to wait for: it has made its last update with the previous preconditioner.
template <linalg::Real T>
bool PreconditionerService<T>::resolve_early(Block& b) {
  if (block_numerics_ && !b.installs_anywhere) return false;
  bool resolved = false;
  while (!b.jobs.empty()) {
    Job& front = b.jobs.front();
    if (!past_last_use(b, front) || !finished(front)) break;  // not yet: it serves a use to come
    const Step point = options_.policy == PublishPolicy::deterministic ? front.due : front.active_from;
    Job job = pop_job(b, 0);
    if (const Status status = job.done.status(); status.ok()) {
      // The version records the point at which the policy installs it, whatever the timing.
      install(b, job, std::max(point, b.point_step));
      ++current_.early_installs;
      ++totals_.early_installs;
      early_installed_.push_back(b.id);
    } else {
      keep_as_spare(b, job);
      record_failure(b, status);
    }
    resolved = true;
  }
  return resolved;
}

// The job whose end would let the pool make room soonest: the oldest superseded job still
// running, or the oldest job that resolve_early would take once it finished.
template <linalg::Real T>
auto PreconditionerService<T>::oldest_job_to_wait_for() -> Job* {
  Job* oldest = nullptr;
  const auto consider = [&](Job& job) {
    if (job.done.valid() && !job.seen_finished && (oldest == nullptr || job.sequence < oldest->sequence)) oldest = &job;
  };
  for (Job& job : superseded_) consider(job);
  for (auto& b : blocks_) {
    if (b->jobs.empty() || (block_numerics_ && !b->installs_anywhere)) continue;
    Job& front = b->jobs.front();
    if (past_last_use(*b, front)) consider(front);
  }
  return oldest;
}

template <linalg::Real T>
void PreconditionerService<T>::make_pool_room(std::size_t bytes) {
  const std::size_t pool = shadow_.bytes();
  if (pool == 0) return;  // no pool: the host tier's budget alone
  const auto fits = [&] { return shadow_.held() + bytes <= pool; };
  while (!fits()) {
    if (!spares_.empty()) {
      drop_spare(*blocks_[spares_.begin()->second]);
      continue;
    }
    const std::size_t superseded = superseded_.size();
    reap_superseded();
    bool resolved = superseded_.size() != superseded;
    for (auto& b : blocks_) resolved = resolve_early(*b) || resolved;
    if (resolved) continue;  // spares made by the installs go first
    Job* oldest = oldest_job_to_wait_for();
    if (oldest == nullptr) return;  // nothing can make room: hold_shadow takes it beyond the pool
    const platform::Seconds start = platform_.clock().now();
    oldest->done.wait();
    const platform::Seconds waited = platform_.clock().now() - start;
    finished(*oldest);
    current_.visible_wait_s += waited;
    totals_.visible_wait_s += waited;
    current_.pool_wait_s += waited;
    totals_.pool_wait_s += waited;
  }
}

template <linalg::Real T>
void PreconditionerService<T>::note_pool_use() {
  const auto jobs = unresolved_jobs_ + static_cast<std::int64_t>(superseded_.size());
  const std::size_t held = shadow_.held();
  const std::size_t pool = shadow_.bytes();
  const std::size_t overflow = pool > 0 && held > pool ? held - pool : 0;
  current_.pool_jobs = std::max(current_.pool_jobs, jobs);
  current_.pool_held_bytes = std::max(current_.pool_held_bytes, held);
  current_.pool_overflow_bytes = std::max(current_.pool_overflow_bytes, overflow);
  totals_.max_pool_jobs = std::max(totals_.max_pool_jobs, jobs);
  totals_.max_pool_held_bytes = std::max(totals_.max_pool_held_bytes, held);
  totals_.max_pool_overflow_bytes = std::max(totals_.max_pool_overflow_bytes, overflow);
}

#define ASTERIA_SHADOW_POOL(T)                                                                       \
  template bool PreconditionerService<T>::past_last_use(const Block&, const Job&) const;             \
  template bool PreconditionerService<T>::resolve_early(Block&);                                     \
  template auto PreconditionerService<T>::oldest_job_to_wait_for() -> Job*;                          \
  template void PreconditionerService<T>::make_pool_room(std::size_t);                               \
  template void PreconditionerService<T>::note_pool_use();
ASTERIA_SHADOW_POOL(float)
ASTERIA_SHADOW_POOL(double)
#undef ASTERIA_SHADOW_POOL

}  // namespace asteria::runtime

#pragma once
// Settings and measurements of the preconditioner service (preconditioner_service.hpp).
#include <cstdint>
#include <string>
#include <string_view>

#include "core/optim/block_optimizer.hpp"
#include "core/optim/hyperparameters.hpp"
#include "core/platform/time.hpp"

namespace asteria::runtime {

using optim::Step;

enum class PublishPolicy {
  // A refresh becomes active exactly S steps after the synchronous optimizer would activate it
  // (waiting for it if late): results depend on S only, never on timing.
  deterministic,
  // The newest finished refresh is installed at the block's first publication point at or after
  // the one where the synchronous optimizer would install it; a refresh S steps late is waited
  // for. Timing-dependent.
  opportunistic,
};

// Where refresh jobs run.
enum class RefreshSite {
  // The host workers, from snapshots, published under the staleness bound: Asteria.
  host,
  // The device stream, in order with the step's device work, on the device's solver
  // (ops::Device::solver(); the host's LAPACK where it has none), at S = 0: the native
  // synchronous optimizer, the baseline whose refresh steps show as spikes.
  device,
};

std::string_view to_string(PublishPolicy policy) noexcept;
std::string_view to_string(RefreshSite site) noexcept;
// "host" or "device"; throws InputError naming `source` otherwise.
RefreshSite parse_refresh_site(std::string_view name, const std::string& source = "--refresh-on");
// "deterministic" or "opportunistic"; throws InputError naming `source` otherwise.
PublishPolicy parse_publish_policy(std::string_view name, const std::string& source = "--publish-policy");

struct ServiceOptions {
  int staleness = 0;  // S >= 0: steps a refresh may be published after the synchronous schedule
  PublishPolicy policy = PublishPolicy::deterministic;
  // Failure policies, as in optim::Hyperparameters (and with the same meaning).
  int max_consecutive_refresh_failures = 3;
  optim::NonFinitePolicy non_finite = optim::NonFinitePolicy::skip;
  int max_consecutive_non_finite = 10;
  // A job's independent parts (its factors: RefreshJob::parts) run as works of their own on the
  // host workers, side by side when workers are free, so one block's refresh ends sooner; off:
  // one work per job. The numbers are the same either way.
  bool split_refresh_parts = true;
  RefreshSite refresh_site = RefreshSite::host;  // device: staleness 0 only
};

// The failure policies of `hp` with the given staleness and policy.
ServiceOptions service_options(const optim::Hyperparameters& hp, int staleness,
                               PublishPolicy policy = PublishPolicy::deterministic);

// Throws InputError naming `source` and the field when a value is out of its domain.
void validate(const ServiceOptions& options, const std::string& source);

// What one training step cost the optimizer and how far behind the preconditioners ran.
struct StepMetrics {
  Step step = 0;
  // Seconds (platform clock) that the hooks of this step spent waiting for late refreshes:
  // optimizer time the training step could not hide.
  platform::Seconds visible_wait_s = 0.0;
  std::int64_t submitted = 0;   // refresh jobs submitted during the step
  std::int64_t finished = 0;    // jobs first seen finished (ok or not) during the step
  std::int64_t published = 0;   // jobs installed into their block during the step
  std::int64_t failures = 0;    // jobs that failed (previous preconditioner kept) during the step
  std::int64_t superseded = 0;  // jobs dropped because a newer one was installed (opportunistic)
  std::int64_t skipped_non_finite = 0;  // block-steps skipped for a non-finite gradient
  // At the end of the step: jobs the service still holds — submitted and neither published nor
  // failed, plus superseded jobs whose work is still running.
  std::int64_t refresh_backlog = 0;
  // Bytes those jobs hold (snapshots and results). steps.csv's shadow_bytes is the pool's held
  // buffers, spares included.
  std::size_t live_job_bytes = 0;
  // The shadow pool during the step: the most jobs holding buffers at once (unresolved and
  // superseded, right after each snapshot), the most bytes held at once (spares included), the
  // snapshots' waits for room (back-pressure; also in visible_wait_s), the jobs installed early
  // to make room, and the most bytes held beyond the pool (0 when the pool is sized right).
  std::int64_t pool_jobs = 0;
  std::size_t pool_held_bytes = 0;
  platform::Seconds pool_wait_s = 0.0;
  std::int64_t early_installs = 0;
  std::size_t pool_overflow_bytes = 0;
  double exchanged_bytes = 0.0;  // refresh results this rank sent or received (shared refreshes)
  // Max over the blocks updated in this step of their staleness at the update (see
  // PreconditionerService::staleness); never above S.
  Step max_staleness = 0;
};

// Running totals over every step (and settle()).
struct ServiceTotals {
  platform::Seconds visible_wait_s = 0.0;
  std::int64_t submitted = 0;
  std::int64_t finished = 0;
  std::int64_t published = 0;
  std::int64_t failures = 0;
  std::int64_t superseded = 0;
  std::int64_t skipped_non_finite = 0;
  Step max_staleness = 0;
  platform::Seconds pool_wait_s = 0.0;
  std::int64_t early_installs = 0;
  std::int64_t max_pool_jobs = 0;
  std::size_t max_pool_held_bytes = 0;
  std::size_t max_pool_overflow_bytes = 0;
};

// Version of one block's active preconditioner.
struct BlockVersion {
  Step stats_step = 0;      // step whose statistics the installed refresh used (0: none yet)
  Step published_step = 0;  // step at whose publication point it was installed (0: none yet)
  std::int64_t publications = 0;
  std::int64_t failures = 0;  // failed refreshes of this block, in total
  int consecutive_failures = 0;
  int consecutive_non_finite = 0;
  std::int64_t skipped_non_finite = 0;
};

}  // namespace asteria::runtime

// The preconditioner service's part of a checkpoint: per block, its bookkeeping and the jobs not
// yet resolved, with their results, so that a resumed run publishes them where the
// uninterrupted run would have.
#include <stdexcept>

#include "core/checkpoint/byte_codec.hpp"
#include "core/common/error.hpp"
#include "core/runtime/service/preconditioner_service.hpp"

namespace asteria::runtime {

namespace {
constexpr std::uint64_t kBlockImageVersion = 1;
}  // namespace

template <linalg::Real T>
std::vector<std::byte> PreconditionerService<T>::save_totals() {
  if (in_step_) throw std::logic_error("preconditioner service: checkpoint inside step " + std::to_string(current_.step));
  for (Job& job : superseded_) job.done.wait();
  reap_superseded();
  checkpoint::ByteWriter w;
  w.u64(kBlockImageVersion);
  w.i64(last_step_);
  w.u64(blocks_.size());
  w.f64(totals_.visible_wait_s);
  for (std::int64_t v : {totals_.submitted, totals_.finished, totals_.published, totals_.failures, totals_.superseded,
                         totals_.skipped_non_finite, totals_.max_staleness, run_here_, received_})
    w.i64(v);
  return std::move(w.image());
}

template <linalg::Real T>
void PreconditionerService<T>::restore_totals(std::span<const std::byte> image, const std::string& source) {
  if (in_step_ || last_step_ != 0) throw std::logic_error("preconditioner service: restore before the first step");
  checkpoint::ByteReader r(image, source);
  if (r.u64("version") != kBlockImageVersion) throw InputError(source, "version", "expected service image version 1");
  const Step last = r.i64("last step");
  if (last < 0) throw InputError(source, "last step", "expected a step >= 0");
  if (r.u64("block count") != blocks_.size())
    throw InputError(source, "block count",
                     "expected " + std::to_string(blocks_.size()) + " blocks (a checkpoint of another model or optimizer)");
  ServiceTotals totals;
  totals.visible_wait_s = r.f64("visible wait");
  for (std::int64_t* v : {&totals.submitted, &totals.finished, &totals.published, &totals.failures, &totals.superseded,
                          &totals.skipped_non_finite})
    *v = r.i64("totals");
  totals.max_staleness = r.i64("max staleness");
  const std::int64_t run_here = r.i64("refreshes run here");
  const std::int64_t received = r.i64("refreshes received");
  r.expect_end();
  last_step_ = last;
  totals_ = totals;
  run_here_ = run_here;
  received_ = received;
}

template <linalg::Real T>
std::vector<std::byte> PreconditionerService<T>::save_block(BlockId id) {
  if (in_step_) throw std::logic_error("preconditioner service: checkpoint inside step " + std::to_string(current_.step));
  Block& b = block(id);
  checkpoint::ByteWriter w;
  w.u64(kBlockImageVersion);
  w.str(b.label);
  w.i64(b.delay);
  w.i64(options_.staleness);
  for (std::int64_t v : {b.statistics_updates, b.accumulated_step, b.backward_step, b.skipped_step, b.point_step,
                         b.prepared_step})
    w.i64(v);
  const BlockVersion& v = b.version;
  for (std::int64_t x : {v.stats_step, v.published_step, v.publications, v.failures,
                         static_cast<std::int64_t>(v.consecutive_failures),
                         static_cast<std::int64_t>(v.consecutive_non_finite), v.skipped_non_finite})
    w.i64(x);
  w.u64(b.jobs.size());
  for (Job& job : b.jobs) {
    // A shared result not yet sent travels now; then the job is finished whatever it was doing.
    if (job.owner >= 0 && !job.done.valid()) exchange(job, b.label, last_step_);
    if (job.produced.valid()) job.produced.wait();
    job.done.wait();
    const Status status = job.done.status();
    w.i64(job.job->stats_step());
    w.i64(job.active_from);
    w.i64(job.due);
    w.i64(job.job->snapshot_stamp());
    w.i64(static_cast<std::int64_t>(status.code()));
    w.str(status.reason());
    std::vector<std::byte> result;
    if (status.ok()) {
      result.resize(job.job->result_bytes());
      if (result.empty())
        throw std::logic_error("preconditioner service: " + b.label + ": a refresh whose result cannot be saved");
      const bool received_here = job.owner >= 0 && job.owner != comm_->rank();
      if (received_here)  // the owner's result, not yet loaded into the job
        std::copy(job.image.begin(), job.image.begin() + static_cast<std::ptrdiff_t>(result.size()), result.begin());
      else
        job.job->save_result(result);
    }
    w.bytes(result);
  }
  return std::move(w.image());
}

template <linalg::Real T>
void PreconditionerService<T>::restore_block(BlockId id, std::span<const std::byte> image, const std::string& source) {
  if (in_step_ || !superseded_.empty()) throw std::logic_error("preconditioner service: restore before the first step");
  Block& b = block(id);
  if (!b.jobs.empty()) throw std::logic_error("preconditioner service: restore into a block with jobs");
  checkpoint::ByteReader r(image, source);
  if (r.u64("version") != kBlockImageVersion) throw InputError(source, "version", "expected service image version 1");
  const std::string label = r.str("label");
  if (label != b.label) throw InputError(source, "label", "expected block '" + b.label + "', found '" + label + "'");
  if (r.i64("activation delay") != b.delay)
    throw InputError(source, "activation delay", "differs from block '" + b.label + "' (another optimizer)");
  const std::int64_t staleness = r.i64("staleness");
  if (staleness != options_.staleness)
    throw InputError(source, "staleness",
                     "the checkpoint was taken under staleness " + std::to_string(staleness) + ", this run has " +
                         std::to_string(options_.staleness));
  Block restored;
  for (std::int64_t* v : {&restored.statistics_updates, &restored.accumulated_step, &restored.backward_step,
                          &restored.skipped_step, &restored.point_step, &restored.prepared_step})
    *v = r.i64("block steps");
  BlockVersion& v = restored.version;
  v.stats_step = r.i64("version.stats_step");
  v.published_step = r.i64("version.published_step");
  v.publications = r.i64("version.publications");
  v.failures = r.i64("version.failures");
  v.consecutive_failures = static_cast<int>(r.i64("version.consecutive_failures"));
  v.consecutive_non_finite = static_cast<int>(r.i64("version.consecutive_non_finite"));
  v.skipped_non_finite = r.i64("version.skipped_non_finite");
  constexpr std::size_t kSmallestJob = 7 * 8;
  const std::uint64_t jobs = r.count("job count", kSmallestJob);
  std::deque<Job> rebuilt;
  for (std::uint64_t i = 0; i < jobs; ++i) {
    const Step stats_step = r.i64("job stats step");
    const Step active_from = r.i64("job activation step");
    const Step due = r.i64("job due step");
    const std::int64_t stamp = r.i64("job stamp");
    const std::int64_t code = r.i64("job outcome");
    std::string reason = r.str("job reason");
    const std::span<const std::byte> result = r.bytes("job result");
    if (code < 0 || code > static_cast<std::int64_t>(StatusCode::failed))
      throw InputError(source, "job outcome", "expected a status code, found " + std::to_string(code));
    if (active_from != stats_step + b.delay || due != active_from + options_.staleness)
      throw InputError(source, "job steps", "inconsistent with the block's delay and the staleness bound (corrupted)");
    const Status status = code == 0 ? Status::success() : Status(static_cast<StatusCode>(code), std::move(reason));
    std::unique_ptr<optim::RefreshJob<T>> job = b.optimizer->resumed(stats_step, stamp);
    if (!job) throw InputError(source, "jobs", "block '" + b.label + "' has no refresh to resume");
    if (status.ok()) {
      if (result.size() != job->result_bytes())
        throw InputError(source, "job result",
                         "expected " + std::to_string(job->result_bytes()) + " bytes, found " + std::to_string(result.size()));
      job->load_result(result);
    }
    const std::size_t bytes = job->bytes();
    Job entry{std::move(job), platform::Pending::ready(status), active_from, due, true, ++next_sequence_, bytes, {}, -1, 0, {}, {}};
    entry.shadow = hold_shadow(b, bytes, stats_step);
    rebuilt.push_back(std::move(entry));
  }
  r.expect_end();
  b.statistics_updates = restored.statistics_updates;
  b.accumulated_step = restored.accumulated_step;
  b.backward_step = restored.backward_step;
  b.skipped_step = restored.skipped_step;
  b.point_step = restored.point_step;
  b.prepared_step = restored.prepared_step;
  b.version = restored.version;
  unresolved_jobs_ += static_cast<std::int64_t>(rebuilt.size());
  b.jobs = std::move(rebuilt);
}

#define ASTERIA_SERVICE_CHECKPOINT(T)                                                                          \
  template std::vector<std::byte> PreconditionerService<T>::save_totals();                                      \
  template void PreconditionerService<T>::restore_totals(std::span<const std::byte>, const std::string&);        \
  template std::vector<std::byte> PreconditionerService<T>::save_block(BlockId);                                \
  template void PreconditionerService<T>::restore_block(BlockId, std::span<const std::byte>, const std::string&);
ASTERIA_SERVICE_CHECKPOINT(float)
ASTERIA_SERVICE_CHECKPOINT(double)
#undef ASTERIA_SERVICE_CHECKPOINT

}  // namespace asteria::runtime

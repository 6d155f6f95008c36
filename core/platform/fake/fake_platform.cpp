#include "core/platform/fake/fake_platform.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <stdexcept>

namespace asteria::platform::fake {

class FakePlatform::ManualClock final : public Clock {
 public:
  explicit ManualClock(FakePlatform& p) : p_(p) {}
  Seconds now() const override { return p_.now_; }
  void sleep_until(Seconds t) override { p_.advance_to(t); }

 private:
  FakePlatform& p_;
};

// One thread: locking is a no-op, and waiting can only end by letting time pass, so a wait
// completes the next event. Waiting with nothing in flight can never end: a deadlock, reported.
class FakePlatform::SingleThreadSync final : public SyncFactory {
  class NoMutex final : public Mutex {
   public:
    void lock() override {}
    void unlock() override {}
  };
  class AdvancingCondition final : public ConditionVariable {
   public:
    explicit AdvancingCondition(FakePlatform& p) : p_(p) {}
    void wait(Mutex& /*locked*/) override {
      if (!p_.advance_to_next_event())
        throw std::logic_error("fake platform: waiting with no work in flight would never end (deadlock)");
    }
    void notify_one() override {}
    void notify_all() override {}

   private:
    FakePlatform& p_;
  };

 public:
  explicit SingleThreadSync(FakePlatform& p) : p_(p) {}
  std::unique_ptr<Mutex> make_mutex() override { return std::make_unique<NoMutex>(); }
  std::unique_ptr<ConditionVariable> make_condition_variable() override {
    return std::make_unique<AdvancingCondition>(p_);
  }

 private:
  FakePlatform& p_;
};

namespace {
Status run_body(const Work& work) {
  if (!work.body) return Status::success();
  try {
    return work.body();
  } catch (const std::exception& e) {
    return {StatusCode::failed, work.label + ": " + e.what()};
  }
}
}  // namespace

FakeExecutor::FakeExecutor(FakePlatform& platform, std::string name, std::vector<std::string> tracks,
                           DurationModel duration)
    : platform_(platform), name_(std::move(name)), tracks_(std::move(tracks)), lane_free_at_(tracks_.size(), 0.0),
      duration_(std::move(duration)) {
  if (tracks_.empty()) throw std::invalid_argument("fake executor '" + name_ + "': needs a lane");
}

Pending FakeExecutor::submit(Work work) {
  Status status = run_body(work);
  const Seconds duration = duration_ ? std::max(0.0, duration_(work)) : 0.0;
  auto lane = std::min_element(lane_free_at_.begin(), lane_free_at_.end());
  const Seconds start = std::max(platform_.now(), *lane);
  *lane = start + duration;
  if (ActivitySink* sink = platform_.activities())
    sink->record({tracks_[static_cast<std::size_t>(lane - lane_free_at_.begin())], work.label, work.tag, work.cost,
                  start, *lane, status.ok()});
  auto [promise, pending] = platform_.completions().make();
  platform_.schedule(*lane, std::move(promise), std::move(status));
  return pending;
}

FakeMemory::FakeMemory(FakePlatform& platform, const FakeOptions& options)
    : platform_(platform),
      bytes_per_second_(options.copy_bytes_per_second),
      holds_data_(options.holds_data),
      unified_(options.unified_capacity) {
  usage_[static_cast<int>(Tier::device)].capacity = options.device_capacity;
  usage_[static_cast<int>(Tier::host)].capacity = options.host_capacity;
  usage_[static_cast<int>(Tier::nvme)].capacity = options.nvme_capacity;
}

std::optional<TierUsage> FakeMemory::shared_pool() const {
  if (unified_ == 0) return std::nullopt;
  const TierUsage& d = usage_[static_cast<int>(Tier::device)];
  const TierUsage& h = usage_[static_cast<int>(Tier::host)];
  return TierUsage{unified_, d.resident + h.resident, pool_peak_};
}

bool FakeMemory::take(Tier tier, std::size_t bytes) {
  TierUsage& u = usage_[static_cast<int>(tier)];
  if (bytes > u.capacity - u.resident) return false;
  if (const std::optional<TierUsage> pool = shared_pool(); pool && tier != Tier::nvme && bytes > pool->capacity - pool->resident)
    return false;
  u.resident += bytes;
  u.peak_resident = std::max(u.peak_resident, u.resident);
  if (tier != Tier::nvme)
    pool_peak_ = std::max(pool_peak_, usage_[static_cast<int>(Tier::device)].resident + usage_[static_cast<int>(Tier::host)].resident);
  return true;
}

std::optional<Region> FakeMemory::allocate(Tier tier, std::size_t bytes, std::string label) {
  if (!take(tier, bytes)) return std::nullopt;
  Region r{tier, next_id_++, bytes, std::move(label)};
  storage_[r.id].resize(holds_data_ ? bytes : 0);
  return r;
}

std::optional<Region> FakeMemory::reserve(Tier tier, std::size_t bytes, std::string label) {
  if (!take(tier, bytes)) return std::nullopt;
  Region r{tier, next_id_++, bytes, std::move(label)};
  reserved_.emplace(r.id, tier);
  return r;
}

void FakeMemory::release(Region& region) {
  if (!region.valid()) return;
  if (storage_.erase(region.id) == 0 && reserved_.erase(region.id) == 0)
    throw std::logic_error("fake memory: release of an unknown region");
  usage_[static_cast<int>(region.tier)].resident -= region.bytes;
  region = {};
}

std::pair<Seconds, Seconds> FakeMemory::schedule_move(std::size_t bytes) {
  const Seconds start = std::max(platform_.now(), copy_free_at_);
  const Seconds end = start + (bytes_per_second_ > 0.0 ? static_cast<double>(bytes) / bytes_per_second_ : 0.0);
  copy_free_at_ = end;
  return {start, end};
}

Pending FakeMemory::transfer(Tier from, Tier to, std::size_t bytes, std::string label, const OpTag& cause) {
  const auto [start, end] = schedule_move(bytes);
  transfers_.push_back({from, to, bytes, start, end});
  if (ActivitySink* sink = platform_.activities()) {
    OpTag tag = cause;
    tag.role = from == Tier::nvme || to == Tier::nvme ? ActivityRole::io : ActivityRole::transfer;
    sink->record({"copy engine", std::move(label), tag, Cost{WorkKind::other, 0.0, static_cast<double>(bytes), 0},
                  start, end, true});
  }
  auto [promise, pending] = platform_.completions().make();
  platform_.schedule(end, std::move(promise), Status::success());
  return pending;
}

std::byte* FakeMemory::host_address(const Region& region) {
  if (region.tier == Tier::nvme || !holds_data_) return nullptr;
  auto it = storage_.find(region.id);
  return it == storage_.end() ? nullptr : it->second.data();
}

Pending FakeMemory::copy(const Region& src, const Region& dst, const OpTag& cause) {
  auto s = storage_.find(src.id);
  auto d = storage_.find(dst.id);
  if (s == storage_.end() || d == storage_.end())
    throw std::logic_error("fake memory: copy of an unknown region (or of a reservation, which holds no bytes)");
  const std::size_t bytes = std::min(src.bytes, dst.bytes);
  Status status;
  if (injected_failure_) {
    status = std::move(*injected_failure_);
    injected_failure_.reset();
  } else if (bytes > 0 && holds_data_) {
    std::memcpy(d->second.data(), s->second.data(), bytes);
  }
  const auto [start, end] = schedule_move(bytes);
  moves_.push_back({src.tier, dst.tier, bytes, start, end});
  if (ActivitySink* sink = platform_.activities()) {
    OpTag tag = cause;
    tag.role = src.tier == Tier::nvme || dst.tier == Tier::nvme ? ActivityRole::io : ActivityRole::transfer;
    sink->record({"copy engine", "copy " + std::string(to_string(src.tier)) + "->" + std::string(to_string(dst.tier)) +
                                     ": " + src.label + " -> " + dst.label,
                  tag, Cost{WorkKind::other, 0.0, static_cast<double>(bytes), 0}, start, end, status.ok()});
  }
  auto [promise, pending] = platform_.completions().make();
  platform_.schedule(end, std::move(promise), std::move(status));
  return pending;
}

FakePlatform::FakePlatform(FakeOptions options)
    : activities_(options.activities), clock_(std::make_unique<ManualClock>(*this)),
      sync_(std::make_unique<SingleThreadSync>(*this)) {
  board_ = std::make_unique<CompletionBoard>(*sync_, clock_.get());
  const int unit = activities_ != nullptr ? activities_->unit() : 0;
  device_ = std::make_unique<FakeExecutor>(*this, "device", std::vector<std::string>{device_stream_track(unit)},
                                           options.device_duration);
  std::vector<std::string> workers;
  for (int k = 0; k < std::max(1, options.host_workers); ++k) workers.push_back(host_worker_track(unit, k));
  host_ = std::make_unique<FakeExecutor>(*this, "host-workers", std::move(workers), options.host_duration);
  memory_ = std::make_unique<FakeMemory>(*this, options);
}

FakePlatform::~FakePlatform() = default;

Clock& FakePlatform::clock() { return *clock_; }
SyncFactory& FakePlatform::sync() { return *sync_; }

void FakePlatform::schedule(Seconds at, Promise promise, Status status) {
  events_.push({std::max(at, now_), sequence_++, std::move(promise), std::move(status)});
}

bool FakePlatform::advance_to_next_event() {
  if (events_.empty()) return false;
  Event e = events_.top();
  events_.pop();
  now_ = std::max(now_, e.at);
  e.promise.fulfil(std::move(e.status));
  return true;
}

void FakePlatform::advance_to(Seconds t) {
  while (!events_.empty() && events_.top().at <= t) advance_to_next_event();
  now_ = std::max(now_, t);
}

}  // namespace asteria::platform::fake

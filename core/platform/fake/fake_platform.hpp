#pragma once
// The fake backend: one thread, a manual clock and a queue of timed completions. Work runs at
// submit (so its numbers exist at once) but completes at a modelled time; waiting on a Pending
// advances the clock to the next completion, like a tiny discrete-event simulator. Durations
// come from a user function, so tests can draw random refresh times and still be deterministic.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "core/platform/platform.hpp"

namespace asteria::platform::fake {

using DurationModel = std::function<Seconds(const Work&)>;

struct FakeOptions {
  std::size_t device_capacity = std::size_t{1} << 30;
  std::size_t host_capacity = std::size_t{4} << 30;
  std::size_t nvme_capacity = std::size_t{64} << 30;
  // Non-zero: device and host draw from one pool of this many bytes (unified memory) as well.
  std::size_t unified_capacity = 0;
  int host_workers = 4;
  DurationModel device_duration;  // empty: work completes at once
  DurationModel host_duration;
  double copy_bytes_per_second = 0.0;  // 0: copies complete at once
  // false: regions are sizes only (a data-free run: Memory::holds_data), so a model's whole state
  // is accounted without the RAM it would take.
  bool holds_data = true;
  ActivitySink* activities = nullptr;   // not owned; null: nothing recorded
};

struct MoveRecord {
  Tier from = Tier::host;
  Tier to = Tier::host;
  std::size_t bytes = 0;
  Seconds start = 0.0;
  Seconds end = 0.0;
};

class FakePlatform;

// Runs bodies at submit; completion is scheduled on one of `lanes` parallel lanes.
class FakeExecutor final : public Executor {
 public:
  // `tracks`: the activity track of each lane (their number is the concurrency).
  FakeExecutor(FakePlatform& platform, std::string name, std::vector<std::string> tracks, DurationModel duration);
  std::string_view name() const noexcept override { return name_; }
  int concurrency() const noexcept override { return static_cast<int>(lane_free_at_.size()); }
  Pending submit(Work work) override;

 private:
  FakePlatform& platform_;
  std::string name_;
  std::vector<std::string> tracks_;
  std::vector<Seconds> lane_free_at_;
  DurationModel duration_;
};

class FakeMemory final : public Memory {
 public:
  FakeMemory(FakePlatform& platform, const FakeOptions& options);
  TierUsage usage(Tier tier) const override { return usage_[static_cast<int>(tier)]; }
  std::optional<TierUsage> shared_pool() const override;
  std::optional<Region> allocate(Tier tier, std::size_t bytes, std::string label) override;
  void release(Region& region) override;
  std::byte* host_address(const Region& region) override;
  bool holds_data() const override { return holds_data_; }
  Pending copy(const Region& src, const Region& dst, const OpTag& cause) override;
  using Memory::copy;
  // Bytes counted, no storage.
  std::optional<Region> reserve(Tier tier, std::size_t bytes, std::string label) override;
  // Charged like a copy: one after another on the copy engine, at copy_bytes_per_second.
  Pending transfer(Tier from, Tier to, std::size_t bytes, std::string label, const OpTag& cause) override;

  // Test hooks: the next copy fails with this status (once); every move (copy) and every
  // transfer made so far.
  void fail_next_copy(Status status) { injected_failure_ = std::move(status); }
  const std::vector<MoveRecord>& moves() const noexcept { return moves_; }
  const std::vector<MoveRecord>& transfers() const noexcept { return transfers_; }

 private:
  bool take(Tier tier, std::size_t bytes);
  // When a move of `bytes` that may start now ends: the copy engine moves one at a time.
  std::pair<Seconds, Seconds> schedule_move(std::size_t bytes);

  FakePlatform& platform_;
  double bytes_per_second_;
  bool holds_data_ = true;
  TierUsage usage_[kTierCount];
  std::size_t unified_ = 0;
  std::size_t pool_peak_ = 0;  // the high-water mark of device + host
  std::map<std::uint64_t, std::vector<std::byte>> storage_;  // every tier, NVMe included, in RAM
  std::map<std::uint64_t, Tier> reserved_;                   // regions that only count bytes
  std::uint64_t next_id_ = 1;
  std::optional<Status> injected_failure_;
  std::vector<MoveRecord> moves_;
  std::vector<MoveRecord> transfers_;
  Seconds copy_free_at_ = 0.0;
};

class FakePlatform final : public Platform {
 public:
  explicit FakePlatform(FakeOptions options = {});
  ~FakePlatform() override;
  std::string_view backend() const noexcept override { return "fake"; }
  Clock& clock() override;
  SyncFactory& sync() override;
  CompletionBoard& completions() override { return *board_; }
  Executor& device_stream() override { return *device_; }
  Executor& host_workers() override { return *host_; }
  Memory& memory() override { return *memory_; }
  ActivitySink* activities() override { return activities_; }
  // A manual clock advanced by modelled durations: a tiny discrete-event simulator.
  TimeSource time_source() const noexcept override { return TimeSource::simulated; }
  FakeMemory& fake_memory() { return *memory_; }

  Seconds now() const noexcept { return now_; }
  // Completes every event due at or before t, in time order, then sets the clock to t.
  void advance_to(Seconds t);
  // Completes the earliest pending event (advancing the clock). False when none is pending.
  bool advance_to_next_event();
  std::size_t events_pending() const noexcept { return events_.size(); }

  // Used by executors and memory: fulfil `promise` with `status` at time `at`.
  void schedule(Seconds at, Promise promise, Status status);

 private:
  struct Event {
    Seconds at;
    std::uint64_t sequence;  // ties complete in submission order
    Promise promise;
    Status status;
  };
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.at != b.at ? a.at > b.at : a.sequence > b.sequence;
    }
  };
  class ManualClock;
  class SingleThreadSync;

  Seconds now_ = 0.0;
  std::uint64_t sequence_ = 0;
  ActivitySink* activities_ = nullptr;
  std::priority_queue<Event, std::vector<Event>, Later> events_;
  std::unique_ptr<ManualClock> clock_;
  std::unique_ptr<SingleThreadSync> sync_;
  std::unique_ptr<CompletionBoard> board_;
  std::unique_ptr<FakeExecutor> device_;
  std::unique_ptr<FakeExecutor> host_;
  std::unique_ptr<FakeMemory> memory_;
};

}  // namespace asteria::platform::fake

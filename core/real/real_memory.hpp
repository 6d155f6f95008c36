#pragma once
// Memory tiers of the real backend. Budgets are enforced with atomic accounting (allocate never
// over-commits, also under concurrent callers). Without a GPU the device tier is host RAM with
// its own budget; with a GpuTier it is GPU memory and host regions are page-locked. NVMe regions
// keep their bytes in an NvmeTier provider. Copies run on copy-engine threads per ordered tier
// pair: one for pairs without NVMe, whose copies finish in submission order; several for pairs
// to or from NVMe (RealMemoryOptions::nvme_moves_in_flight), whose copies may finish in any
// order. Copies between different pairs are unordered: wait for a copy before issuing one that
// reads its destination.
// A region stays allocated (and counted) until copies in flight on it have finished. A released
// region's buffer is kept for the next region of its size (BufferCache) as long as the tier's
// live regions and kept buffers together stay within both its budget and its peak of live bytes,
// so reuse never makes the process hold more memory than its regions once needed.
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/platform/clock.hpp"
#include "core/real/buffer_cache.hpp"
#include "core/platform/memory.hpp"
#include "core/real/device_model.hpp"
#include "core/real/tier_backend.hpp"
#include "core/real/work_queue.hpp"

namespace asteria::real {

struct TierBudgets {
  std::size_t device = std::size_t{1} << 30;
  std::size_t host = std::size_t{4} << 30;
  std::size_t nvme = std::size_t{64} << 30;  // counts only when an NvmeTier is given
  std::size_t of(platform::Tier tier) const noexcept;
};

struct RealMemoryOptions {
  TierBudgets budgets;
  // Modelled speed of each move (index from * kTierCount + to); unmodelled by default, so moves
  // take the time they take. A modelled move copies, then waits out the rest of its duration.
  std::array<LinkModel, platform::kTierCount * platform::kTierCount> links{};
  LinkModel& link(platform::Tier from, platform::Tier to) noexcept;
  const LinkModel& link(platform::Tier from, platform::Tier to) const noexcept;
  // Copies to or from NVMe in flight at once per tier pair (each block move with its own I/O
  // context and queue depth), so that one block's write-back never waits for the previous one's
  // to end: the drive's queue stays full. A modelled pair keeps one (its model is one stream of
  // latency + bytes / bandwidth per move). At least 1.
  int nvme_moves_in_flight = 4;
};

struct MoveRecord {
  platform::Tier from = platform::Tier::host;
  platform::Tier to = platform::Tier::host;
  std::size_t bytes = 0;
  platform::Seconds start = 0.0;
  platform::Seconds end = 0.0;
  bool ok = true;
  std::string label;  // "copy host->nvme: <source label> -> <destination label>"
};

struct MoveTotals {
  std::uint64_t moves = 0;     // finished copies (and modelled transfers), failed ones included
  std::uint64_t failures = 0;
  std::uint64_t bytes = 0;     // bytes of the copies that succeeded
  platform::Seconds seconds = 0.0;
};

class RealMemory final : public platform::Memory {
 public:
  // `nvme` (not owned, must outlive this) backs the nvme tier; without it that tier has no
  // capacity. `gpu` (not owned, must outlive this) makes the device tier GPU memory; without it
  // the device tier is host RAM.
  // Copies are recorded on `activities` (not owned; null: nowhere) on the tracks the simulator
  // charges the same moves to: "link h2d<u>", "link d2h<u>", "link hbm<u>", "link dram<u>", and
  // "disk nvme<u>" for a copy to or from the NVMe tier (u = activities->unit()).
  RealMemory(RealMemoryOptions options, platform::CompletionBoard& board, platform::Clock& clock,
             platform::ActivitySink* activities = nullptr, NvmeTier* nvme = nullptr,
             GpuTier* gpu = nullptr);
  ~RealMemory() override;
  RealMemory(const RealMemory&) = delete;
  RealMemory& operator=(const RealMemory&) = delete;

  platform::TierUsage usage(platform::Tier tier) const override;
  // Regions start zero-filled; host-addressable ones are 64-byte aligned, 4096 from a page up
  // (what O_DIRECT transfers need).
  std::optional<platform::Region> allocate(platform::Tier tier, std::size_t bytes, std::string label) override;
  // Throws std::logic_error for a region this memory does not hold.
  void release(platform::Region& region) override;
  std::byte* host_address(const platform::Region& region) override;
  // GPU memory's device address for a device-tier region on a GPU; the host address otherwise.
  std::byte* address(const platform::Region& region) override;
  // GPU memory through the GpuTier, host memory by memcpy; NVMe regions are refused
  // (std::logic_error: their bytes move by copy() through a staging region).
  Status write(const platform::Region& region, std::span<const std::byte> bytes) override;
  Status read(const platform::Region& region, std::span<std::byte> out) override;
  // Throws std::logic_error for unknown regions; failures of the move itself come as Status.
  platform::Pending copy(const platform::Region& src, const platform::Region& dst,
                         const platform::OpTag& cause) override;
  using platform::Memory::copy;
  // Counted against the budget with nothing allocated.
  std::optional<platform::Region> reserve(platform::Tier tier, std::size_t bytes, std::string label) override;
  // Links modelled: the pair's LinkModel duration on its copy engine (after the copies queued
  // there), listed in moves() and totals() like a copy. Otherwise done at once: recorded on the
  // pair's track with zero length.
  platform::Pending transfer(platform::Tier from, platform::Tier to, std::size_t bytes, std::string label,
                             const platform::OpTag& cause) override;

  bool device_is_gpu() const noexcept { return gpu_ != nullptr; }
  std::vector<MoveRecord> moves() const;  // the first max_move_records, in finishing order
  MoveTotals totals(platform::Tier from, platform::Tier to) const;
  // Buffers of released regions kept for reuse on `tier`, and how many were reused so far.
  std::size_t cached_bytes(platform::Tier tier) const;
  std::size_t reused_buffers(platform::Tier tier) const;

  static constexpr std::size_t max_move_records = 1'000'000;

 private:
  struct TierAccount {
    std::size_t capacity = 0;
    std::atomic<std::size_t> resident{0};
    std::atomic<std::size_t> peak{0};
    bool try_reserve(std::size_t bytes) noexcept;
    void give_back(std::size_t bytes) noexcept { resident.fetch_sub(bytes); }
  };
  struct Storage;
  using StoragePtr = std::shared_ptr<Storage>;

  StoragePtr find(std::uint64_t id) const;
  Status checked_storage(const platform::Region& region, std::size_t bytes, const char* verb, StoragePtr& storage) const;
  StoragePtr make_storage(platform::Tier tier, std::size_t bytes, std::string label);
  std::byte* new_buffer(platform::Tier tier, std::size_t size);
  void free_buffer(platform::Tier tier, std::byte* buffer, std::size_t size) noexcept;
  // Bytes the tier's cache may hold now: min(budget, peak) - live bytes.
  std::size_t cache_room(platform::Tier tier) const noexcept;
  BufferCache& cache_of(platform::Tier tier) const;  // device or host
  void recycle(platform::Tier tier, std::byte* buffer, std::size_t size, std::size_t counted) noexcept;
  std::string track_of(platform::Tier from, platform::Tier to) const;
  WorkQueue& engine(platform::Tier from, platform::Tier to);
  Status run_move(platform::Work& work, platform::Tier from, platform::Tier to);
  Status move(const Storage& src, Storage& dst, std::size_t bytes);
  Status read_to_host(const Storage& src, std::byte* out, std::size_t bytes);
  Status write_from_host(Storage& dst, const std::byte* in, std::size_t bytes);
  Status read_nvme(const Storage& src, std::byte* out, std::size_t bytes);
  Status write_nvme(Storage& dst, const std::byte* in, std::size_t bytes);

  RealMemoryOptions options_;
  platform::CompletionBoard& board_;
  platform::Clock& clock_;
  platform::ActivitySink* activities_;
  NvmeTier* nvme_;
  GpuTier* gpu_;
  std::array<TierAccount, platform::kTierCount> accounts_;
  // Before the region table: outlives every Storage, which hands its buffer back here.
  std::array<std::unique_ptr<BufferCache>, platform::kTierCount> caches_;  // none for nvme
  std::atomic<std::uint64_t> next_id_{1};

  mutable std::mutex regions_mutex_;
  std::unordered_map<std::uint64_t, StoragePtr> regions_;

  mutable std::mutex moves_mutex_;
  std::vector<MoveRecord> moves_;
  std::array<MoveTotals, platform::kTierCount * platform::kTierCount> totals_{};

  std::mutex engines_mutex_;
  // Last: destroyed first, draining every copy in flight while the members above still exist.
  std::array<std::unique_ptr<WorkQueue>, platform::kTierCount * platform::kTierCount> engines_;
};

}  // namespace asteria::real

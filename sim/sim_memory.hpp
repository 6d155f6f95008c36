#pragma once
// Memory tiers of one simulated unit. Budgets as in the real backend: allocate never
// over-commits, usage keeps the high-water mark; with unified memory device + host also stay
// within one pool. In data-true mode every region (NVMe included) is backed by zero-filled host
// RAM, so device and host regions have a host address and copies move real bytes (when the
// simulated copy ends); NVMe regions have no host address. In data-free mode regions are sizes
// only and copies only take time.
//
// A copy runs in one of the unit's copy-engine actors (daemons on its CPU host; a copy waits
// for a free one), as the activities of its path:
//   host -> device   the h2d link          device -> host   the d2h link
//   device -> device the hbm link          host -> host     the dram link
//   host -> nvme     a disk write          nvme -> host     a disk read
//   device -> nvme   d2h, then disk write  nvme -> device   disk read, then h2d
//   nvme -> nvme     disk read, then disk write
// Concurrent activities share their link or disk; a disk request first waits nvme.latency.
// A region released while a copy uses it stays allocated (and counted) until the copy ends.
// A transfer (Memory::transfer) takes the same path and queue as a copy of its bytes between its
// tiers, moving no data; a reservation (Memory::reserve) counts its bytes and holds none.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "core/platform/memory.hpp"
#include "sim/core_load.hpp"
#include "sim/recorder.hpp"
#include "sim/simulation_options.hpp"
#include "sim/topology.hpp"

namespace asteria::sim {

struct MemorySpec {
  UnitResources resources;
  TierBudgets budgets;
  bool holds_data = true;
  double nvme_latency = 0.0;
  platform::ActivitySink* activities = nullptr;  // transfers, I/O and occupancy counters (null: none)
  // A CPU device's "links" are memory copies run by a host thread: each takes a core of the CPU
  // host for its time on the link (shared with the device stream and the workers) instead of
  // being a transfer beside them.
  bool copies_use_cores = false;
  CoreLoad* cores = nullptr;  // with copies_use_cores: the CPU host's cores (core_load.hpp)
};

class SimMemory final : public platform::Memory {
 public:
  SimMemory(MemorySpec spec, platform::CompletionBoard& board, Recorder& recorder);
  ~SimMemory() override;
  SimMemory(const SimMemory&) = delete;
  SimMemory& operator=(const SimMemory&) = delete;

  platform::TierUsage usage(platform::Tier tier) const override;
  std::optional<platform::TierUsage> shared_pool() const override;
  std::optional<platform::Region> allocate(platform::Tier tier, std::size_t bytes, std::string label) override;
  // Throws std::logic_error for a region this memory does not hold.
  void release(platform::Region& region) override;
  std::byte* host_address(const platform::Region& region) override;
  bool holds_data() const override { return spec_.holds_data; }
  // Throws std::logic_error for unknown regions.
  platform::Pending copy(const platform::Region& src, const platform::Region& dst,
                         const platform::OpTag& cause) override;
  using platform::Memory::copy;
  std::optional<platform::Region> reserve(platform::Tier tier, std::size_t bytes, std::string label) override;
  platform::Pending transfer(platform::Tier from, platform::Tier to, std::size_t bytes, std::string label,
                             const platform::OpTag& cause) override;

 private:
  struct Accounts;
  struct Storage;
  using StoragePtr = std::shared_ptr<Storage>;
  struct CopyJob {
    StoragePtr src;  // both null for a transfer (no data)
    StoragePtr dst;
    platform::Tier from = platform::Tier::host;
    platform::Tier to = platform::Tier::host;
    std::size_t bytes = 0;
    std::string name;
    platform::Promise promise;
    platform::OpTag cause;
  };
  // Copies wait here for one of the unit's copy engines: a fixed set of daemon actors, so a
  // copy costs no actor creation (a fresh actor's stack is most of a copy's host cost) and at
  // most kCopyEngines copies of a unit are in flight at once, as DMA engines and NVMe queues
  // bound them on real machines.
  struct CopyQueue;
  static constexpr int kCopyEngines = 8;
  static constexpr int kCopiesPerEngine = 64;
  void start_copy_engines();
  void spawn_copy_engine(int engine);

  StoragePtr find(std::uint64_t id) const;
  platform::Pending enqueue(std::shared_ptr<CopyJob> job);
  // The legs of the job's path; then its bytes, when it carries data (`src` and `dst` non-null).
  void move(const CopyJob& job, const Storage* src, Storage* dst);
  void cross_link(simgrid::s4u::Host* from, simgrid::s4u::Host* to, const simgrid::s4u::Link& link, const CopyJob& job);
  void disk_io(bool write, const CopyJob& job);
  void record(std::string track, const CopyJob& job, platform::ActivityRole role, double start) const;

  MemorySpec spec_;
  platform::CompletionBoard& board_;
  Recorder& recorder_;
  std::string disk_track_;
  std::shared_ptr<Accounts> accounts_;  // shared with storages that copies still hold
  std::unordered_map<std::uint64_t, StoragePtr> regions_;
  std::uint64_t next_id_ = 1;
  std::shared_ptr<CopyQueue> copies_;  // shared with the copy engines, which the engine kills last
};

}  // namespace asteria::sim

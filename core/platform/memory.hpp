#pragma once
// Memory tiers and moves between them. Each tier has a capacity budget that allocations never
// exceed; a region on the device or host tier may be host-addressable (always on machines
// without a GPU, where the device tier is host memory with its own budget), an NVMe region is
// not (its bytes live in a file and move only by copy()).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/platform/activity.hpp"
#include "core/platform/pending.hpp"

namespace asteria::platform {

enum class Tier { device, host, nvme };
inline constexpr int kTierCount = 3;
std::string_view to_string(Tier tier) noexcept;

struct Region {
  Tier tier = Tier::host;
  std::uint64_t id = 0;  // unique per Memory; 0 = none
  std::size_t bytes = 0;
  std::string label;     // owner, for errors and traces: "layer3.w block 2"
  bool valid() const noexcept { return id != 0; }
};

struct TierUsage {
  std::size_t capacity = 0;
  std::size_t resident = 0;       // bytes allocated now
  std::size_t peak_resident = 0;  // high-water mark
};

class Memory {
 public:
  virtual ~Memory() = default;
  virtual TierUsage usage(Tier tier) const = 0;
  // When the device and host tiers draw from one physical pool (unified memory: GB10, a CPU
  // device), that pool: its capacity and what both tiers hold now; each tier's own budget may be
  // all of it, so device + host must also fit here. nullopt: separate memories (the default).
  virtual std::optional<TierUsage> shared_pool() const { return std::nullopt; }
  // nullopt when the tier's budget cannot hold `bytes` more; never over-commits.
  virtual std::optional<Region> allocate(Tier tier, std::size_t bytes, std::string label) = 0;
  virtual void release(Region& region) = 0;  // region becomes invalid
  // Host pointer to the region's bytes, or nullptr when not host-addressable (NVMe, real GPU).
  virtual std::byte* host_address(const Region& region) = 0;
  // The region's bytes as the device that computes on its tier addresses them
  // (Platform::math(region.tier)): GPU memory's own address for the device tier on a GPU, the
  // host address otherwise; nullptr for NVMe and for memory without values.
  virtual std::byte* address(const Region& region) { return host_address(region); }
  // Synchronous copies between host bytes and the start of a device- or host-tier region, of
  // any kind (GPU memory included): how state that rests where the host cannot read it is
  // placed, brought back and checkpointed. At most region.bytes; a failed copy is a Status.
  // Default: through the host address (a region without one fails).
  virtual Status write(const Region& region, std::span<const std::byte> bytes);
  virtual Status read(const Region& region, std::span<std::byte> out);
  // False for a memory that only accounts bytes (data-free simulation): no region has a host
  // address and copies move no data; users then store declared bytes only.
  virtual bool holds_data() const { return true; }
  // Copies min(src.bytes, dst.bytes) bytes between any two regions, asynchronously. A failed
  // copy (I/O error, checksum mismatch) gives a Pending whose Status names the region and file.
  // `cause`: the plan op during which the copy started (for the trace).
  virtual Pending copy(const Region& src, const Region& dst, const OpTag& cause) = 0;
  Pending copy(const Region& src, const Region& dst) { return copy(src, dst, OpTag{}); }

  // Counts `bytes` against the tier's budget (and its peak) without storage behind them: bytes
  // a user keeps in memory of its own that stands for the tier, such as a refresh job's snapshot
  // and result buffers (shadow state) on the host. The region has no host address and is no
  // copy's source or destination; release() gives the bytes back. nullopt when the budget cannot
  // hold them. Default: an allocation (a backend that cannot count bytes alone holds storage).
  virtual std::optional<Region> reserve(Tier tier, std::size_t bytes, std::string label) {
    return allocate(tier, bytes, std::move(label));
  }
  // A modelled move of `bytes` from one tier to another that carries no data: a plan's transfer
  // op (a block's gradient down to the host before its host update, its new weights back up
  // after it), whose numbers travel on the numerics' own path. It takes the time the backend
  // charges such a move (its links, its copy rate) and is recorded on the backend's activity
  // sink like a copy, tagged with `cause` (role transfer, or io when NVMe is an end); `label`
  // names it there. Default (a backend without the capability): done at once, recorded nowhere.
  virtual Pending transfer(Tier /*from*/, Tier /*to*/, std::size_t /*bytes*/, std::string /*label*/,
                           const OpTag& /*cause*/) {
    return Pending::ready();
  }
};

// Owns one region and releases it on destruction.
class Allocation {
 public:
  Allocation() = default;
  Allocation(Memory& memory, Region region) : memory_(&memory), region_(std::move(region)) {}
  ~Allocation() { reset(); }
  Allocation(Allocation&& other) noexcept : memory_(other.memory_), region_(std::move(other.region_)) {
    other.region_ = {};
  }
  Allocation& operator=(Allocation&& other) noexcept {
    if (this != &other) {
      reset();
      memory_ = other.memory_;
      region_ = std::move(other.region_);
      other.region_ = {};
    }
    return *this;
  }
  Allocation(const Allocation&) = delete;
  Allocation& operator=(const Allocation&) = delete;

  void reset() {
    if (memory_ && region_.valid()) memory_->release(region_);
    region_ = {};
  }
  bool valid() const noexcept { return region_.valid(); }
  const Region& region() const noexcept { return region_; }
  std::byte* host_address() const { return memory_ ? memory_->host_address(region_) : nullptr; }
  std::byte* address() const { return memory_ ? memory_->address(region_) : nullptr; }

 private:
  Memory* memory_ = nullptr;
  Region region_;
};

}  // namespace asteria::platform

#pragma once
// Internal to RealMemory: the bytes behind one region, freed (and the budget given back) when
// the last holder lets go: the region table, or a copy still in flight.
#include <atomic>
#include <cstddef>
#include <string>

#include "core/real/real_memory.hpp"

namespace asteria::real {

struct RealMemory::Storage {
  enum class Kind { host_heap, host_pinned, gpu, nvme, accounted };  // accounted: bytes counted, none held

  Storage(RealMemory& memory, platform::Tier region_tier, std::uint64_t region_id, std::size_t region_bytes,
          std::string region_label, Kind storage_kind, std::byte* bytes_at, std::size_t buffer_size)
      : owner(memory), tier(region_tier), id(region_id), bytes(region_bytes), label(std::move(region_label)),
        kind(storage_kind), pointer(bytes_at), buffer_bytes(buffer_size) {}
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  bool host_addressable() const noexcept { return kind == Kind::host_heap || kind == Kind::host_pinned; }
  std::byte* host() const noexcept { return host_addressable() ? pointer : nullptr; }

  RealMemory& owner;
  const platform::Tier tier;
  const std::uint64_t id;
  const std::size_t bytes;
  const std::string label;
  const Kind kind;
  std::byte* const pointer;     // host or device bytes; null for nvme and accounted
  const std::size_t buffer_bytes;  // what `pointer` holds: `bytes` rounded up (see RealMemory)
  std::atomic<std::size_t> stored{0};  // nvme: bytes the last write stored (the rest reads as zeros)
};

}  // namespace asteria::real

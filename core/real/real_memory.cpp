#include "core/real/real_memory.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <stdexcept>

#include "core/real/real_memory_storage.hpp"

namespace asteria::real {

using platform::Region;
using platform::Tier;

namespace {
constexpr std::size_t kPage = 4096;
constexpr std::size_t kCacheLine = 64;
int index_of(Tier tier) noexcept { return static_cast<int>(tier); }
std::size_t pair_index(Tier from, Tier to) noexcept {
  return static_cast<std::size_t>(index_of(from) * platform::kTierCount + index_of(to));
}
}  // namespace

std::size_t TierBudgets::of(Tier tier) const noexcept {
  switch (tier) {
    case Tier::device: return device;
    case Tier::host: return host;
    case Tier::nvme: return nvme;
  }
  return 0;
}

LinkModel& RealMemoryOptions::link(Tier from, Tier to) noexcept { return links[pair_index(from, to)]; }
const LinkModel& RealMemoryOptions::link(Tier from, Tier to) const noexcept { return links[pair_index(from, to)]; }

bool RealMemory::TierAccount::try_reserve(std::size_t bytes) noexcept {
  std::size_t current = resident.load();
  do {
    if (bytes > capacity - current) return false;  // current <= capacity always holds
  } while (!resident.compare_exchange_weak(current, current + bytes));
  const std::size_t now = current + bytes;
  std::size_t high = peak.load();
  while (high < now && !peak.compare_exchange_weak(high, now)) {
  }
  return true;
}

RealMemory::Storage::~Storage() {
  // The budget first: the cache's room depends on what is still live.
  owner.accounts_[static_cast<std::size_t>(index_of(tier))].give_back(bytes);
  switch (kind) {
    case Kind::host_heap:
    case Kind::host_pinned:
    case Kind::gpu: owner.recycle(tier, pointer, buffer_bytes, bytes); break;
    case Kind::nvme: owner.nvme_->remove(id); break;
    case Kind::accounted: break;
  }
}

RealMemory::RealMemory(RealMemoryOptions options, platform::CompletionBoard& board, platform::Clock& clock,
                       platform::ActivitySink* activities, NvmeTier* nvme, GpuTier* gpu)
    : options_(options), board_(board), clock_(clock), activities_(activities), nvme_(nvme), gpu_(gpu) {
  for (Tier tier : {Tier::device, Tier::host, Tier::nvme})
    accounts_[static_cast<std::size_t>(index_of(tier))].capacity = options_.budgets.of(tier);
  if (nvme_ == nullptr) accounts_[static_cast<std::size_t>(index_of(Tier::nvme))].capacity = 0;
  for (Tier tier : {Tier::device, Tier::host})
    caches_[static_cast<std::size_t>(index_of(tier))] = std::make_unique<BufferCache>(
        [this, tier](std::byte* buffer, std::size_t size) { free_buffer(tier, buffer, size); });
}

RealMemory::~RealMemory() = default;

platform::TierUsage RealMemory::usage(Tier tier) const {
  const TierAccount& a = accounts_[static_cast<std::size_t>(index_of(tier))];
  return {a.capacity, a.resident.load(), a.peak.load()};
}

namespace {
// Host buffers: 64-byte aligned (SIMD), whole pages from a page up (O_DIRECT). The size alone
// decides the alignment, so a kept buffer fits any region of its size.
std::size_t host_buffer_size(std::size_t bytes) noexcept {
  const std::size_t unit = bytes >= kPage ? kPage : kCacheLine;
  return (std::max<std::size_t>(bytes, 1) + unit - 1) / unit * unit;
}
std::size_t host_alignment(std::size_t buffer_size) noexcept { return buffer_size >= kPage ? kPage : kCacheLine; }
}  // namespace

std::byte* RealMemory::new_buffer(Tier tier, std::size_t size) {
  std::byte* p = nullptr;
  if (gpu_ != nullptr) {
    p = tier == Tier::device ? gpu_->allocate_device(size) : gpu_->allocate_pinned(size);
  } else {
    p = static_cast<std::byte*>(::operator new(size, std::align_val_t{host_alignment(size)}, std::nothrow));
    if (p != nullptr) std::memset(p, 0, size);
  }
  return p;
}

void RealMemory::free_buffer(Tier tier, std::byte* buffer, std::size_t size) noexcept {
  if (gpu_ == nullptr) ::operator delete(buffer, std::align_val_t{host_alignment(size)});
  else if (tier == Tier::device) gpu_->free_device(buffer);
  else gpu_->free_pinned(buffer);
}

std::size_t RealMemory::cache_room(Tier tier) const noexcept {
  const TierAccount& a = accounts_[static_cast<std::size_t>(index_of(tier))];
  const std::size_t live = a.resident.load();
  const std::size_t ceiling = std::min(a.capacity, a.peak.load());
  return ceiling > live ? ceiling - live : 0;
}

void RealMemory::recycle(Tier tier, std::byte* buffer, std::size_t size, std::size_t counted) noexcept {
  BufferCache& cache = cache_of(tier);
  bool kept = false;
  try {
    kept = cache.keep(buffer, size, counted, cache_room(tier));
  } catch (...) {  // no memory for the cache's bookkeeping: free the buffer instead
  }
  if (!kept) free_buffer(tier, buffer, size);
}

RealMemory::StoragePtr RealMemory::make_storage(Tier tier, std::size_t bytes, std::string label) {
  const std::uint64_t id = next_id_.fetch_add(1);
  if (tier == Tier::nvme)
    return std::make_shared<Storage>(*this, tier, id, bytes, std::move(label), Storage::Kind::nvme, nullptr, 0);
  const std::size_t size = gpu_ != nullptr ? std::max<std::size_t>(bytes, 1) : host_buffer_size(bytes);
  BufferCache& cache = cache_of(tier);
  std::byte* p = cache.take(size);
  if (p != nullptr) {
    bool zeroed = true;  // regions start zero-filled, reused or not
    if (gpu_ != nullptr && tier == Tier::device) zeroed = gpu_->zero_device(p, size);
    else std::memset(p, 0, size);
    if (!zeroed) {
      free_buffer(tier, p, size);
      p = nullptr;
    }
  }
  if (p == nullptr) {
    cache.trim(cache_room(tier));  // this region is live now: kept buffers make room for it
    p = new_buffer(tier, size);
    if (p == nullptr && cache.bytes() > 0) {  // the machine is short: give back every kept buffer
      cache.trim(0);
      p = new_buffer(tier, size);
    }
  }
  if (p == nullptr) return nullptr;
  const auto kind = gpu_ == nullptr ? Storage::Kind::host_heap
                    : tier == Tier::device ? Storage::Kind::gpu
                                           : Storage::Kind::host_pinned;
  try {
    return std::make_shared<Storage>(*this, tier, id, bytes, std::move(label), kind, p, size);
  } catch (...) {
    free_buffer(tier, p, size);
    throw;
  }
}

std::optional<Region> RealMemory::allocate(Tier tier, std::size_t bytes, std::string label) {
  if (tier == Tier::nvme && nvme_ == nullptr) return std::nullopt;
  TierAccount& account = accounts_[static_cast<std::size_t>(index_of(tier))];
  if (!account.try_reserve(bytes)) return std::nullopt;
  StoragePtr storage;
  try {
    storage = make_storage(tier, bytes, label);
  } catch (...) {
    account.give_back(bytes);
    throw;
  }
  if (storage == nullptr) {  // the machine ran out before the budget did: as full as a full budget
    account.give_back(bytes);
    return std::nullopt;
  }
  // From here the storage owns the reservation and gives it back when it goes.
  Region region{tier, storage->id, bytes, std::move(label)};
  std::lock_guard lock(regions_mutex_);
  regions_.emplace(region.id, std::move(storage));
  return region;
}

std::optional<Region> RealMemory::reserve(Tier tier, std::size_t bytes, std::string label) {
  if (tier == Tier::nvme && nvme_ == nullptr) return std::nullopt;
  TierAccount& account = accounts_[static_cast<std::size_t>(index_of(tier))];
  if (!account.try_reserve(bytes)) return std::nullopt;
  StoragePtr storage;
  try {
    storage = std::make_shared<Storage>(*this, tier, next_id_.fetch_add(1), bytes, label, Storage::Kind::accounted,
                                        nullptr, 0);
  } catch (...) {
    account.give_back(bytes);
    throw;
  }
  Region region{tier, storage->id, bytes, std::move(label)};
  std::lock_guard lock(regions_mutex_);
  regions_.emplace(region.id, std::move(storage));
  return region;
}

void RealMemory::release(Region& region) {
  if (!region.valid()) return;
  StoragePtr storage;  // freed after the table lock is dropped (an nvme remove may touch the disk)
  {
    std::lock_guard lock(regions_mutex_);
    auto it = regions_.find(region.id);
    if (it == regions_.end())
      throw std::logic_error("RealMemory::release: unknown region '" + region.label + "'");
    storage = std::move(it->second);
    regions_.erase(it);
  }
  region = {};
}

RealMemory::StoragePtr RealMemory::find(std::uint64_t id) const {
  std::lock_guard lock(regions_mutex_);
  auto it = regions_.find(id);
  return it == regions_.end() ? nullptr : it->second;
}

std::byte* RealMemory::host_address(const Region& region) {
  StoragePtr storage = find(region.id);
  return storage ? storage->host() : nullptr;
}

std::byte* RealMemory::address(const Region& region) {
  StoragePtr storage = find(region.id);
  if (!storage) return nullptr;
  return storage->kind == Storage::Kind::gpu ? storage->pointer : storage->host();
}

std::vector<MoveRecord> RealMemory::moves() const {
  std::lock_guard lock(moves_mutex_);
  return moves_;
}

BufferCache& RealMemory::cache_of(Tier tier) const {
  const auto& cache = caches_[static_cast<std::size_t>(index_of(tier))];
  if (!cache) throw std::logic_error("RealMemory: the nvme tier keeps no buffers");
  return *cache;
}

std::size_t RealMemory::cached_bytes(Tier tier) const { return tier == Tier::nvme ? 0 : cache_of(tier).bytes(); }

std::size_t RealMemory::reused_buffers(Tier tier) const { return tier == Tier::nvme ? 0 : cache_of(tier).reused(); }

MoveTotals RealMemory::totals(Tier from, Tier to) const {
  std::lock_guard lock(moves_mutex_);
  return totals_[pair_index(from, to)];
}

std::string RealMemory::track_of(Tier from, Tier to) const {
  const int unit = activities_ != nullptr ? activities_->unit() : 0;
  if (from == Tier::device && to == Tier::device) return "link hbm" + std::to_string(unit);
  if (from == Tier::host && to == Tier::host) return "link dram" + std::to_string(unit);
  if (from == Tier::host && to == Tier::device) return "link h2d" + std::to_string(unit);
  if (from == Tier::device && to == Tier::host) return "link d2h" + std::to_string(unit);
  return platform::disk_track(unit);
}

WorkQueue& RealMemory::engine(Tier from, Tier to) {
  std::lock_guard lock(engines_mutex_);
  std::unique_ptr<WorkQueue>& e = engines_[pair_index(from, to)];
  if (!e) {
    std::string name = "copy " + std::string(platform::to_string(from)) + "->" + std::string(platform::to_string(to));
    std::string track = track_of(from, to);
    const bool nvme = from == Tier::nvme || to == Tier::nvme;
    const int threads = nvme && !options_.link(from, to).modelled() ? std::max(1, options_.nvme_moves_in_flight) : 1;
    e = std::make_unique<WorkQueue>(
        std::move(name), threads, board_, clock_, activities_, [track](int) { return track; },
        [this, from, to](platform::Work& w) { return run_move(w, from, to); });
  }
  return *e;
}

platform::Pending RealMemory::copy(const Region& src, const Region& dst, const platform::OpTag& cause) {
  StoragePtr s = find(src.id);
  StoragePtr d = find(dst.id);
  if (!s || !d)
    throw std::logic_error("RealMemory::copy: unknown region '" + (s ? dst.label : src.label) + "'");
  if (s->kind == Storage::Kind::accounted || d->kind == Storage::Kind::accounted)
    throw std::logic_error("RealMemory::copy: region '" + (s->kind == Storage::Kind::accounted ? src.label : dst.label) +
                           "' is a reservation and holds no bytes");
  if (s == d) return platform::Pending::ready();
  const std::size_t bytes = std::min(s->bytes, d->bytes);
  platform::Work work;
  work.label = "copy " + std::string(platform::to_string(s->tier)) + "->" + std::string(platform::to_string(d->tier)) +
               ": " + s->label + " -> " + d->label;
  work.cost = platform::Cost{platform::WorkKind::other, 0.0, static_cast<double>(bytes), 0};
  work.tag = cause;
  work.tag.role = s->tier == Tier::nvme || d->tier == Tier::nvme ? platform::ActivityRole::io
                                                                  : platform::ActivityRole::transfer;
  // The body holds both storages: a region released mid-copy stays alive until the copy ends.
  work.body = [this, s, d, bytes] { return move(*s, *d, bytes); };
  return engine(s->tier, d->tier).submit(std::move(work));
}

platform::Pending RealMemory::transfer(Tier from, Tier to, std::size_t bytes, std::string label,
                                       const platform::OpTag& cause) {
  platform::Work work;
  work.label = std::move(label);
  work.cost = platform::Cost{platform::WorkKind::other, 0.0, static_cast<double>(bytes), 0};
  work.tag = cause;
  work.tag.role = from == Tier::nvme || to == Tier::nvme ? platform::ActivityRole::io : platform::ActivityRole::transfer;
  // Time measured: the numbers already moved on their own path, so the move is over at once
  // (recorded, zero length). Links modelled: the link's duration, queued behind its copies.
  if (!options_.link(from, to).modelled()) {
    if (activities_ != nullptr) {
      const platform::Seconds now = clock_.now();
      activities_->record({track_of(from, to), std::move(work.label), work.tag, std::move(work.cost), now, now, true});
    }
    return platform::Pending::ready();
  }
  return engine(from, to).submit(std::move(work));
}

Status RealMemory::run_move(platform::Work& work, Tier from, Tier to) {
  const platform::Seconds start = clock_.now();
  const auto bytes = static_cast<std::size_t>(work.cost.bytes());
  Status status = run_body(work);
  clock_.sleep_until(start + options_.link(from, to).duration(bytes));
  const platform::Seconds end = clock_.now();
  std::lock_guard lock(moves_mutex_);
  MoveTotals& t = totals_[pair_index(from, to)];
  ++t.moves;
  if (status.ok()) t.bytes += bytes;
  else ++t.failures;
  t.seconds += end - start;
  if (moves_.size() < max_move_records) moves_.push_back({from, to, bytes, start, end, status.ok(), work.label});
  return status;
}

}  // namespace asteria::real

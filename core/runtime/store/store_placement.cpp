// First placement of blocks by policy (checked against the budgets before anything is
// allocated), the way back to storage the states own, and checkpoint reads and writes in place.
#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "core/runtime/store/state_store.hpp"

namespace asteria::runtime {

std::vector<BlockId> StateStore::unplaced_by_next_use() const {
  std::vector<BlockId> ids;
  for (BlockId id = 0; id < blocks_.size(); ++id)
    if (!blocks_[id].is_placed) ids.push_back(id);
  std::stable_sort(ids.begin(), ids.end(),
                   [&](BlockId x, BlockId y) { return distance(blocks_[x]) < distance(blocks_[y]); });
  return ids;
}

// Chooses a tier for every block in `pending` (soonest needed first) and throws PlacementError
// listing each tier that falls short before anything is allocated. The room kept free for others
// counts as needed on its tier.
void StateStore::check_budgets(const std::vector<BlockId>& pending, std::vector<Tier>& targets,
                               std::array<std::size_t, kTierCount>* left) const {
  std::array<std::size_t, kTierCount> free{};
  std::array<std::size_t, kTierCount> needed{};
  std::array<std::size_t, kTierCount> staged{};  // room to stage the largest block for its update
  for (Tier t : {Tier::device, Tier::host, Tier::nvme}) {
    free[index(t)] = free_bytes(t);
    needed[index(t)] = kept_free(t);
  }
  // Unified memory: what device and host may still take together, less what is kept free.
  const std::optional<platform::TierUsage> pool = memory_.shared_pool();
  std::size_t pool_free = std::numeric_limits<std::size_t>::max();
  if (pool) {
    const std::size_t taken = pool->resident + kept_free(Tier::device) + kept_free(Tier::host);
    pool_free = pool->capacity > taken ? pool->capacity - taken : 0;
    const std::size_t room = device_room_in_pool();
    pool_free = pool_free > room ? pool_free - room : 0;
  }
  std::size_t total = 0;
  targets.assign(pending.size(), Tier::device);
  for (std::size_t i = 0; i < pending.size(); ++i) {
    const Block& b = blocks_[pending[i]];
    total += b.bytes;
    switch (options_.policy) {
      case PlacementPolicy::device:
      case PlacementPolicy::host:
      case PlacementPolicy::nvme:
      case PlacementPolicy::planned:
        targets[i] = b.home;
        needed[index(b.home)] += b.bytes;
        // Staged updates need room for at least the largest such block.
        if (b.update != b.home) staged[index(b.update)] = std::max(staged[index(b.update)], b.bytes);
        break;
      case PlacementPolicy::tiered: {
        // Soonest needed on the device, then the host, then NVMe; each must fit on the device
        // alone when its turn comes (the rest of the device can be evicted).
        staged[index(Tier::device)] = std::max(staged[index(Tier::device)], b.bytes);
        Tier chosen = Tier::nvme;
        for (Tier t : {Tier::device, Tier::host})
          if (free[index(t)] >= b.bytes && pool_free >= b.bytes) {
            chosen = t;
            break;
          }
        targets[i] = chosen;
        if (chosen != Tier::nvme) {
          free[index(chosen)] -= b.bytes;
          if (pool) pool_free -= b.bytes;
        }
        else needed[index(Tier::nvme)] += b.bytes;
        break;
      }
    }
  }
  // Blocks acquired together are staged together: each set's blocks that do not rest where
  // they are updated (under tiered, every block: the device's resting copies make way) must fit
  // there at once.
  for (const std::vector<BlockId>& set : held_together_) {
    std::array<std::size_t, kTierCount> together{};
    for (const BlockId id : set) {
      const Block& b = blocks_[id];
      if (options_.policy == PlacementPolicy::tiered) together[index(Tier::device)] += b.bytes;
      else if (b.update != b.home) together[index(b.update)] += b.bytes;
    }
    for (Tier t : {Tier::device, Tier::host, Tier::nvme}) staged[index(t)] = std::max(staged[index(t)], together[index(t)]);
  }
  std::vector<TierShortfall> shortfalls;
  for (Tier t : {Tier::device, Tier::host, Tier::nvme}) {
    const platform::TierUsage u = memory_.usage(t);
    std::size_t available = u.capacity > u.resident ? u.capacity - u.resident : 0;
    // Under the tiered policy the store's own device copies can make way for the largest block.
    if (options_.policy == PlacementPolicy::tiered && t == Tier::device) available += store_resident(t);
    needed[index(t)] += staged[index(t)];
    if (needed[index(t)] > available)
      shortfalls.push_back({t, needed[index(t)], available, memory_.usage(t).capacity});
    // What stays free: past what the policies rest and stage there, and (tiered) what the blocks
    // placed there took.
    if (left != nullptr)
      (*left)[index(t)] = std::min(available > needed[index(t)] ? available - needed[index(t)] : 0,
                                   free[index(t)] > staged[index(t)] ? free[index(t)] - staged[index(t)] : 0);
  }
  // Unified memory: device and host each within their budget is not enough; together within
  // the one pool as well (what the platform's allocations would refuse at step 1).
  if (pool) {
    std::size_t available = pool->capacity > pool->resident ? pool->capacity - pool->resident : 0;
    if (options_.policy == PlacementPolicy::tiered) available += store_resident(Tier::device);
    const std::size_t together = needed[index(Tier::device)] + needed[index(Tier::host)];
    if (together > available) {
      TierShortfall s{Tier::host, together, available, pool->capacity};
      s.shared_pool = true;
      shortfalls.push_back(s);
    }
    if (left != nullptr) {
      const std::size_t pool_left = available > together ? available - together : 0;
      for (Tier t : {Tier::device, Tier::host}) (*left)[index(t)] = std::min((*left)[index(t)], pool_left);
    }
  }
  if (shortfalls.empty()) return;
  std::string what = "the " + std::string(to_string(options_.policy)) + " policy cannot place " +
                     std::to_string(pending.size()) + " blocks (" + std::to_string(total) + " B)";
  if (set_aside_ != nullptr && set_aside_->unused() > 0)
    what += " and keep " + std::to_string(set_aside_->unused()) + " B of " +
            std::string(platform::to_string(set_aside_->tier())) + " memory for " + set_aside_->purpose();
  throw PlacementError(what, std::move(shortfalls));
}

std::size_t StateStore::room_after_placement(Tier tier) const {
  std::vector<Tier> targets;
  std::array<std::size_t, kTierCount> left{};
  check_budgets(unplaced_by_next_use(), targets, &left);
  return left[index(tier)];
}

void StateStore::place() {
  const std::vector<BlockId> pending = unplaced_by_next_use();
  std::vector<Tier> targets;
  check_budgets(pending, targets);
  if (memory_.shared_pool()) pool_device_room_ = device_room_in_pool();
  // NVMe-bound blocks first: they are staged through host or device memory, which is still
  // free before the other blocks take it.
  for (std::size_t i = 0; i < pending.size(); ++i)
    if (targets[i] == Tier::nvme) place_on_nvme(blocks_[pending[i]]);
  for (std::size_t i = 0; i < pending.size(); ++i)
    if (targets[i] != Tier::nvme) place_block(blocks_[pending[i]], targets[i]);
  all_placed_ = true;
  refill_window();
}

void StateStore::place_block(Block& b, Tier tier) {
  if (b.bytes == 0) {  // nothing to hold: usable wherever the update runs
    set_primary(b, b.update);
    b.is_placed = true;
    return;
  }
  std::optional<platform::Region> region = memory_.allocate(tier, b.bytes, b.label);
  if (!region)
    throw PlacementError("no room for block '" + b.label + "'",
                         {TierShortfall{tier, b.bytes, free_bytes(tier), memory_.usage(tier).capacity}});
  platform::Allocation allocation(memory_, std::move(*region));
  std::byte* address = allocation.address();
  if (address == nullptr && memory_.holds_data())
    throw Error("state store: block '" + b.label + "': " + std::string(platform::to_string(tier)) +
                " memory has no address on this platform, so the state cannot be used there");
  if (memory_.holds_data() && allocation.host_address() == nullptr) {
    // Memory the host cannot address (a GPU's): the values go there by the memory's own copy.
    const Status status = memory_.write(allocation.region(), {b.state->data(), b.bytes});
    if (!status.ok()) throw TransferError(b.label, Tier::host, tier, status);
    b.state->attach(address);
  } else {
    b.state->rebind(address);
  }
  b.copies[index(tier)] = std::move(allocation);
  b.fresh[index(tier)] = true;
  set_primary(b, tier);
  b.is_placed = true;
}

namespace {
// A host-addressable tier with room for `bytes`, host first.
std::optional<Tier> staging_tier(platform::Memory& memory, std::size_t bytes) {
  for (Tier t : {Tier::host, Tier::device}) {
    const platform::TierUsage u = memory.usage(t);
    if (u.capacity >= u.resident && u.capacity - u.resident >= bytes) return t;
  }
  return std::nullopt;
}

std::vector<TierShortfall> staging_shortfalls(platform::Memory& memory, std::size_t bytes) {
  std::vector<TierShortfall> s;
  for (Tier t : {Tier::host, Tier::device}) {
    const platform::TierUsage u = memory.usage(t);
    s.push_back({t, bytes, u.capacity > u.resident ? u.capacity - u.resident : 0, u.capacity});
  }
  return s;
}
}  // namespace

// A staging region for moving a block's bytes to or from NVMe, checked to be host-addressable.
platform::Allocation StateStore::allocate_staging(platform::Memory& memory, Tier tier, const Block& b) {
  std::optional<platform::Region> region = memory.allocate(tier, b.bytes, b.label + " (staging)");
  if (!region)
    throw PlacementError("no memory to stage block '" + b.label + "' to or from NVMe",
                         staging_shortfalls(memory, b.bytes));
  platform::Allocation staging(memory, std::move(*region));
  if (staging.host_address() == nullptr && memory.holds_data())
    throw Error("state store: block '" + b.label + "': " + std::string(platform::to_string(tier)) +
                " memory is not host-addressable, so it cannot stage the block to or from NVMe");
  return staging;
}

// The copy the state is attached to when the host cannot address it (GPU memory); null when
// the state's bytes are in host memory (its own storage, or a host-addressable region).
const platform::Allocation* StateStore::unaddressable_copy(const Block& b) const {
  if (!b.is_placed || b.bytes == 0 || !b.state->resident() || b.primary == Tier::nvme || !memory_.holds_data())
    return nullptr;
  const platform::Allocation& copy = b.copies[index(b.primary)];
  if (!copy.valid() || copy.host_address() != nullptr) return nullptr;
  return &copy;
}

// NVMe regions have no host address: the bytes go through a staging region.
void StateStore::place_on_nvme(Block& b) {
  if (b.bytes == 0) {
    place_block(b, Tier::nvme);
    return;
  }
  std::optional<platform::Region> nvme_region = memory_.allocate(Tier::nvme, b.bytes, b.label);
  if (!nvme_region)
    throw PlacementError("no room for block '" + b.label + "'",
                         {TierShortfall{Tier::nvme, b.bytes, free_bytes(Tier::nvme),
                                        memory_.usage(Tier::nvme).capacity}});
  platform::Allocation nvme(memory_, std::move(*nvme_region));
  const std::optional<Tier> via = staging_tier(memory_, b.bytes);
  if (!via)
    throw PlacementError("no memory to stage block '" + b.label + "' onto NVMe", staging_shortfalls(memory_, b.bytes));
  platform::Allocation staging = allocate_staging(memory_, *via, b);
  b.state->rebind(staging.host_address());
  const Seconds start = platform_.clock().now();
  const Status status = memory_.copy(staging.region(), nvme.region(), cause_).status();
  ledger_.record({static_cast<BlockId>(&b - blocks_.data()), *via, Tier::nvme, b.bytes, start,
                  platform_.clock().now(), MoveReason::placement, status.ok()});
  if (!status.ok()) {
    b.state->adopt_owned_storage();  // intact, in its own storage again
    throw TransferError(b.label, *via, Tier::nvme, status);
  }
  b.state->evict();
  b.copies[index(Tier::nvme)] = std::move(nvme);
  b.fresh[index(Tier::nvme)] = true;
  set_primary(b, Tier::nvme);
  b.is_placed = true;
}

void StateStore::unplace() {
  drain();
  for (const Block& b : blocks_)
    if (b.is_acquired) throw std::logic_error("StateStore::unplace: block '" + b.label + "' is in use");
  // Blocks on NVMe last: reading them back needs staging memory the others are freeing.
  for (bool nvme_pass : {false, true})
    for (Block& b : blocks_)
      if (b.is_placed && (b.primary == Tier::nvme) == nvme_pass) unplace_block(b);
  all_placed_ = blocks_.empty();
  cursor_ = -1;
}

void StateStore::unplace_block(Block& b) {
  if (b.bytes > 0 && b.primary == Tier::nvme) {
    const std::optional<Tier> via = staging_tier(memory_, b.bytes);
    if (!via)
      throw PlacementError("no memory to read block '" + b.label + "' back from NVMe",
                           staging_shortfalls(memory_, b.bytes));
    platform::Allocation staging = allocate_staging(memory_, *via, b);
    const Seconds start = platform_.clock().now();
    const Status status = memory_.copy(b.copies[index(Tier::nvme)].region(), staging.region(), cause_).status();
    ledger_.record({static_cast<BlockId>(&b - blocks_.data()), Tier::nvme, *via, b.bytes, start,
                    platform_.clock().now(), MoveReason::placement, status.ok()});
    if (!status.ok()) throw TransferError(b.label, Tier::nvme, *via, status);
    b.state->attach(staging.host_address());
    b.state->adopt_owned_storage();
  } else if (const platform::Allocation* copy = unaddressable_copy(b)) {
    std::vector<std::byte> bytes(b.bytes);
    const Status status = memory_.read(copy->region(), bytes);
    if (!status.ok()) throw TransferError(b.label, b.primary, Tier::host, status);
    b.state->adopt(bytes);
  } else {
    b.state->adopt_owned_storage();
  }
  for (std::size_t t = 0; t < kTierCount; ++t) {
    b.copies[t].reset();
    b.fresh[t] = false;
  }
  b.is_placed = false;
  b.is_acquired = false;
  b.keep_staged = false;
  set_wanted(b, false);
}

// Checkpoints read and write a block where it rests, so that state larger than memory is saved
// and restored one block at a time. Off NVMe the bytes go through a staging region.
// A tier with room to stage `bytes` off NVMe, evicting other blocks to make it when memory is
// full (as a run at its budgets is): the blocks' placement changes, their bytes do not.
std::optional<Tier> StateStore::checkpoint_staging(std::size_t bytes) {
  if (std::optional<Tier> via = staging_tier(memory_, bytes)) return via;
  for (Tier tier : {Tier::host, Tier::device}) {
    make_room(tier, bytes, 0);  // false also while the evictions it started are under way
    drain();
    if (std::optional<Tier> via = staging_tier(memory_, bytes)) return via;
  }
  return std::nullopt;
}

void StateStore::read(BlockId id, std::span<std::byte> out) {
  Block& b = at(id);
  if (b.is_acquired) throw std::logic_error("StateStore::read: block '" + b.label + "' is in use");
  if (out.size() != b.bytes) throw std::invalid_argument("StateStore::read: " + std::to_string(out.size()) +
                                                         " bytes for block '" + b.label + "' of " + std::to_string(b.bytes));
  drain();
  if (b.bytes == 0) return;
  if (b.state->resident()) {
    if (const platform::Allocation* copy = unaddressable_copy(b)) {
      const Status status = memory_.read(copy->region(), out);
      if (!status.ok()) throw TransferError(b.label, b.primary, Tier::host, status);
      return;
    }
    std::memcpy(out.data(), b.state->data(), b.bytes);
    return;
  }
  const std::optional<Tier> via = checkpoint_staging(b.bytes);
  if (!via)
    throw PlacementError("no memory to read block '" + b.label + "' from NVMe", staging_shortfalls(memory_, b.bytes));
  platform::Allocation staging = allocate_staging(memory_, *via, b);
  const Status status = memory_.copy(b.copies[index(Tier::nvme)].region(), staging.region(), cause_).status();
  if (!status.ok()) throw TransferError(b.label, Tier::nvme, *via, status);
  std::memcpy(out.data(), staging.host_address(), b.bytes);
}

void StateStore::write(BlockId id, std::span<const std::byte> bytes) {
  Block& b = at(id);
  if (b.is_acquired) throw std::logic_error("StateStore::write: block '" + b.label + "' is in use");
  if (bytes.size() != b.bytes)
    throw std::invalid_argument("StateStore::write: " + std::to_string(bytes.size()) + " bytes for block '" + b.label +
                                "' of " + std::to_string(b.bytes));
  drain();
  if (b.bytes == 0) return;
  if (const platform::Allocation* copy = b.state->resident() ? unaddressable_copy(b) : nullptr) {
    const Status status = memory_.write(copy->region(), bytes);
    if (!status.ok()) throw TransferError(b.label, Tier::host, b.primary, status);
  } else if (b.state->resident()) {
    std::memcpy(b.state->data(), bytes.data(), b.bytes);
  } else {
    const std::optional<Tier> via = checkpoint_staging(b.bytes);
    if (!via)
      throw PlacementError("no memory to write block '" + b.label + "' to NVMe", staging_shortfalls(memory_, b.bytes));
    platform::Allocation staging = allocate_staging(memory_, *via, b);
    std::memcpy(staging.host_address(), bytes.data(), b.bytes);
    const Status status = memory_.copy(staging.region(), b.copies[index(Tier::nvme)].region(), cause_).status();
    if (!status.ok()) throw TransferError(b.label, *via, Tier::nvme, status);
  }
  // The copy written is the current one: any other is stale now.
  const Tier current = b.state->resident() ? b.primary : Tier::nvme;
  for (std::size_t t = 0; t < kTierCount; ++t)
    if (t != index(current)) b.fresh[t] = false;
  b.fresh[index(current)] = true;
}

}  // namespace asteria::runtime

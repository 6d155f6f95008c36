// The store's hooks and inspection; placement is in store_placement.cpp, moves in
// store_moves.cpp.
#include "core/runtime/store/state_store.hpp"

#include <algorithm>
#include <stdexcept>

namespace asteria::runtime {

StateStore::StateStore(platform::Platform& platform, StoreOptions options)
    : platform_(platform), memory_(platform.memory()), options_(options) {
  if (options_.lookahead < 0)
    throw InputError("state store options", "lookahead",
                     "expected a count >= 0, found " + std::to_string(options_.lookahead));
  if (options_.nvme_update_tier == Tier::nvme)
    throw InputError("state store options", "nvme_update_tier", "expected host or device, found nvme");
}

StateStore::~StateStore() {
  // Regions must not be released under a copy in flight. Each failed drain() settles one
  // failed move, so this loop ends.
  for (;;) {
    try {
      drain();
      break;
    } catch (...) {
    }
  }
  for (bool nvme_pass : {false, true})  // NVMe last: their read-back needs the staging memory
    for (Block& b : blocks_) {
      if (!b.is_placed || (b.primary == Tier::nvme) != nvme_pass) continue;
      try {
        unplace_block(b);
      } catch (...) {
        // The bytes could not come back: leave the state evicted rather than pointing into a
        // region about to be released.
        try {
          b.state->evict();
        } catch (...) {
        }
      }
    }
}

BlockId StateStore::add(Relocatable& state, std::string label, BlockOptions options) {
  if (!state.resident())
    throw std::invalid_argument("StateStore::add: the state of block '" + label + "' is not resident");
  Block b;
  b.state = &state;
  b.label = std::move(label);
  b.bytes = state.bytes();
  switch (options_.policy) {
    case PlacementPolicy::device:
    case PlacementPolicy::tiered:
      b.home = Tier::device;
      b.update = Tier::device;
      break;
    case PlacementPolicy::host:
      b.home = Tier::host;
      b.update = options.update_on_device ? Tier::device : Tier::host;
      break;
    case PlacementPolicy::nvme:
      b.home = Tier::nvme;
      b.update = options.update_on_device ? Tier::device : options_.nvme_update_tier;
      break;
    case PlacementPolicy::planned:
      if (options.home == Tier::device && !options.update_on_device)
        throw InputError("state store", "block '" + b.label + "'",
                         "a host or nvme home for an update on the host (a device home with a host update "
                         "would move the state across the link both ways for nothing)");
      b.home = options.home;
      b.update = options.update_on_device ? Tier::device : Tier::host;
      break;
  }
  const BlockId id = blocks_.size();
  b.primary_slot = primary_on_[index(b.primary)].size();
  primary_on_[index(b.primary)].push_back(id);
  blocks_.push_back(std::move(b));
  all_placed_ = false;
  return id;
}

void StateStore::set_held_together(std::vector<std::vector<BlockId>> sets) {
  for (const std::vector<BlockId>& set : sets)
    for (const BlockId id : set)
      if (id >= blocks_.size())
        throw InputError("state store", "held together", "block id " + std::to_string(id) + " was never added");
  held_together_ = std::move(sets);
}

void StateStore::set_use_order(std::vector<BlockId> order) {
  std::vector<std::ptrdiff_t> position(blocks_.size(), -1);
  for (std::size_t i = 0; i < order.size(); ++i) {
    const BlockId id = order[i];
    if (id >= blocks_.size())
      throw InputError("state store", "use order", "block id " + std::to_string(id) + " was never added");
    if (position[id] >= 0)
      throw InputError("state store", "use order", "block '" + blocks_[id].label + "' is listed twice");
    position[id] = static_cast<std::ptrdiff_t>(i);
  }
  for (std::size_t id = 0; id < blocks_.size(); ++id) blocks_[id].use_position = position[id];
  order_ = std::move(order);
  cursor_ = -1;
  wanted_.clear();  // keyed by use position: rebuild
  for (const Block& b : blocks_)
    if (b.wanted) wanted_.insert(wanted_key(b));
}

platform::Pending StateStore::prefetch(BlockId id) {
  Block& b = at(id);
  if (!all_placed_) place();
  complete_finished();
  // Never ahead of a sooner block still waiting for room: this one would take that room, and the
  // sooner load would then evict it again before its use (a second read in the same step).
  if (refill_window() < distance(b) && needs_load(b)) {
    set_wanted(b, true);
    return {};
  }
  return prefetch_within(id, distance(b));
}

Seconds StateStore::acquire(BlockId id) {
  Block& b = at(id);
  if (b.is_acquired) throw std::logic_error("StateStore::acquire: block '" + b.label + "' is already acquired");
  if (!all_placed_) place();
  if (b.use_position >= 0) cursor_ = b.use_position;
  set_wanted(b, false);
  const Seconds start = platform_.clock().now();
  for (;;) {
    complete_finished();
    if (ready_for_update(b)) break;
    if (b.transfer) {
      // Its own move must end first: a load to finish, an eviction before it comes back, a
      // write-back before the update may change the bytes it reads (then keep the copy).
      if (b.transfer->reason == MoveReason::write_back) b.keep_staged = true;
      wait_for_any();
      continue;
    }
    if (try_start_load(id, 0)) continue;
    if (moving_.empty()) throw_no_room(b);
    wait_for_any();  // room comes when an eviction or write-back finishes
  }
  b.is_acquired = true;
  b.keep_staged = false;
  const Seconds waited = platform_.clock().now() - start;
  ledger_.add_wait(waited);
  refill_window();
  return waited;
}

void StateStore::release(BlockId id, bool dirty) {
  Block& b = at(id);
  if (!b.is_acquired) throw std::logic_error("StateStore::release: block '" + b.label + "' is not acquired");
  b.is_acquired = false;
  if (dirty)
    for (std::size_t t = 0; t < kTierCount; ++t)
      if (t != index(b.primary)) b.fresh[t] = false;
  finish_release(id);
  complete_finished();
  refill_window();
}

void StateStore::poll() {
  complete_finished();
  refill_window();
}

void StateStore::drain() {
  while (!moving_.empty()) {
    wait_for_any();
    complete_finished();
  }
}

StoreStepStats StateStore::end_step() {
  StoreStepStats stats;
  for (Tier t : {Tier::device, Tier::host, Tier::nvme}) {
    stats.usage[index(t)] = memory_.usage(t);
    stats.store_resident[index(t)] = store_resident(t);
  }
  ledger_.take_step(stats);
  return stats;
}

Tier StateStore::update_tier(BlockId id) const { return at(id).update; }
Tier StateStore::home_tier(BlockId id) const { return at(id).home; }
Tier StateStore::location(BlockId id) const {
  const Block& b = at(id);
  return b.is_placed ? b.primary : Tier::host;  // unplaced: in the state's own (host) storage
}
bool StateStore::has_copy_on(BlockId id, Tier tier) const { return at(id).copies[index(tier)].valid(); }
bool StateStore::acquired(BlockId id) const { return at(id).is_acquired; }
bool StateStore::placed(BlockId id) const { return at(id).is_placed; }
bool StateStore::in_flight(BlockId id) const { return at(id).transfer.has_value(); }
const std::string& StateStore::label(BlockId id) const { return at(id).label; }
std::size_t StateStore::bytes(BlockId id) const { return at(id).bytes; }

std::size_t StateStore::store_resident(Tier tier) const {
  std::size_t sum = 0;
  for (const Block& b : blocks_)
    if (b.copies[index(tier)].valid()) sum += b.copies[index(tier)].region().bytes;
  return sum;
}

StateStore::Block& StateStore::at(BlockId id) {
  if (id >= blocks_.size()) throw std::out_of_range("StateStore: unknown block id " + std::to_string(id));
  return blocks_[id];
}

const StateStore::Block& StateStore::at(BlockId id) const {
  if (id >= blocks_.size()) throw std::out_of_range("StateStore: unknown block id " + std::to_string(id));
  return blocks_[id];
}

std::size_t StateStore::kept_free(Tier tier) const {
  return set_aside_ != nullptr && set_aside_->tier() == tier ? set_aside_->unused() : 0;
}

std::size_t StateStore::free_bytes(Tier tier) const {
  const platform::TierUsage u = memory_.usage(tier);
  const std::size_t taken = u.resident + kept_free(tier);
  const std::size_t own = u.capacity > taken ? u.capacity - taken : 0;
  if (tier == Tier::nvme) return own;
  // Unified memory: what either tier takes comes out of the one pool, where both keep room.
  const std::optional<platform::TierUsage> pool = memory_.shared_pool();
  if (!pool) return own;
  std::size_t pool_taken = pool->resident + kept_free(Tier::device) + kept_free(Tier::host);
  // The host never takes the device's room for the update it fetches blocks into (fixed at
  // placement: free_bytes runs on every move).
  if (tier == Tier::host) pool_taken += pool_device_room_;
  return std::min(own, pool->capacity > pool_taken ? pool->capacity - pool_taken : 0);
}

std::size_t StateStore::device_room_in_pool() const {
  // Tiered: the device fetches each block (or set held together) for its update into the pool
  // that rests the others; the largest must always find room there.
  if (options_.policy != PlacementPolicy::tiered) return 0;
  std::size_t largest = 0;
  for (const Block& b : blocks_) largest = std::max(largest, b.bytes);
  for (const std::vector<BlockId>& set : held_together_) {
    std::size_t together = 0;
    for (const BlockId id : set) together += blocks_[id].bytes;
    largest = std::max(largest, together);
  }
  return largest;
}

std::size_t StateStore::distance(const Block& b) const {
  if (b.use_position < 0 || order_.empty()) return kNeverUsed;
  if (cursor_ < 0) return static_cast<std::size_t>(b.use_position) + 1;
  std::ptrdiff_t d = b.use_position - cursor_;
  if (d <= 0) d += static_cast<std::ptrdiff_t>(order_.size());  // next step
  return static_cast<std::size_t>(d);
}

void StateStore::set_primary(Block& b, Tier tier) {
  if (b.primary == tier) return;
  const BlockId id = static_cast<BlockId>(&b - blocks_.data());
  std::vector<BlockId>& from = primary_on_[index(b.primary)];
  blocks_[from.back()].primary_slot = b.primary_slot;
  from[b.primary_slot] = from.back();
  from.pop_back();
  std::vector<BlockId>& to = primary_on_[index(tier)];
  b.primary_slot = to.size();
  to.push_back(id);
  b.primary = tier;
}

// Blocks never used sort after all others; among used ones, by use position.
std::pair<std::size_t, BlockId> StateStore::wanted_key(const Block& b) const {
  const BlockId id = static_cast<BlockId>(&b - blocks_.data());
  if (b.use_position < 0 || order_.empty()) return {kNeverUsed, id};
  return {static_cast<std::size_t>(b.use_position), id};
}

void StateStore::set_wanted(Block& b, bool wanted) {
  if (b.wanted == wanted) return;
  b.wanted = wanted;
  if (wanted) wanted_.insert(wanted_key(b));
  else wanted_.erase(wanted_key(b));
}

bool StateStore::ready_for_update(const Block& b) const {
  return b.is_placed && !b.transfer && b.primary == b.update;
}

}  // namespace asteria::runtime

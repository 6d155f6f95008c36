// Moves of block bytes between tiers: starting copies, finishing them, making room by evicting
// the block whose next use is farthest (Belady), and prefetching ahead of use.
#include <algorithm>

#include "core/runtime/store/state_store.hpp"

namespace asteria::runtime {

void StateStore::attach_to(Block& b, Tier tier) {
  if (tier == Tier::nvme) {
    b.state->evict();
    return;
  }
  // The address the tier's math device uses (GPU memory's own on a GPU).
  b.state->attach(memory_.address(b.copies[index(tier)].region()));
}

platform::Pending StateStore::start_move(BlockId id, Tier from, Tier to, MoveReason reason) {
  Block& b = blocks_[id];
  bool allocated_here = false;
  if (!b.copies[index(to)].valid()) {
    std::optional<platform::Region> region = memory_.allocate(to, b.bytes, b.label);
    if (!region) return {};
    b.copies[index(to)] = platform::Allocation(memory_, std::move(*region));
    allocated_here = true;
    // The update reads the bytes where the tier's math device addresses them: a tier without
    // an address can hold a block only as a saved copy.
    if (to != Tier::nvme && b.bytes > 0 && memory_.holds_data() &&
        memory_.address(b.copies[index(to)].region()) == nullptr) {
      b.copies[index(to)].reset();
      throw Error("state store: block '" + b.label + "': " + std::string(platform::to_string(to)) +
                  " memory has no address on this platform, so the state cannot be used there");
    }
  }
  platform::Pending done;
  try {
    done = memory_.copy(b.copies[index(from)].region(), b.copies[index(to)].region(), cause_);
  } catch (...) {
    if (allocated_here) b.copies[index(to)].reset();
    throw;
  }
  b.fresh[index(to)] = false;  // until the copy is known to have succeeded
  b.transfer = Transfer{from, to, reason, done, platform_.clock().now()};
  moving_.push_back(id);
  return done;
}

bool StateStore::try_start_load(BlockId id, std::size_t evict_farther_than) {
  Block& b = blocks_[id];
  if (!make_room(b.update, b.bytes, evict_farther_than)) return false;
  return start_move(id, b.primary, b.update, MoveReason::load).valid();
}

// A copy that may leave `tier` to make room: not in use, not moving, and not the block's only
// resting place (the device policy has nowhere else; static policies keep their home).
bool StateStore::evictable(const Block& b, Tier tier) const {
  if (!b.is_placed || b.is_acquired || b.transfer || b.primary != tier || b.bytes == 0) return false;
  if (dynamic()) return tier == Tier::device;
  return tier != b.home;
}

std::size_t StateStore::freeing_bytes(Tier tier) const {
  std::size_t sum = 0;
  for (BlockId id : moving_) {
    const Block& b = blocks_[id];
    const Transfer& tr = *b.transfer;
    const bool frees_source = tr.reason == MoveReason::eviction ||
                              (tr.reason == MoveReason::write_back && !b.keep_staged && !b.is_acquired);
    if (tr.from == tier && frees_source) sum += b.bytes;
  }
  return sum;
}

bool StateStore::make_room(Tier tier, std::size_t bytes, std::size_t evict_farther_than) {
  std::size_t free = free_bytes(tier);
  if (free >= bytes) return true;
  std::size_t freeing = freeing_bytes(tier);
  if (free + freeing >= bytes) return false;  // enough is on its way out

  // Belady: the block needed last goes first; blocks outside the use order are needed last (in
  // id order). Only copies primary on the tier can leave it; collect as many as the room needs.
  // If even all of them cannot make it, keep what is there rather than move it for nothing.
  std::vector<std::pair<std::size_t, BlockId>> candidates;  // (distance, id)
  for (BlockId id : primary_on_[index(tier)]) {
    const Block& b = blocks_[id];
    if (!evictable(b, tier)) continue;
    const std::size_t d = distance(b);
    if (d > evict_farther_than) candidates.emplace_back(d, id);
  }
  // Farthest first (never-used blocks by id); a heap, as a few victims usually suffice.
  const auto nearer = [](const auto& x, const auto& y) {
    return x.first != y.first ? x.first < y.first : x.second > y.second;
  };
  std::make_heap(candidates.begin(), candidates.end(), nearer);
  std::vector<BlockId> victims;
  std::size_t collected = 0;
  for (auto end = candidates.end(); end != candidates.begin() && free + freeing + collected < bytes; --end) {
    std::pop_heap(candidates.begin(), end, nearer);
    const BlockId id = (end - 1)->second;
    victims.push_back(id);
    collected += blocks_[id].bytes;
  }
  if (free + freeing + collected < bytes) return false;
  for (BlockId victim : victims) {
    if (free + freeing >= bytes) break;
    std::size_t freed_now = 0;
    if (start_eviction(victim, freed_now)) {
      free += freed_now;
      freeing += blocks_[victim].bytes - freed_now;
    }
  }
  return free_bytes(tier) >= bytes;
}

bool StateStore::start_eviction(BlockId victim, std::size_t& freed_now) {
  Block& v = blocks_[victim];
  if (!dynamic()) {
    // A staged copy: dropped at once when the home copy is current, else written back first.
    if (v.fresh[index(v.home)]) {
      drop_staged(v);
      freed_now = v.bytes;
      return true;
    }
    return start_move(victim, v.primary, v.home, MoveReason::write_back).valid();
  }
  // Down to the host, or to NVMe when the host is full.
  for (Tier to : {Tier::host, Tier::nvme})
    if (free_bytes(to) >= v.bytes && start_move(victim, v.primary, to, MoveReason::eviction).valid()) return true;
  return false;
}

void StateStore::finish_release(BlockId id) {
  Block& b = blocks_[id];
  if (dynamic() || b.primary == b.home) return;  // tiered blocks stay until room is needed
  if (b.fresh[index(b.home)]) {
    drop_staged(b);  // clean: the home copy is still current
    return;
  }
  b.keep_staged = false;
  if (!start_move(id, b.primary, b.home, MoveReason::write_back).valid())
    throw std::logic_error("state store: the home copy of block '" + b.label + "' vanished");
}

void StateStore::drop_staged(Block& b) {
  const Tier staged = b.primary;
  attach_to(b, b.home);
  set_primary(b, b.home);
  b.copies[index(staged)].reset();
  b.fresh[index(staged)] = false;
}

void StateStore::complete(BlockId id) {
  Block& b = blocks_[id];
  const Transfer tr = *b.transfer;
  b.transfer.reset();
  moving_.erase(std::find(moving_.begin(), moving_.end(), id));
  const Status status = tr.done.status();
  ledger_.record({id, tr.from, tr.to, b.bytes, tr.start, platform_.clock().now(), tr.reason, status.ok()});
  if (!status.ok()) {
    // The source copy is untouched and the state still attached to it; drop the half-written
    // destination unless it is the block's home copy (then it is merely stale).
    if (tr.reason != MoveReason::write_back) b.copies[index(tr.to)].reset();
    b.keep_staged = false;
    throw TransferError(b.label, tr.from, tr.to, status);
  }
  b.fresh[index(tr.to)] = true;
  switch (tr.reason) {
    case MoveReason::load:
      attach_to(b, tr.to);
      set_primary(b, tr.to);
      if (dynamic()) {  // the block moved: one copy only
        b.copies[index(tr.from)].reset();
        b.fresh[index(tr.from)] = false;
      }
      break;
    case MoveReason::eviction:
      attach_to(b, tr.to);
      set_primary(b, tr.to);
      b.copies[index(tr.from)].reset();
      b.fresh[index(tr.from)] = false;
      break;
    case MoveReason::write_back:
      if (!b.keep_staged && !b.is_acquired) drop_staged(b);
      b.keep_staged = false;
      break;
    case MoveReason::placement:
      break;
  }
}

bool StateStore::complete_finished() {
  std::vector<BlockId> finished;
  for (BlockId id : moving_)
    if (blocks_[id].transfer->done.test()) finished.push_back(id);
  for (BlockId id : finished) complete(id);  // a failure throws; the rest wait for the next call
  return !finished.empty();
}

void StateStore::wait_for_any() {
  std::vector<platform::Pending> pendings;
  pendings.reserve(moving_.size());
  for (BlockId id : moving_) pendings.push_back(blocks_[id].transfer->done);
  platform_.completions().wait_any(pendings);
}

platform::Pending StateStore::prefetch_within(BlockId id, std::size_t evict_farther_than) {
  Block& b = blocks_[id];
  if (b.transfer) {
    switch (b.transfer->reason) {
      case MoveReason::write_back:
        b.keep_staged = true;  // needed again soon: keep the staged copy
        return b.transfer->done;
      case MoveReason::load:
        return b.transfer->done;
      default:
        set_wanted(b, true);  // on its way down; comes back once there
        return {};
    }
  }
  if (b.primary == b.update) {
    set_wanted(b, false);
    return platform::Pending::ready();
  }
  if (try_start_load(id, evict_farther_than)) {
    set_wanted(b, false);
    return b.transfer->done;
  }
  set_wanted(b, true);
  return {};
}

bool StateStore::needs_load(const Block& b) const {
  return b.is_placed && !b.transfer && b.primary != b.update && b.bytes > 0;
}

std::size_t StateStore::refill_window() {
  if (!all_placed_) return kNeverUsed;
  // The next `lookahead` uses, soonest first. A block that must wait for room stops the loads
  // there, so a later block never takes the room a sooner one needs; the later blocks' room is
  // still made now (their victims' write-backs or evictions start, never of a block needed
  // before them), so that several moves off the tier are in flight while the sooner blocks
  // wait, and the write-back stream does not idle between one block's move and the next.
  const std::size_t n = order_.size();
  const std::size_t window = std::min(static_cast<std::size_t>(options_.lookahead), n);
  std::array<std::size_t, kTierCount> claimed{};  // room the waiting window blocks need, per tier
  std::size_t waiting = kNeverUsed;  // distance of the first block that waits
  for (std::size_t k = 1; k <= window; ++k) {
    const std::size_t position = cursor_ < 0 ? k - 1 : (static_cast<std::size_t>(cursor_) + k) % n;
    const BlockId id = order_[position];
    Block& b = blocks_[id];
    if (b.is_acquired) continue;
    if (waiting == kNeverUsed) {
      const bool loads = needs_load(b);
      const bool started = prefetch_within(id, distance(b)).valid();
      set_wanted(b, false);  // the window retries it anyway
      if (started) continue;
      waiting = distance(b);
      if (loads) claimed[index(b.update)] += b.bytes;
      continue;
    }
    if (!needs_load(b)) continue;
    claimed[index(b.update)] += b.bytes;
    make_room(b.update, claimed[index(b.update)], distance(b));
  }
  if (waiting != kNeverUsed) return waiting;
  // Then explicit prefetches still waiting, soonest first: use positions after the cursor, then
  // up to it (next step), then blocks never used. A prefetch may take its own block out of the
  // set, so step past it first.
  const std::size_t after = cursor_ < 0 ? 0 : static_cast<std::size_t>(cursor_) + 1;
  const auto visit = [&](auto it, std::size_t below) {
    while (it != wanted_.end() && it->first < below) {
      const BlockId id = it->second;
      ++it;
      if (!blocks_[id].is_acquired && !prefetch_within(id, distance(blocks_[id])).valid()) {
        waiting = distance(blocks_[id]);
        return false;
      }
    }
    return true;
  };
  visit(wanted_.lower_bound({after, 0}), kNeverUsed) && visit(wanted_.begin(), after) &&
      visit(wanted_.lower_bound({kNeverUsed, 0}), kNeverUsed);
  return waiting;
}

void StateStore::throw_no_room(const Block& b) const {
  std::string in_use;
  for (const Block& other : blocks_) {
    if (!other.is_acquired) continue;
    if (!in_use.empty()) in_use += ", ";
    in_use += "'" + other.label + "'";
  }
  const platform::TierUsage u = memory_.usage(b.update);
  throw PlacementError("cannot make block '" + b.label + "' resident on " + std::string(platform::to_string(b.update)) +
                           ": nothing more can be evicted (blocks in use: " + (in_use.empty() ? "none" : in_use) +
                           ")",
                       {TierShortfall{b.update, b.bytes, free_bytes(b.update), u.capacity}});
}

}  // namespace asteria::runtime

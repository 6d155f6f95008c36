#pragma once
// The tiered optimizer-state store: places each block's state bytes (a Relocatable) in a region
// of a memory tier, moves them between device, host and NVMe by policy, and makes them resident
// where the block's update runs when the step driver asks.
//
// Step driver (one thread, the training loop's; the store is not thread-safe):
//
//   StateStore store(platform, options);
//   ids[b] = store.add(relocatable_b, "layer3.w block 2");   // relocatables outlive the store
//   store.set_use_order(backward_order);                     // order of updates in a step
//   store.place();                                           // optional: hooks place on first use
//   each step:
//     optionally store.prefetch(b) early (e.g. from forward hooks);
//     for b in use order:
//       visible += store.acquire(b);       // resident on store.update_tier(b), bytes usable
//       update b (its state's views are valid until release)
//       store.release(b, /*dirty=*/true);  // may now move; dirty bytes are written back first
//     StoreStepStats s = store.end_step();
//
// The store works cooperatively: it only acts inside its own calls (no threads of its own), so
// a move that must wait for room (an eviction still copying) starts at a later call. acquire()
// is the one call that blocks: it waits for the copies the block needs and returns how long.
//
// Memory budgets are the platform Memory's: allocations never over-commit, so the store makes
// room by evicting first and fails (PlacementError) only when nothing can be evicted. A failed
// copy throws TransferError naming the block; the block's state stays where it was. Room set
// aside on a tier for others (keep_free: the refresh jobs' shadow state on the host) counts as
// taken, less what they hold now: placement fails when the state and that room do not fit.
#include <array>
#include <cstddef>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "core/platform/platform.hpp"
#include "core/runtime/store/move_ledger.hpp"
#include "core/runtime/store/relocatable.hpp"
#include "core/runtime/store/store_errors.hpp"
#include "core/runtime/store/store_options.hpp"
#include "core/runtime/store/tier_set_aside.hpp"

namespace asteria::runtime {

class StateStore {
 public:
  StateStore(platform::Platform& platform, StoreOptions options);
  // Waits for moves in flight and gives every block its bytes back in storage it owns
  // (unplace()); a block whose bytes cannot be read back is left evicted, never dangling.
  ~StateStore();
  StateStore(const StateStore&) = delete;
  StateStore& operator=(const StateStore&) = delete;

  // Registers a block; `state` must be resident and outlive the store (or its unplace()).
  // Blocks added after place() are placed by the next place() or hook call.
  BlockId add(Relocatable& state, std::string label, BlockOptions options = {});
  // The order in which blocks are updated each step (backward order), cyclic across steps;
  // drives next-use decisions. Blocks left out count as needed last. No duplicates.
  void set_use_order(std::vector<BlockId> order);
  // Sets of blocks that are acquired at the same time (a step's peaks; plan::blocks_held_together).
  // Placement checks that each set fits together where its updates run, beside the blocks resting
  // there (else PlacementError before anything is allocated); without sets, the largest block.
  // Call before place().
  void set_held_together(std::vector<std::vector<BlockId>> sets);
  // Room the store leaves free on set_aside.tier() (its unused part, as it changes); `set_aside`
  // must outlive the store. Call before place().
  void keep_free(const TierSetAside& set_aside) noexcept { set_aside_ = &set_aside; }
  // Places every block not yet placed, as the policy says. Throws PlacementError listing the
  // shortfall per tier when the budgets cannot hold them and the room kept free (nothing is
  // over-committed).
  void place();
  // Bytes of `tier` that place() would leave free (beyond the room kept free), without placing
  // anything. Throws the PlacementError place() would throw.
  std::size_t room_after_placement(Tier tier) const;
  // Returns every block's bytes to storage the state owns and releases all regions (waits for
  // moves in flight). Blocks must not be acquired. place() may be called again afterwards.
  void unplace();

  // Starts moving the block to its update tier, evicting only blocks needed later than it.
  // Returns: ready if it is there already; the copy's own Pending if the copy started now or
  // earlier (once it completes, acquire() does not wait); invalid (valid() == false) when room
  // must first be made (evictions in flight) or cannot be made without evicting blocks needed
  // sooner, or while a block needed sooner still waits for room (a prefetch never takes the room
  // of a sooner one): the store then retries at its next calls, soonest first, and acquire()
  // always completes the move.
  platform::Pending prefetch(BlockId block);
  // Waits until the block is resident on its update tier and marks it in use (not movable until
  // release). Returns the time waited: optimizer-state movement visible on the critical path.
  Seconds acquire(BlockId block);
  // The block's update is done; it may move again. `dirty`: the update changed its bytes, so
  // copies on other tiers are stale and are rewritten before the current copy is dropped.
  void release(BlockId block, bool dirty);
  // Checkpoints, between steps (the block not acquired; moves in flight are waited for first).
  // read() copies the block's current bytes (bytes(block) of them) into `out` from wherever they
  // rest, through a staging region off NVMe; write() makes `bytes` its current bytes where they
  // rest (copies on other tiers become stale). A failed copy throws TransferError naming the
  // block; the block keeps its bytes. Neither moves the block.
  void read(BlockId block, std::span<std::byte> out);
  void write(BlockId block, std::span<const std::byte> bytes);
  // Finishes copies that completed and starts moves that were waiting for room.
  void poll();
  // Waits for every move in flight.
  void drain();

  Tier update_tier(BlockId block) const;
  // Where the block rests between updates by the policy (device, host or NVMe); a block updated
  // on another tier is staged there for its update (the tiered policy: the device).
  Tier home_tier(BlockId block) const;
  // Tier whose copy holds the block's current bytes (where the state is attached, or NVMe); the
  // host for a block not placed (its bytes in the state's own storage).
  Tier location(BlockId block) const;
  bool has_copy_on(BlockId block, Tier tier) const;
  bool acquired(BlockId block) const;
  bool placed(BlockId block) const;
  bool in_flight(BlockId block) const;
  std::size_t block_count() const noexcept { return blocks_.size(); }
  const std::string& label(BlockId block) const;
  std::size_t bytes(BlockId block) const;
  const StoreOptions& options() const noexcept { return options_; }

  // Accounting.
  platform::TierUsage usage(Tier tier) const { return memory_.usage(tier); }
  std::size_t store_resident(Tier tier) const;  // bytes of this store's regions on the tier
  const MoveLedger& ledger() const noexcept { return ledger_; }
  std::vector<Move> take_moves() { return ledger_.take_moves(); }
  // Figures for the step that just ended (usage now, moves and waits since the last call).
  StoreStepStats end_step();
  // The plan op on whose behalf the next calls act: the copies they start carry it (traces).
  void set_cause(const platform::OpTag& cause) noexcept { cause_ = cause; }

 private:
  struct Transfer {
    Tier from = Tier::host;
    Tier to = Tier::host;
    MoveReason reason = MoveReason::load;
    platform::Pending done;
    Seconds start = 0.0;
  };
  struct Block {
    Relocatable* state = nullptr;
    std::string label;
    std::size_t bytes = 0;
    Tier home = Tier::host;    // where it rests between updates (host, nvme policies)
    Tier update = Tier::host;  // where its update runs
    std::array<platform::Allocation, kTierCount> copies;
    std::array<bool, kTierCount> fresh{};  // copy holds the current bytes
    Tier primary = Tier::host;             // the copy the state is attached to (or NVMe: evicted)
    bool is_placed = false;
    bool is_acquired = false;
    bool keep_staged = false;  // a write-back in flight must not drop the staged copy
    bool wanted = false;       // a prefetch waits for room
    std::ptrdiff_t use_position = -1;
    std::optional<Transfer> transfer;  // at most one move in flight per block
    std::size_t primary_slot = 0;      // its index in primary_on_[primary]
  };
  static constexpr std::size_t kNeverUsed = static_cast<std::size_t>(-1);

  Block& at(BlockId block);
  const Block& at(BlockId block) const;
  static std::size_t index(Tier tier) noexcept { return static_cast<std::size_t>(tier); }
  bool dynamic() const noexcept { return options_.policy == PlacementPolicy::tiered; }
  std::size_t free_bytes(Tier tier) const;  // what the store may take: less the room kept free
  std::size_t device_room_in_pool() const;  // unified memory, tiered: the device's room to fetch into
  std::size_t kept_free(Tier tier) const;
  std::size_t distance(const Block& b) const;  // uses until the block's next use
  bool ready_for_update(const Block& b) const;
  // The only writers of Block::primary and Block::wanted: they keep the indexes below in step.
  void set_primary(Block& b, Tier tier);
  void set_wanted(Block& b, bool wanted);
  std::pair<std::size_t, BlockId> wanted_key(const Block& b) const;

  // Placement (store_placement.cpp).
  std::vector<BlockId> unplaced_by_next_use() const;
  void check_budgets(const std::vector<BlockId>& pending, std::vector<Tier>& targets,
                     std::array<std::size_t, kTierCount>* left = nullptr) const;
  void place_block(Block& b, Tier tier);
  void place_on_nvme(Block& b);
  static platform::Allocation allocate_staging(platform::Memory& memory, Tier tier, const Block& b);
  void unplace_block(Block& b);
  std::optional<Tier> checkpoint_staging(std::size_t bytes);

  // Moves (store_moves.cpp).
  void attach_to(Block& b, Tier tier);
  const platform::Allocation* unaddressable_copy(const Block& b) const;
  platform::Pending start_move(BlockId id, Tier from, Tier to, MoveReason reason);
  bool try_start_load(BlockId id, std::size_t evict_farther_than);
  bool make_room(Tier tier, std::size_t bytes, std::size_t evict_farther_than);
  bool evictable(const Block& b, Tier tier) const;
  std::size_t freeing_bytes(Tier tier) const;
  bool start_eviction(BlockId victim, std::size_t& freed_now);
  void finish_release(BlockId id);
  void drop_staged(Block& b);
  void complete(BlockId id);
  bool complete_finished();
  void wait_for_any();
  // Starts the window's moves and the waiting prefetches, soonest first. Returns the distance of
  // the first that still waits for room (kNeverUsed: none).
  std::size_t refill_window();
  bool needs_load(const Block& b) const;
  platform::Pending prefetch_within(BlockId id, std::size_t evict_farther_than);
  [[noreturn]] void throw_no_room(const Block& b) const;

  platform::Platform& platform_;
  platform::Memory& memory_;
  StoreOptions options_;
  std::vector<Block> blocks_;
  std::size_t pool_device_room_ = 0;  // device_room_in_pool() as place() found it
  std::vector<BlockId> order_;
  std::vector<std::vector<BlockId>> held_together_;
  std::ptrdiff_t cursor_ = -1;  // use position of the last acquired block
  bool all_placed_ = true;
  std::vector<BlockId> moving_;  // blocks with a transfer in flight
  // Indexes, so that a move decision costs what it concerns rather than a walk over every
  // block (a 7B model has thousands, and decisions come per move):
  std::array<std::vector<BlockId>, kTierCount> primary_on_;  // blocks by the tier of their primary copy
  std::set<std::pair<std::size_t, BlockId>> wanted_;         // wanted blocks by (use position, id)
  MoveLedger ledger_;
  platform::OpTag cause_;
  const TierSetAside* set_aside_ = nullptr;
};

}  // namespace asteria::runtime

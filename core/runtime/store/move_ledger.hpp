#pragma once
// Accounting of the state store: every move of a block's bytes between tiers, totals per tier
// pair, and per-step figures for metrics (steps.csv columns, trace counters).
#include <array>
#include <cstddef>
#include <string_view>
#include <vector>

#include "core/platform/memory.hpp"
#include "core/platform/time.hpp"
#include "core/runtime/store/store_options.hpp"

namespace asteria::runtime {

using platform::kTierCount;
using platform::Seconds;
using platform::Tier;

enum class MoveReason {
  placement,   // first placement on a tier without host addresses (NVMe), or the way back at unplace()
  load,        // up to the tier where the block's update runs (prefetch or acquire)
  eviction,    // down, to make room (tiered policy)
  write_back,  // an updated staged copy back to the block's home tier (host and nvme policies)
};
std::string_view to_string(MoveReason reason) noexcept;

struct Move {
  BlockId block = 0;
  Tier from = Tier::host;
  Tier to = Tier::host;
  std::size_t bytes = 0;
  Seconds start = 0.0;  // when the store issued the copy
  Seconds end = 0.0;    // when the store saw it finish (at or after the copy's true end)
  MoveReason reason = MoveReason::load;
  bool ok = true;
  Seconds duration() const noexcept { return end - start; }
};

// Bytes (or counts) per (from, to) tier pair.
struct TierPairTotals {
  std::array<std::array<std::size_t, kTierCount>, kTierCount> values{};
  std::size_t& at(Tier from, Tier to) noexcept {
    return values[static_cast<std::size_t>(from)][static_cast<std::size_t>(to)];
  }
  std::size_t at(Tier from, Tier to) const noexcept {
    return values[static_cast<std::size_t>(from)][static_cast<std::size_t>(to)];
  }
  std::size_t total() const noexcept;
};

// One step's figures: taken (and the per-step counters reset) by StateStore::end_step().
struct StoreStepStats {
  std::array<platform::TierUsage, kTierCount> usage{};   // Memory::usage per tier (every user)
  std::array<std::size_t, kTierCount> store_resident{};  // bytes of the store's own regions per tier
  TierPairTotals bytes_moved;  // bytes of moves that finished ok during the step
  TierPairTotals moves;        // their count
  std::size_t failed_moves = 0;
  Seconds state_move_wait = 0.0;  // time acquire() waited: visible optimizer-state movement
};

class MoveLedger {
 public:
  void record(const Move& move);
  void add_wait(Seconds waited) noexcept { step_wait_ += waited; total_wait_ += waited; }

  // Every move since the last take_moves(), oldest first; the caller drains it (e.g. into a
  // trace) so long runs do not grow it without bound.
  const std::vector<Move>& moves() const noexcept { return log_; }
  std::vector<Move> take_moves();

  const TierPairTotals& total_bytes() const noexcept { return total_bytes_; }
  const TierPairTotals& total_moves() const noexcept { return total_moves_; }
  Seconds total_wait() const noexcept { return total_wait_; }

  // Fills the step counters of `stats` and resets them.
  void take_step(StoreStepStats& stats);

 private:
  std::vector<Move> log_;
  TierPairTotals total_bytes_;
  TierPairTotals total_moves_;
  TierPairTotals step_bytes_;
  TierPairTotals step_moves_;
  std::size_t step_failed_ = 0;
  Seconds step_wait_ = 0.0;
  Seconds total_wait_ = 0.0;
};

}  // namespace asteria::runtime

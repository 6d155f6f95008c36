#include "core/runtime/store/move_ledger.hpp"

#include <utility>

namespace asteria::runtime {

std::string_view to_string(MoveReason reason) noexcept {
  switch (reason) {
    case MoveReason::placement: return "placement";
    case MoveReason::load: return "load";
    case MoveReason::eviction: return "eviction";
    case MoveReason::write_back: return "write_back";
  }
  return "?";
}

std::size_t TierPairTotals::total() const noexcept {
  std::size_t sum = 0;
  for (const auto& row : values)
    for (std::size_t v : row) sum += v;
  return sum;
}

void MoveLedger::record(const Move& move) {
  log_.push_back(move);
  if (!move.ok) {
    ++step_failed_;
    return;
  }
  total_bytes_.at(move.from, move.to) += move.bytes;
  total_moves_.at(move.from, move.to) += 1;
  step_bytes_.at(move.from, move.to) += move.bytes;
  step_moves_.at(move.from, move.to) += 1;
}

std::vector<Move> MoveLedger::take_moves() {
  std::vector<Move> taken;
  taken.swap(log_);
  return taken;
}

void MoveLedger::take_step(StoreStepStats& stats) {
  stats.bytes_moved = std::exchange(step_bytes_, {});
  stats.moves = std::exchange(step_moves_, {});
  stats.failed_moves = std::exchange(step_failed_, 0);
  stats.state_move_wait = std::exchange(step_wait_, 0.0);
}

}  // namespace asteria::runtime

#pragma once
// Errors of the state store: a placement that cannot fit its budgets, and a move of a block's
// bytes that failed (the block's state is left intact where it was).
#include <cstddef>
#include <string>
#include <vector>

#include "core/common/error.hpp"
#include "core/common/status.hpp"
#include "core/platform/memory.hpp"

namespace asteria::runtime {

struct TierShortfall {
  // "device", "host", "nvme", or "device + host" for a unified pool.
  std::string where() const;
  platform::Tier tier = platform::Tier::device;
  std::size_t needed = 0;     // bytes the placement needs on the tier
  std::size_t available = 0;  // bytes free there
  std::size_t capacity = 0;   // the tier's budget
  // The device and host tiers' one pool (unified memory) falls short, not `tier` alone.
  bool shared_pool = false;
  std::size_t missing() const noexcept { return needed > available ? needed - available : 0; }
};

// The blocks cannot be placed (or a block cannot be made resident, or memory set aside for
// others cannot be held) within the tier budgets. The message, "<who>: <what failed>: ...",
// lists every tier that falls short: "device needs 3072 B, 2048 B free of 2048 B (short by
// 1024 B)"; an empty `who` leaves its part out.
class PlacementError : public Error {
 public:
  PlacementError(const std::string& what_failed, std::vector<TierShortfall> shortfalls,
                 const std::string& who = "state store");
  const std::vector<TierShortfall>& shortfalls() const noexcept { return shortfalls_; }

 private:
  std::vector<TierShortfall> shortfalls_;
};

// A copy of a block's bytes between tiers failed. The message names the block, the tiers and
// the platform's reason (for NVMe, the file); the state stays where it was before the move.
class TransferError : public Error {
 public:
  TransferError(const std::string& block_label, platform::Tier from, platform::Tier to, const Status& status);
  const std::string& block_label() const noexcept { return block_label_; }
  const Status& status() const noexcept { return status_; }

 private:
  std::string block_label_;
  Status status_;
};

}  // namespace asteria::runtime

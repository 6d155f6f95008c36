#include "core/runtime/store/store_errors.hpp"

namespace asteria::runtime {
namespace {

std::string describe(const std::string& who, const std::string& what_failed,
                     const std::vector<TierShortfall>& shortfalls) {
  std::string text = who.empty() ? what_failed : who + ": " + what_failed;
  const char* separator = ": ";
  for (const TierShortfall& s : shortfalls) {
    text += separator;
    text += s.where() + " needs " + std::to_string(s.needed) + " B, " +
            std::to_string(s.available) + " B free of " + std::to_string(s.capacity) + " B (short by " +
            std::to_string(s.missing()) + " B)";
    separator = "; ";
  }
  return text;
}

}  // namespace

std::string TierShortfall::where() const {
  return shared_pool ? "device + host (one unified memory)" : std::string(platform::to_string(tier));
}

PlacementError::PlacementError(const std::string& what_failed, std::vector<TierShortfall> shortfalls,
                               const std::string& who)
    : Error(describe(who, what_failed, shortfalls)), shortfalls_(std::move(shortfalls)) {}

TransferError::TransferError(const std::string& block_label, platform::Tier from, platform::Tier to,
                             const Status& status)
    : Error("state store: moving block '" + block_label + "' from " + std::string(platform::to_string(from)) +
            " to " + std::string(platform::to_string(to)) + " failed: " + status.message() + "; its state stays on " +
            std::string(platform::to_string(from))),
      block_label_(block_label),
      status_(status) {}

}  // namespace asteria::runtime

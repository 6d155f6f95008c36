#include "core/runtime/store/tier_set_aside.hpp"

#include <utility>

#include "core/runtime/store/store_errors.hpp"

namespace asteria::runtime {

TierSetAside::Hold::Hold(Hold&& other) noexcept
    : owner_(std::exchange(other.owner_, nullptr)), reservation_(std::move(other.reservation_)) {}

TierSetAside::Hold& TierSetAside::Hold::operator=(Hold&& other) noexcept {
  if (this != &other) {
    reset();
    owner_ = std::exchange(other.owner_, nullptr);
    reservation_ = std::move(other.reservation_);
  }
  return *this;
}

void TierSetAside::Hold::reset() {
  if (owner_ != nullptr && reservation_.valid()) owner_->held_ -= reservation_.region().bytes;
  reservation_.reset();
  owner_ = nullptr;
}

TierSetAside::TierSetAside(platform::Memory& memory, platform::Tier tier, std::string purpose)
    : memory_(memory), tier_(tier), purpose_(std::move(purpose)) {}

TierSetAside::Hold TierSetAside::try_hold(std::size_t bytes, const std::string& label) {
  std::optional<platform::Region> region = memory_.reserve(tier_, bytes, label);
  if (!region) return {};
  held_ += bytes;
  return Hold(*this, platform::Allocation(memory_, std::move(*region)));
}

TierSetAside::Hold TierSetAside::hold(std::size_t bytes, const std::string& label) {
  Hold h = try_hold(bytes, label);
  if (h.reservation_.valid() || bytes == 0) return h;
  const platform::TierUsage u = memory_.usage(tier_);
  throw PlacementError("no " + std::string(platform::to_string(tier_)) + " memory for the " + purpose_ + " of " + label,
                       {TierShortfall{tier_, bytes, u.capacity > u.resident ? u.capacity - u.resident : 0, u.capacity}},
                       /*who=*/"");
}

}  // namespace asteria::runtime

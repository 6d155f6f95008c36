#include "core/platform/cost.hpp"

namespace asteria::platform {

std::string_view to_string(WorkKind kind) noexcept {
  switch (kind) {
    case WorkKind::gemm: return "gemm";
    case WorkKind::eigh: return "eigh";
    case WorkKind::qr: return "qr";
    case WorkKind::newton: return "newton";
    case WorkKind::elementwise: return "elementwise";
    case WorkKind::other: return "other";
  }
  return "other";
}

double Costs::flops() const noexcept {
  double total = 0.0;
  for (const Cost& piece : pieces_) total += piece.flops;
  return total;
}

double Costs::bytes() const noexcept {
  double total = 0.0;
  for (const Cost& piece : pieces_) total += piece.bytes;
  return total;
}

}  // namespace asteria::platform

#include "core/platform/memory.hpp"

namespace asteria::platform {

std::string_view to_string(Tier tier) noexcept {
  switch (tier) {
    case Tier::device: return "device";
    case Tier::host: return "host";
    case Tier::nvme: return "nvme";
  }
  return "unknown";
}

}  // namespace asteria::platform

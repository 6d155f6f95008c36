#include "core/platform/cost.hpp"

#include <algorithm>

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

bool Costs::any_work() const noexcept {
  for (const Cost& piece : pieces_)
    if (piece.does_work()) return true;
  return false;
}

void Costs::add_work(const Costs& more) {
  for (const Cost& piece : more.pieces_)
    if (piece.does_work()) pieces_.push_back(piece);
}

void Costs::merge(const Costs& more) {
  for (const Cost& piece : more.pieces_) {
    auto same = [&](const Cost& c) {
      return c.kind == piece.kind && c.dimension == piece.dimension && c.reduced_precision == piece.reduced_precision;
    };
    if (auto it = std::find_if(pieces_.begin(), pieces_.end(), same); it != pieces_.end()) {
      it->flops += piece.flops;
      it->bytes += piece.bytes;
    } else {
      pieces_.push_back(piece);
    }
  }
}

Costs Costs::scaled(double factor) const {
  Costs out = *this;
  for (Cost& piece : out.pieces_) {
    piece.flops *= factor;
    piece.bytes *= factor;
  }
  return out;
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

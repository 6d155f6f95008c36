#include "core/plan/op.hpp"

#include <array>

#include "core/common/error.hpp"

namespace asteria::plan {
namespace {

constexpr std::array<std::string_view, kOpKindCount> kKindNames = {
    "forward", "backward", "reduce",  "prefetch", "acquire", "release",
    "publish", "accumulate", "refresh", "update",  "transfer", "gather", "scatter"};
constexpr std::array<std::string_view, 5> kResourceNames = {"device", "host", "issuer", "network", "link"};
constexpr std::array<std::string_view, 3> kPayloadNames = {"gradient", "weights", "checkpoint"};

}  // namespace

std::string_view to_string(OpKind kind) noexcept { return kKindNames[static_cast<std::size_t>(kind)]; }

std::string_view to_string(Resource resource) noexcept { return kResourceNames[static_cast<std::size_t>(resource)]; }

std::string_view to_string(Payload payload) noexcept { return kPayloadNames[static_cast<std::size_t>(payload)]; }

Payload parse_payload(std::string_view text, const std::string& source, const std::string& field) {
  for (std::size_t i = 0; i < kPayloadNames.size(); ++i)
    if (kPayloadNames[i] == text) return static_cast<Payload>(i);
  throw InputError(source, field, "expected gradient, weights or checkpoint, found \"" + std::string(text) + "\"");
}

OpKind parse_op_kind(std::string_view text, const std::string& source, const std::string& field) {
  for (std::size_t i = 0; i < kKindNames.size(); ++i)
    if (kKindNames[i] == text) return static_cast<OpKind>(i);
  std::string known;
  for (std::string_view name : kKindNames) {
    if (!known.empty()) known += ", ";
    known += name;
  }
  throw InputError(source, field, "expected an op kind (" + known + "), found \"" + std::string(text) + "\"");
}

Resource parse_resource(std::string_view text, const std::string& source, const std::string& field) {
  for (std::size_t i = 0; i < kResourceNames.size(); ++i)
    if (kResourceNames[i] == text) return static_cast<Resource>(i);
  throw InputError(source, field,
                   "expected device, host, issuer, network or link, found \"" + std::string(text) + "\"");
}

bool is_block_op(OpKind kind) noexcept {
  switch (kind) {
    case OpKind::prefetch:
    case OpKind::acquire:
    case OpKind::release:
    case OpKind::publish:
    case OpKind::accumulate:
    case OpKind::refresh:
    case OpKind::update:
    case OpKind::transfer: return true;
    case OpKind::forward:
    case OpKind::backward:
    case OpKind::reduce:
    case OpKind::gather:
    case OpKind::scatter: return false;
  }
  return false;
}

bool is_collective_op(OpKind kind) noexcept {
  return kind == OpKind::reduce || kind == OpKind::gather || kind == OpKind::scatter;
}

bool is_optimizer_op(OpKind kind) noexcept {
  return kind == OpKind::publish || kind == OpKind::accumulate || kind == OpKind::refresh || kind == OpKind::update;
}

}  // namespace asteria::plan

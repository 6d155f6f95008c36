#include "core/platform/memory.hpp"

#include <algorithm>
#include <cstring>

namespace asteria::platform {

namespace {
Status unaddressable(const Region& region) {
  return {StatusCode::invalid_argument,
          "region '" + region.label + "' on the " + std::string(to_string(region.tier)) + " tier has no host address"};
}
Status too_long(const Region& region, std::size_t bytes) {
  return {StatusCode::invalid_argument, std::to_string(bytes) + " bytes for region '" + region.label + "' of " +
                                            std::to_string(region.bytes)};
}
}  // namespace

Status Memory::write(const Region& region, std::span<const std::byte> bytes) {
  if (bytes.size() > region.bytes) return too_long(region, bytes.size());
  if (bytes.empty()) return Status::success();
  std::byte* at = host_address(region);
  if (at == nullptr) return unaddressable(region);
  std::memcpy(at, bytes.data(), bytes.size());
  return Status::success();
}

Status Memory::read(const Region& region, std::span<std::byte> out) {
  if (out.size() > region.bytes) return too_long(region, out.size());
  if (out.empty()) return Status::success();
  const std::byte* at = host_address(region);
  if (at == nullptr) return unaddressable(region);
  std::memcpy(out.data(), at, out.size());
  return Status::success();
}

}  // namespace asteria::platform

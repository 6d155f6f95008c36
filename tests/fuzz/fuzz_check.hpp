#pragma once
// Shared by the fuzz targets: the input as text, and a check whose failure aborts, which
// libFuzzer (and the corpus replay) report as a crash with the input that caused it.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string_view>

namespace asteria::fuzz {

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

inline std::span<const std::byte> as_bytes(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const std::byte*>(data), size};
}

// A property every accepted input must have (a round trip, a documented invariant).
inline void require(bool holds, const char* property) {
  if (holds) return;
  std::fprintf(stderr, "fuzz: property violated: %s\n", property);
  std::abort();
}

}  // namespace asteria::fuzz

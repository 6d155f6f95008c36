#include "core/io/xxhash64.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace asteria::io {
namespace {

constexpr std::uint64_t kPrime1 = 0x9E3779B185EBCA87ULL;
constexpr std::uint64_t kPrime2 = 0xC2B2AE3D27D4EB4FULL;
constexpr std::uint64_t kPrime3 = 0x165667B19E3779F9ULL;
constexpr std::uint64_t kPrime4 = 0x85EBCA77C2B2AE63ULL;
constexpr std::uint64_t kPrime5 = 0x27D4EB2F165667C5ULL;
constexpr std::size_t kStripe = 32;

// The format is little-endian; byte-wise assembly keeps it so on any host (compiles to one load).
std::uint64_t load64(const std::byte* p) noexcept {
  std::uint64_t v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap64(v);
  return v;
}
std::uint32_t load32(const std::byte* p) noexcept {
  std::uint32_t v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (std::endian::native == std::endian::big) v = __builtin_bswap32(v);
  return v;
}

std::uint64_t round(std::uint64_t acc, std::uint64_t input) noexcept {
  acc += input * kPrime2;
  acc = std::rotl(acc, 31);
  return acc * kPrime1;
}

std::uint64_t merge_round(std::uint64_t acc, std::uint64_t lane) noexcept {
  acc ^= round(0, lane);
  return acc * kPrime1 + kPrime4;
}

// Consumes whole stripes; returns the bytes used.
std::size_t consume_stripes(std::uint64_t (&lanes)[4], const std::byte* p, std::size_t bytes) noexcept {
  std::uint64_t v1 = lanes[0], v2 = lanes[1], v3 = lanes[2], v4 = lanes[3];
  const std::size_t whole = bytes - bytes % kStripe;
  for (std::size_t i = 0; i < whole; i += kStripe) {
    v1 = round(v1, load64(p + i));
    v2 = round(v2, load64(p + i + 8));
    v3 = round(v3, load64(p + i + 16));
    v4 = round(v4, load64(p + i + 24));
  }
  lanes[0] = v1, lanes[1] = v2, lanes[2] = v3, lanes[3] = v4;
  return whole;
}

std::uint64_t finish(std::uint64_t h, const std::byte* p, std::size_t bytes) noexcept {
  std::size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    h ^= round(0, load64(p + i));
    h = std::rotl(h, 27) * kPrime1 + kPrime4;
  }
  if (i + 4 <= bytes) {
    h ^= static_cast<std::uint64_t>(load32(p + i)) * kPrime1;
    h = std::rotl(h, 23) * kPrime2 + kPrime3;
    i += 4;
  }
  for (; i < bytes; ++i) {
    h ^= static_cast<std::uint64_t>(std::to_integer<std::uint8_t>(p[i])) * kPrime5;
    h = std::rotl(h, 11) * kPrime1;
  }
  h ^= h >> 33;
  h *= kPrime2;
  h ^= h >> 29;
  h *= kPrime3;
  h ^= h >> 32;
  return h;
}

}  // namespace

Xxh64::Xxh64(std::uint64_t seed) noexcept
    : seed_(seed), lanes_{seed + kPrime1 + kPrime2, seed + kPrime2, seed, seed - kPrime1}, pending_{} {}

void Xxh64::update(std::span<const std::byte> bytes) noexcept {
  if (bytes.empty()) return;  // data() may be null: keep it away from memcpy
  const std::byte* p = bytes.data();
  std::size_t left = bytes.size();
  total_bytes_ += left;
  if (pending_bytes_ > 0) {
    const std::size_t take = std::min(left, kStripe - pending_bytes_);
    std::memcpy(pending_ + pending_bytes_, p, take);
    pending_bytes_ += take;
    p += take;
    left -= take;
    if (pending_bytes_ < kStripe) return;
    consume_stripes(lanes_, pending_, kStripe);
    pending_bytes_ = 0;
  }
  const std::size_t used = consume_stripes(lanes_, p, left);
  p += used;
  left -= used;
  if (left > 0) std::memcpy(pending_, p, left);
  pending_bytes_ = left;
}

std::uint64_t Xxh64::digest() const noexcept {
  std::uint64_t h;
  if (total_bytes_ >= kStripe) {
    h = std::rotl(lanes_[0], 1) + std::rotl(lanes_[1], 7) + std::rotl(lanes_[2], 12) + std::rotl(lanes_[3], 18);
    for (std::uint64_t lane : lanes_) h = merge_round(h, lane);
  } else {
    h = seed_ + kPrime5;
  }
  h += total_bytes_;
  return finish(h, pending_, pending_bytes_);
}

std::uint64_t xxh64(std::span<const std::byte> bytes, std::uint64_t seed) noexcept {
  Xxh64 hasher(seed);
  hasher.update(bytes);
  return hasher.digest();
}

}  // namespace asteria::io

#pragma once
// Seeded randomness of the data layer, specified bit for bit here rather than left to the
// standard library (its distributions and std::shuffle are implementation-defined), so one seed
// gives the same corpus split, synthetic text and batches with every compiler.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace asteria::data::detail {

// The SplitMix64 output function (Steele, Lea and Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014; constants as in Vigna's reference splitmix64.c).
constexpr std::uint64_t mix64(std::uint64_t z) noexcept {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// Independent streams from one user seed: each use (shuffle, text, batches) mixes in its own tag.
constexpr std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t tag) noexcept {
  return mix64(seed ^ mix64(tag));
}

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) noexcept : state_(seed) {}

  std::uint64_t next() noexcept {
    state_ += 0x9E3779B97F4A7C15ULL;
    return mix64(state_);
  }
  // Uniform in [0, bound) for bound >= 1, without modulo bias: values below 2^64 mod bound
  // are drawn again.
  std::uint64_t below(std::uint64_t bound) noexcept {
    const std::uint64_t threshold = (0 - bound) % bound;
    for (;;) {
      const std::uint64_t x = next();
      if (x >= threshold) return x % bound;
    }
  }

 private:
  std::uint64_t state_;
};

// Fisher-Yates (Durstenfeld) shuffle driven by SplitMix64.
template <class T>
void seeded_shuffle(std::vector<T>& items, std::uint64_t seed) {
  SplitMix64 random(seed);
  for (std::size_t i = items.size(); i > 1; --i) {
    const auto j = static_cast<std::size_t>(random.below(i));
    using std::swap;
    swap(items[i - 1], items[j]);
  }
}

// Tags of the streams (arbitrary distinct constants).
inline constexpr std::uint64_t kShuffleTag = 0x73687566666c65ULL;    // "shuffle"
inline constexpr std::uint64_t kSyntheticTag = 0x73796e746865ULL;    // "synthe"
inline constexpr std::uint64_t kBatchTag = 0x6261746368ULL;          // "batch"

}  // namespace asteria::data::detail

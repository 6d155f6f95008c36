#pragma once
// Seeded standard normal numbers that are the same on every platform and standard library
// (std::normal_distribution is not), so a float model, a double model and a future device
// implementation built from one seed start from the same weights: SplitMix64 (Steele, Lea and
// Flood 2014) for uniform bits, Box–Muller for the normals, all in double.
#include <cmath>
#include <cstdint>
#include <numbers>

namespace asteria::model {

class NormalStream {
 public:
  explicit NormalStream(std::uint64_t seed) : state_(seed) {}

  double next() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    // u1 in (0, 1] keeps log(u1) finite.
    const double u1 = (static_cast<double>(next_bits() >> 11) + 1.0) * 0x1.0p-53;
    const double u2 = static_cast<double>(next_bits() >> 11) * 0x1.0p-53;
    const double radius = std::sqrt(-2.0 * std::log(u1));
    const double angle = 2.0 * std::numbers::pi * u2;
    spare_ = radius * std::sin(angle);
    has_spare_ = true;
    return radius * std::cos(angle);
  }

 private:
  std::uint64_t next_bits() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  std::uint64_t state_;
  double spare_ = 0.0;
  bool has_spare_ = false;
};

}  // namespace asteria::model

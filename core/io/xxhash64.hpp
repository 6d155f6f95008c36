#pragma once
// XXH64 (seed 0 unless given): the checksum of NVMe block files and checkpoints. Chosen over CRC32C because it
// runs at memory speed (≈10+ GB/s per core) in portable C++ with no CPU-feature dispatch, and its
// 64 bits make an accidental match of torn or stale data negligible. Output equals the reference
// XXH64 algorithm's, so block files can be checked with the standard `xxh64sum` tool.
#include <cstddef>
#include <cstdint>
#include <span>

namespace asteria::io {

// Streaming form: feed bytes in file order, in pieces of any size.
class Xxh64 {
 public:
  explicit Xxh64(std::uint64_t seed = 0) noexcept;
  void update(std::span<const std::byte> bytes) noexcept;
  std::uint64_t digest() const noexcept;  // does not change the state

 private:
  std::uint64_t seed_;
  std::uint64_t lanes_[4];
  std::uint64_t total_bytes_ = 0;
  std::byte pending_[32];        // bytes not yet forming a full 32-byte stripe
  std::size_t pending_bytes_ = 0;
};

std::uint64_t xxh64(std::span<const std::byte> bytes, std::uint64_t seed = 0) noexcept;

}  // namespace asteria::io

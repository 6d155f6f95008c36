#pragma once
// On-disk layout of one block file:
//   [0, 4096)            header block (fields below, little-endian, rest zero)
//   [4096, 4096 + n)     payload, the block's n bytes verbatim
// The header fills a whole 4096-byte block so the payload starts aligned for O_DIRECT.
//   offset  0  u64  magic "ASTNVME1"
//   offset  8  u32  format version (1)
//   offset 12  u32  header bytes (= payload offset, 4096)
//   offset 16  u64  block id
//   offset 24  u64  payload bytes
//   offset 32  u64  XXH64 (seed 0) of the payload
//   offset 40  u64  XXH64 (seed 0) of header bytes [0, 40)
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace asteria::real {

inline constexpr std::size_t kBlockHeaderBytes = 4096;
inline constexpr std::uint32_t kBlockFormatVersion = 1;

struct BlockHeader {
  std::uint64_t id = 0;
  std::uint64_t payload_bytes = 0;
  std::uint64_t payload_checksum = 0;
};

void encode_header(const BlockHeader& header, std::span<std::byte, kBlockHeaderBytes> out) noexcept;

// Parses and verifies a header block. On failure returns false and says why in `problem`
// ("bad magic: not a block file", "header checksum mismatch", ...).
bool decode_header(std::span<const std::byte, kBlockHeaderBytes> in, BlockHeader& header, std::string& problem);

}  // namespace asteria::real

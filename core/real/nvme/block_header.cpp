#include "core/real/nvme/block_header.hpp"

#include <algorithm>
#include <cstdio>

#include "core/io/xxhash64.hpp"

namespace asteria::real {

using io::Xxh64;
using io::xxh64;
namespace {

constexpr std::uint64_t kMagic = 0x31454D564E545341ULL;  // "ASTNVME1" read little-endian
constexpr std::size_t kChecksummedBytes = 40;

template <class Int>
void store_le(std::byte* p, Int value) noexcept {
  for (std::size_t i = 0; i < sizeof(Int); ++i) p[i] = static_cast<std::byte>((value >> (8 * i)) & 0xFFU);
}

template <class Int>
Int load_le(const std::byte* p) noexcept {
  Int value = 0;
  for (std::size_t i = 0; i < sizeof(Int); ++i) value |= static_cast<Int>(std::to_integer<std::uint8_t>(p[i])) << (8 * i);
  return value;
}

std::string hex(std::uint64_t value) {
  char text[19];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

}  // namespace

void encode_header(const BlockHeader& header, std::span<std::byte, kBlockHeaderBytes> out) noexcept {
  std::fill(out.begin(), out.end(), std::byte{0});
  std::byte* p = out.data();
  store_le<std::uint64_t>(p, kMagic);
  store_le<std::uint32_t>(p + 8, kBlockFormatVersion);
  store_le<std::uint32_t>(p + 12, static_cast<std::uint32_t>(kBlockHeaderBytes));
  store_le<std::uint64_t>(p + 16, header.id);
  store_le<std::uint64_t>(p + 24, header.payload_bytes);
  store_le<std::uint64_t>(p + 32, header.payload_checksum);
  store_le<std::uint64_t>(p + 40, xxh64(out.first(kChecksummedBytes)));
}

bool decode_header(std::span<const std::byte, kBlockHeaderBytes> in, BlockHeader& header, std::string& problem) {
  const std::byte* p = in.data();
  if (load_le<std::uint64_t>(p) != kMagic) {
    problem = "bad magic: not an Asteria block file";
    return false;
  }
  const std::uint64_t stored = load_le<std::uint64_t>(p + 40);
  const std::uint64_t computed = xxh64(in.first(kChecksummedBytes));
  if (stored != computed) {
    problem = "header checksum mismatch (stored " + hex(stored) + ", computed " + hex(computed) + ")";
    return false;
  }
  const auto version = load_le<std::uint32_t>(p + 8);
  if (version != kBlockFormatVersion) {
    problem = "unsupported format version " + std::to_string(version);
    return false;
  }
  const auto header_bytes = load_le<std::uint32_t>(p + 12);
  if (header_bytes != kBlockHeaderBytes) {
    problem = "unexpected header size " + std::to_string(header_bytes);
    return false;
  }
  header.id = load_le<std::uint64_t>(p + 16);
  header.payload_bytes = load_le<std::uint64_t>(p + 24);
  header.payload_checksum = load_le<std::uint64_t>(p + 32);
  return true;
}

}  // namespace asteria::real

#pragma once
// The on-disk format of a checkpoint. A checkpoint directory holds two slots, slot-a/ and
// slot-b/; a new checkpoint always goes to the slot that does not hold the newest loadable one,
// so a crash while writing it leaves that one loadable. A slot holds
//
//   state.bin      a 40-byte header, then the chunks back to back:
//                    magic "ASTCKPT1" | format version u32 | 0 u32 | step i64 | sequence u64 |
//                    xxh64 of the 32 bytes before it
//   manifest.json  written last (the slot's commit): format, version, step, sequence, the data
//                  file's size and header checksum, every chunk (name, offset, bytes, xxh64 of
//                  its bytes), free-form string metadata (the run's settings), and the xxh64 of
//                  the manifest's other fields in canonical form ("checksum").
//
// Integers are little-endian; checksums are XXH64 (core/io/xxhash64.hpp), written in hex.
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace asteria::checkpoint {

inline constexpr std::uint32_t kFormatVersion = 1;
inline constexpr std::size_t kHeaderBytes = 40;
inline constexpr std::string_view kDataFile = "state.bin";
inline constexpr std::string_view kManifestFile = "manifest.json";
inline constexpr std::string_view kSlotNames[2] = {"slot-a", "slot-b"};

struct Header {
  std::int64_t step = 0;
  std::uint64_t sequence = 0;  // grows by one per checkpoint written to the directory
};

struct Chunk {
  std::string name;
  std::uint64_t offset = 0;  // in state.bin
  std::uint64_t bytes = 0;
  std::uint64_t checksum = 0;
};

struct Manifest {
  std::int64_t step = 0;
  std::uint64_t sequence = 0;
  std::uint64_t data_bytes = 0;       // size of state.bin
  std::uint64_t header_checksum = 0;  // the header's own checksum field
  std::vector<Chunk> chunks;          // in file order, not overlapping, names unique
  std::map<std::string, std::string> meta;

  const Chunk* find(std::string_view name) const noexcept;
};

std::vector<std::byte> encode_header(const Header& header);
// Throws InputError naming `source` and the field for a header that is short, of another
// format or version, or whose checksum does not match.
Header parse_header(std::span<const std::byte> bytes, const std::string& source);
std::uint64_t header_checksum(std::span<const std::byte> header_bytes);

std::string encode_manifest(const Manifest& manifest);
// Throws InputError naming `source` and the field for text that is not a manifest of this
// format and version, fails its checksum, or lists chunks outside the data file, overlapping,
// out of order or named twice.
Manifest parse_manifest(std::string_view text, const std::string& source);

}  // namespace asteria::checkpoint

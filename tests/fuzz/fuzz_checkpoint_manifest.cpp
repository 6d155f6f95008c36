// Checkpoint manifests: any text parses or is rejected with an InputError; a manifest that
// parses lists chunks inside the data file, in order, not overlapping, named once, and encodes
// to text that parses back to the same manifest.
#include <set>

#include "core/checkpoint/checkpoint_format.hpp"
#include "core/common/error.hpp"
#include "tests/fuzz/fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace asteria;
  checkpoint::Manifest m;
  try {
    m = checkpoint::parse_manifest(fuzz::as_text(data, size), "fuzz manifest.json");
  } catch (const InputError&) {
    return 0;
  }
  std::uint64_t end = checkpoint::kHeaderBytes;
  std::set<std::string> names;
  for (const checkpoint::Chunk& c : m.chunks) {
    fuzz::require(c.offset >= end && c.bytes <= m.data_bytes && c.offset <= m.data_bytes - c.bytes,
                  "chunks lie in the data file, in order, not overlapping");
    fuzz::require(names.insert(c.name).second, "chunk names are unique");
    end = c.offset + c.bytes;
  }
  const checkpoint::Manifest again = checkpoint::parse_manifest(checkpoint::encode_manifest(m), "fuzz manifest.json");
  fuzz::require(again.step == m.step && again.sequence == m.sequence && again.data_bytes == m.data_bytes &&
                    again.header_checksum == m.header_checksum && again.meta == m.meta &&
                    again.chunks.size() == m.chunks.size(),
                "a manifest round-trips");
  for (std::size_t i = 0; i < m.chunks.size(); ++i)
    fuzz::require(again.chunks[i].name == m.chunks[i].name && again.chunks[i].offset == m.chunks[i].offset &&
                      again.chunks[i].bytes == m.chunks[i].bytes && again.chunks[i].checksum == m.chunks[i].checksum,
                  "chunks round-trip");
  return 0;
}

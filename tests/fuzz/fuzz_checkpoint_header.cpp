// Checkpoint data-file headers: any bytes parse or are rejected with an InputError, and a header
// that parses encodes back to the same 40 bytes.
#include <algorithm>

#include "core/checkpoint/checkpoint_format.hpp"
#include "core/common/error.hpp"
#include "tests/fuzz/fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace asteria;
  const std::span<const std::byte> bytes = fuzz::as_bytes(data, size);
  checkpoint::Header header;
  try {
    header = checkpoint::parse_header(bytes, "fuzz state.bin");
  } catch (const InputError&) {
    return 0;
  }
  const std::vector<std::byte> again = checkpoint::encode_header(header);
  fuzz::require(again.size() == checkpoint::kHeaderBytes, "a header is 40 bytes");
  fuzz::require(std::equal(again.begin(), again.end(), bytes.begin()), "a parsed header encodes to its bytes");
  return 0;
}

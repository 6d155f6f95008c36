#include "core/data/batch_loader.hpp"

#include <string>

#include "core/common/error.hpp"
#include "core/data/seeded_random.hpp"

namespace asteria::data {

namespace {

void copy_window(std::span<const std::uint8_t> stream, std::size_t offset, std::size_t length, TokenId* out) {
  for (std::size_t t = 0; t < length; ++t) out[t] = static_cast<TokenId>(stream[offset + t]);
}

}  // namespace

BatchLoader::BatchLoader(std::span<const std::uint8_t> stream, int batch, int sequence_length, std::uint64_t seed)
    : stream_(stream), batch_(batch), sequence_length_(sequence_length), seed_(seed) {
  if (batch < 1) throw InputError("corpus", "batch", "expected at least 1, found " + std::to_string(batch));
  if (sequence_length < 1) {
    throw InputError("corpus", "sequence_length", "expected at least 1, found " + std::to_string(sequence_length));
  }
  const auto window = static_cast<std::size_t>(sequence_length) + 1;
  if (stream.size() < window) {
    throw InputError("corpus", "stream",
                     "expected at least sequence_length + 1 = " + std::to_string(window) + " bytes, found " +
                         std::to_string(stream.size()));
  }
}

void BatchLoader::next(std::vector<TokenId>& out) {
  const auto window = static_cast<std::size_t>(sequence_length_) + 1;
  const std::size_t offsets = stream_.size() - window + 1;  // starts 0 .. size - (L + 1)
  out.resize(static_cast<std::size_t>(batch_) * window);
  // Counter-based: batch k draws from a generator seeded by (seed, k) alone.
  detail::SplitMix64 random(detail::mix64(detail::stream_seed(seed_, detail::kBatchTag) + drawn_));
  for (std::size_t row = 0; row < static_cast<std::size_t>(batch_); ++row) {
    copy_window(stream_, static_cast<std::size_t>(random.below(offsets)), window, out.data() + row * window);
  }
  ++drawn_;
}

bool BatchLoader::next_in_order(std::vector<TokenId>& out, int& sequences) {
  const auto length = static_cast<std::size_t>(sequence_length_);
  const std::size_t window = length + 1;
  sequences = 0;
  out.resize(static_cast<std::size_t>(batch_) * window);
  while (sequences < batch_ && cursor_ + window <= stream_.size()) {
    copy_window(stream_, cursor_, window, out.data() + static_cast<std::size_t>(sequences) * window);
    cursor_ += length;  // windows overlap by one byte: each byte after the first is a target once
    ++sequences;
  }
  out.resize(static_cast<std::size_t>(sequences) * window);
  return sequences == batch_;
}

}  // namespace asteria::data

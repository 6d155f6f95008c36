#pragma once
// Batches of training windows from a byte stream: each sequence is sequence_length + 1
// consecutive tokens (inputs and shifted targets) starting at a seeded random offset.
// Deterministic: the k-th batch is a pure function of (stream, seed, k).
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/data/byte_tokenizer.hpp"

namespace asteria::data {

class BatchLoader {
 public:
  // Throws InputError("corpus", ...) when the stream is shorter than sequence_length + 1, or
  // for batch or sequence_length < 1. The stream must outlive the loader.
  BatchLoader(std::span<const std::uint8_t> stream, int batch, int sequence_length, std::uint64_t seed);

  // Fills `out` (resized to batch x (sequence_length + 1)) with the next batch.
  void next(std::vector<TokenId>& out);
  // Every full window of the stream, in order, batch by batch (validation): returns false when
  // the stream is exhausted; `out` then holds the remaining whole windows (maybe none), and
  // `sequences` how many. Window i starts at i * sequence_length (neighbours share one byte), so
  // every byte after the first is a target exactly once. `out` is resized to sequences x
  // (sequence_length + 1); a call that fills a whole batch returns true, even when it took the
  // last windows (the next call then returns false with none). Does not affect next().
  bool next_in_order(std::vector<TokenId>& out, int& sequences);
  void rewind_in_order() noexcept { cursor_ = 0; }

  // How many batches next() has drawn; seek(k) makes the next call return batch k (resuming).
  std::uint64_t batches_drawn() const noexcept { return drawn_; }
  void seek(std::uint64_t batch_index) noexcept { drawn_ = batch_index; }

  int batch() const noexcept { return batch_; }
  int sequence_length() const noexcept { return sequence_length_; }

 private:
  std::span<const std::uint8_t> stream_;
  int batch_;
  int sequence_length_;
  std::uint64_t seed_;
  std::uint64_t drawn_ = 0;
  std::size_t cursor_ = 0;
};

}  // namespace asteria::data

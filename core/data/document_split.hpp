#pragma once
// The split shared by every corpus source (see corpus.hpp for the rule it implements).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace asteria::data::detail {

struct SplitStreams {
  std::vector<std::uint8_t> train;
  std::vector<std::uint8_t> validation;
};

// Throws InputError(source, "validation_fraction", ...) unless 0 <= fraction < 1.
void check_validation_fraction(double fraction, const std::string& source);

// `documents`: non-empty, already in their seeded order. Each document's memory is released as
// soon as it is copied into its stream.
SplitStreams split_documents(std::vector<std::string>&& documents, double validation_fraction);

// "512 bytes", "4.2 kB", "5.1 MB" (decimal units).
std::string format_bytes(std::size_t bytes);

}  // namespace asteria::data::detail

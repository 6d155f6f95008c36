#include "core/data/document_split.hpp"

#include <cmath>
#include <cstdio>

#include "core/common/error.hpp"
#include "core/data/corpus.hpp"

namespace asteria::data::detail {

namespace {

void append_document(std::vector<std::uint8_t>& stream, const char* data, std::size_t size) {
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(data);
  stream.insert(stream.end(), bytes, bytes + size);
  stream.push_back(kEndOfDocument);
}

// Moves the bytes out and frees the document, so the corpus never holds two full copies of
// the text for longer than one document.
void move_document(std::vector<std::uint8_t>& stream, std::string& document) {
  append_document(stream, document.data(), document.size());
  std::string().swap(document);
}

}  // namespace

void check_validation_fraction(double fraction, const std::string& source) {
  if (!(fraction >= 0.0 && fraction < 1.0)) {  // also rejects NaN
    throw InputError(source, "validation_fraction",
                     "expected a value in [0, 1), found " + std::to_string(fraction));
  }
}

SplitStreams split_documents(std::vector<std::string>&& documents, double validation_fraction) {
  SplitStreams streams;
  if (documents.size() == 1) {
    // One document: its first ceil(fraction * size) bytes are validation, leaving at least one
    // byte to training.
    std::string& document = documents.front();
    auto cut = static_cast<std::size_t>(std::ceil(validation_fraction * static_cast<double>(document.size())));
    if (cut >= document.size()) cut = document.size() - 1;
    if (cut > 0) append_document(streams.validation, document.data(), cut);
    append_document(streams.train, document.data() + cut, document.size() - cut);
    std::string().swap(document);
    return streams;
  }

  std::size_t total = 0;
  for (const std::string& document : documents) total += document.size();
  const double wanted = validation_fraction * static_cast<double>(total);
  // Whole documents go to validation until it holds `wanted` bytes; training keeps at least one.
  std::size_t to_validation = 0;
  std::size_t validation_bytes = 0;
  while (to_validation + 1 < documents.size() && static_cast<double>(validation_bytes) < wanted) {
    validation_bytes += documents[to_validation].size();
    ++to_validation;
  }
  streams.validation.reserve(validation_bytes + to_validation);
  streams.train.reserve(total - validation_bytes + documents.size() - to_validation);
  for (std::size_t i = 0; i < documents.size(); ++i) {
    move_document(i < to_validation ? streams.validation : streams.train, documents[i]);
  }
  return streams;
}

std::string format_bytes(std::size_t bytes) {
  if (bytes < 1000) return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
  char text[32];
  const double value = static_cast<double>(bytes);
  if (bytes < 1000 * 1000) {
    std::snprintf(text, sizeof text, "%.1f kB", value / 1e3);
  } else if (bytes < 1000ULL * 1000 * 1000) {
    std::snprintf(text, sizeof text, "%.1f MB", value / 1e6);
  } else {
    std::snprintf(text, sizeof text, "%.1f GB", value / 1e9);
  }
  return text;
}

}  // namespace asteria::data::detail

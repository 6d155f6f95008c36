#pragma once
// Helpers shared by the data tests.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace asteria::data::testing {

// The documents of a stream: the pieces between end-of-document bytes (0). The test documents
// contain no 0 byte, and every stream ends with one.
inline std::vector<std::string> documents_of(const std::vector<std::uint8_t>& stream) {
  std::vector<std::string> documents;
  std::string current;
  for (const std::uint8_t byte : stream) {
    if (byte == 0) {
      documents.push_back(current);
      current.clear();
    } else {
      current.push_back(static_cast<char>(byte));
    }
  }
  if (!current.empty()) documents.push_back(current + "<no end-of-document byte>");
  return documents;
}

// Writes `content` to `file`, creating its directories.
inline void write_file(const std::filesystem::path& file, const std::string& content) {
  std::filesystem::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << content;
}

inline std::vector<std::string> sorted(std::vector<std::string> items) {
  std::sort(items.begin(), items.end());
  return items;
}

}  // namespace asteria::data::testing

#pragma once
// Scratch directories for checkpoint tests, and raw edits of checkpoint files that stand for a
// crash or disk corruption.
#include <gtest/gtest.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tests/io/temp_dir.hpp"

namespace asteria::checkpoint::test {

// Scratch directories: the project's test TempDir.
using ScratchDir = asteria::testing::TempDir;

inline std::vector<std::byte> bytes_of(const std::string& text) {
  const auto* p = reinterpret_cast<const std::byte*>(text.data());
  return {p, p + text.size()};
}

// Flips one bit of the file at `offset`.
inline void flip_bit(const std::filesystem::path& file, std::size_t offset) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(f) << file;
  f.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  f.read(&c, 1);
  c = static_cast<char>(c ^ 0x10);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(&c, 1);
}

}  // namespace asteria::checkpoint::test

// Binary files in a corpus directory: recognised from their first KiB, skipped with one warning
// line that names them, and an error naming the directory and the files when nothing else is left.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/common/error.hpp"
#include "core/data/binary_check.hpp"
#include "core/data/corpus.hpp"
#include "tests/data/data_test_support.hpp"
#include "tests/io/temp_dir.hpp"

namespace asteria::data {
namespace {

namespace fs = std::filesystem;
using asteria::testing::TempDir;

using testing::write_file;

// Bytes as a compressed or encrypted file holds them (a fixed LCG, no NUL byte).
std::string noise(std::size_t size) {
  std::string bytes;
  std::uint32_t x = 12345;
  while (bytes.size() < size) {
    x = x * 1664525u + 1013904223u;
    const auto byte = static_cast<char>(x >> 24);
    if (byte != 0) bytes.push_back(byte);
  }
  return bytes;
}

TEST(BinaryCheck, TextInAnyScriptIsText) {
  EXPECT_FALSE(looks_binary("def f(x):\n\treturn x + 1\r\n\f"));
  EXPECT_FALSE(looks_binary("Gr\xc3\xbc\xc3\x9f" "e, \xe4\xb8\x96\xe7\x95\x8c, \xf0\x9f\x9a\x80 and "
                            "\x1b[31mcolour\x1b[0m"));
  EXPECT_FALSE(looks_binary(""));
  // Latin-1 prose: an invalid UTF-8 byte per accented letter, a few percent of the text.
  EXPECT_FALSE(looks_binary("Le caf\xe9 est pr\xeat, la cr\xe8me aussi: voil\xe0 une phrase assez longue en "
                            "fran\xe7" "ais."));
  // A multi-byte character cut by the end of the checked head counts for nothing.
  EXPECT_FALSE(looks_binary(std::string(100, 'a') + "\xe4\xb8"));
}

TEST(BinaryCheck, ManyControlOrBadBytesAreBinary) {
  EXPECT_TRUE(looks_binary(std::string("\x7f" "ELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\0", 16) + "rest"));
  EXPECT_TRUE(looks_binary(noise(kBinaryCheckBytes)));
  EXPECT_TRUE(looks_binary(std::string(80, 'a') + std::string(20, '\x01')));  // 20% control bytes
  EXPECT_FALSE(looks_binary(std::string(95, 'a') + std::string(5, '\x01')));   // 5%
  // Documents separated by NUL, as a dumped Corpus stream: text.
  const std::string nul(1, '\0');
  EXPECT_FALSE(looks_binary(std::string(500, 'a') + nul + std::string(500, 'b') + nul));
  // UTF-16: a NUL beside every ASCII letter.
  std::string utf16;
  for (char c : std::string("plain words in UTF-16")) utf16 += std::string(1, c) + std::string(1, '\0');
  EXPECT_TRUE(looks_binary(utf16));
}

TEST(CorpusBinaryFiles, AreSkippedWithOneWarningLineNamingThem) {
  TempDir dir;
  write_file(dir.path() / "a.txt", "alpha beta gamma\n");
  write_file(dir.path() / "b.txt", "delta epsilon\n");
  write_file(dir.path() / "image.png", std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16));
  write_file(dir.path() / "sub" / "blob.bin", noise(20000));
  std::ostringstream warnings;
  CorpusOptions options;
  options.validation_fraction = 0.0;
  options.warnings = &warnings;
  const Corpus corpus = Corpus::from_directory(dir.path(), options);
  EXPECT_EQ(corpus.documents(), 2u);
  EXPECT_EQ(corpus.binary_files(), 2u);
  const std::size_t text_bytes = std::string("alpha beta gamma\n").size() + std::string("delta epsilon\n").size();
  EXPECT_EQ(corpus.train().size(), text_bytes + 2);  // each document and its end-of-document byte
  const std::string line = warnings.str();
  EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1) << line;
  EXPECT_NE(line.find("warning: " + dir.path().string() + ": skipped 2 binary files"), std::string::npos) << line;
  EXPECT_NE(line.find((dir.path() / "image.png").string()), std::string::npos) << line;
  EXPECT_NE(line.find((dir.path() / "sub" / "blob.bin").string()), std::string::npos) << line;
  EXPECT_NE(corpus.description().find("2 binary skipped"), std::string::npos) << corpus.description();
}

TEST(CorpusBinaryFiles, ManyAreCountedAndTheFirstFewNamed) {
  TempDir dir;
  write_file(dir.path() / "text.txt", "some text\n");
  for (int i = 0; i < 8; ++i) write_file(dir.path() / ("blob" + std::to_string(i) + ".bin"), noise(100));
  std::ostringstream warnings;
  CorpusOptions options;
  options.validation_fraction = 0.0;
  options.warnings = &warnings;
  EXPECT_EQ(Corpus::from_directory(dir.path(), options).binary_files(), 8u);
  EXPECT_NE(warnings.str().find("skipped 8 binary files"), std::string::npos) << warnings.str();
  EXPECT_NE(warnings.str().find((dir.path() / "blob4.bin").string() + " and 3 more"), std::string::npos)
      << warnings.str();
}

TEST(CorpusBinaryFiles, OnlyBinaryFilesAreAnErrorNamingTheDirectoryAndTheFile) {
  TempDir dir;
  write_file(dir.path() / "program", std::string("\x7f" "ELF\x02\x01\x01\0\0\0", 10));
  std::ostringstream warnings;
  CorpusOptions options;
  options.warnings = &warnings;
  try {
    (void)Corpus::from_directory(dir.path(), options);
    FAIL() << "a directory of binary files must be refused";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.source(), dir.path().string());
    EXPECT_NE(message.find("expected at least one text file"), std::string::npos) << message;
    EXPECT_NE(message.find("1 binary"), std::string::npos) << message;
    EXPECT_NE(message.find((dir.path() / "program").string()), std::string::npos) << message;
    EXPECT_NE(message.find("--data"), std::string::npos) << message;
  }
  EXPECT_EQ(warnings.str(), "");  // the error says it all
}

}  // namespace
}  // namespace asteria::data

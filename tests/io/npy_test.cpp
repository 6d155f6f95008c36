// .npy reading and writing: round trips, hand-built files of every accepted form, and a clear
// InputError (file, field, expectation) for every malformed input. The hand-built files are
// assembled byte by byte here, independently of the writer.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <initializer_list>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/common/error.hpp"
#include "core/io/npy.hpp"
#include "tests/io/temp_dir.hpp"

namespace asteria::io {
namespace {

using testing::TempDir;

// Magic, version, little-endian header length (2 bytes for 1.0, 4 otherwise), header, data.
std::string npy_bytes(int major, const std::string& header, const std::string& data) {
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  const int length_bytes = major == 1 ? 2 : 4;
  for (int i = 0; i < length_bytes; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  return out + header + data;
}

template <class T>
std::string raw(std::initializer_list<T> values) {
  std::string out(values.size() * sizeof(T), '\0');
  std::memcpy(out.data(), std::data(values), out.size());
  return out;
}

void write_bytes(const std::string& file, const std::string& bytes) {
  std::ofstream(file, std::ios::binary) << bytes;
}

std::string read_bytes(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

// read_npy(file) must throw InputError for `field` whose message names the file and holds
// every fragment.
void expect_error(const std::string& file, const std::string& field, std::initializer_list<std::string> fragments) {
  try {
    read_npy(file);
    ADD_FAILURE() << "expected InputError for " << field;
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.source(), file) << message;
    EXPECT_EQ(e.field(), field) << message;
    EXPECT_NE(message.find(file), std::string::npos) << message;
    for (const std::string& fragment : fragments)
      EXPECT_NE(message.find(fragment), std::string::npos) << "missing '" << fragment << "' in: " << message;
  }
}

template <Real T>
std::vector<T> counting(std::size_t n) {
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<T>(0.25 * static_cast<double>(i) - 1.5);
  return v;
}

template <class T>
class NpyRoundTrip : public ::testing::Test {};
using Dtypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(NpyRoundTrip, Dtypes);

TYPED_TEST(NpyRoundTrip, ZeroOneAndThreeDimensionalShapesSurviveExactly) {
  using T = TypeParam;
  TempDir dir;
  const std::vector<std::vector<index>> shapes = {{}, {7}, {2, 3, 4}, {0, 3}};
  for (const auto& shape : shapes) {
    std::size_t n = 1;
    for (index d : shape) n *= static_cast<std::size_t>(d);
    const std::vector<T> values = counting<T>(n);
    const std::string file = dir.file("a.npy");
    write_npy<T>(file, shape, values);

    const NpyArray back = read_npy(file);
    EXPECT_EQ(back.shape, shape) << format_shape(shape);
    EXPECT_EQ(back.dtype(), dtype_of<T>());
    ASSERT_EQ(back.size(), n);
    EXPECT_EQ(back.values_as<T>(), values) << format_shape(shape);

    // The layout NumPy expects: version 1.0, header padded so the data starts at a multiple of 64.
    const std::string bytes = read_bytes(file);
    ASSERT_GE(bytes.size(), 10U);
    EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
    const std::size_t header_len =
        static_cast<unsigned char>(bytes[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8);
    EXPECT_EQ((10 + header_len) % 64, 0U);
    EXPECT_EQ(bytes[10 + header_len - 1], '\n');
    EXPECT_EQ(bytes.size(), 10 + header_len + n * sizeof(T));
    const std::string header = bytes.substr(10, header_len);
    EXPECT_NE(header.find(sizeof(T) == 4 ? "'<f4'" : "'<f8'"), std::string::npos) << header;
    EXPECT_NE(header.find("'shape': " + format_shape(shape)), std::string::npos) << header;
  }
}

TEST(Npy, FormatsShapesAsPythonTuples) {
  EXPECT_EQ(format_shape(std::vector<index>{}), "()");
  EXPECT_EQ(format_shape(std::vector<index>{3}), "(3,)");
  EXPECT_EQ(format_shape(std::vector<index>{2, 3}), "(2, 3)");
}

TEST(Npy, ReadsVersion2And3Headers) {
  TempDir dir;
  for (int major : {2, 3}) {
    const std::string file = dir.file("v" + std::to_string(major) + ".npy");
    write_bytes(file, npy_bytes(major, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }\n",
                                raw<double>({1.0, -2.0, 3.5, 4.25})));
    const NpyArray a = read_npy(file);
    EXPECT_EQ(a.shape, (std::vector<index>{2, 2}));
    EXPECT_EQ(a.dtype(), DType::float64);
    EXPECT_EQ(a.values_as<double>(), (std::vector<double>{1.0, -2.0, 3.5, 4.25}));
  }
}

TEST(Npy, AcceptsNativeDescrsOtherKeyOrdersQuotesAndPython2Longs) {
  TempDir dir;
  const std::string file = dir.file("a.npy");
  write_bytes(file, npy_bytes(1, "{\"shape\": (3L,), \"fortran_order\": False, \"descr\": \"=f4\"}   \n",
                              raw<float>({1.5f, 2.5f, -3.0f})));
  const NpyArray a = read_npy(file);
  EXPECT_EQ(a.shape, (std::vector<index>{3}));
  EXPECT_EQ(a.dtype(), DType::float32);
  EXPECT_EQ(a.values_as<float>(), (std::vector<float>{1.5f, 2.5f, -3.0f}));
  EXPECT_EQ(a.values_as<double>(), (std::vector<double>{1.5, 2.5, -3.0}));
}

TEST(Npy, ConvertsFortranOrderToCOrder) {
  TempDir dir;
  // C-order [[0, 1, 2], [3, 4, 5]] stored column by column.
  const std::string file2 = dir.file("f2.npy");
  write_bytes(file2, npy_bytes(1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }\n",
                               raw<double>({0, 3, 1, 4, 2, 5})));
  EXPECT_EQ(read_npy(file2).values_as<double>(), (std::vector<double>{0, 1, 2, 3, 4, 5}));

  // Shape (2, 3, 2): element (i, j, k) has C offset 6i + 2j + k and Fortran offset i + 2j + 6k.
  std::vector<float> fortran(12), expected(12);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 2; ++k) {
        const float value = static_cast<float>(100 * i + 10 * j + k);
        expected[static_cast<std::size_t>(6 * i + 2 * j + k)] = value;
        fortran[static_cast<std::size_t>(i + 2 * j + 6 * k)] = value;
      }
  const std::string file3 = dir.file("f3.npy");
  write_bytes(file3, npy_bytes(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3, 2), }\n",
                               std::string(reinterpret_cast<const char*>(fortran.data()), 48)));
  const NpyArray a = read_npy(file3);
  EXPECT_EQ(a.shape, (std::vector<index>{2, 3, 2}));
  EXPECT_EQ(a.values_as<float>(), expected);
}

TEST(NpyErrors, MissingFileAndDirectory) {
  TempDir dir;
  expect_error(dir.file("absent.npy"), "file", {"not found"});
  expect_error(dir.path().string(), "file", {"regular"});
}

TEST(NpyErrors, WrongMagicAndShortFiles) {
  TempDir dir;
  const std::string file = dir.file("bad.npy");
  write_bytes(file, "PK\x03\x04 this is a zip archive, not an array");
  expect_error(file, "magic", {"\\x93NUMPY"});
  write_bytes(file, "\x93NUM");
  expect_error(file, "magic", {"NUMPY"});
  write_bytes(file, std::string("\x93NUMPY\x01\x00\x10", 9));
  expect_error(file, "header_len", {"2-byte"});
}

TEST(NpyErrors, UnsupportedVersion) {
  TempDir dir;
  const std::string file = dir.file("v4.npy");
  std::string bytes = npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), }\n", raw<float>({1.0f}));
  bytes[6] = 4;
  write_bytes(file, bytes);
  expect_error(file, "version", {"1.0, 2.0 or 3.0", "found 4.0"});
  bytes[6] = 1;
  bytes[7] = 1;
  write_bytes(file, bytes);
  expect_error(file, "version", {"found 1.1"});
}

TEST(NpyErrors, HeaderThatIsNotADict) {
  TempDir dir;
  const std::string file = dir.file("h.npy");
  write_bytes(file, npy_bytes(1, "['descr', '<f4']\n", raw<float>({1.0f})));
  expect_error(file, "header", {"dict"});
  write_bytes(file, npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)\n", raw<float>({1.0f})));
  expect_error(file, "header", {"expected ',' or '}'"});
  write_bytes(file, npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,)} x\n", raw<float>({1.0f})));
  expect_error(file, "header", {"after the dict"});
}

TEST(NpyErrors, TruncatedHeader) {
  TempDir dir;
  const std::string file = dir.file("h.npy");
  std::string bytes = npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }\n", "");
  write_bytes(file, bytes.substr(0, bytes.size() - 20));
  expect_error(file, "header", {"truncated", "header bytes"});
}

TEST(NpyErrors, MissingRepeatedOrUnknownKeys) {
  TempDir dir;
  const std::string file = dir.file("k.npy");
  write_bytes(file, npy_bytes(1, "{'descr': '<f4', 'fortran_order': False}\n", raw<float>({1.0f})));
  expect_error(file, "shape", {"missing"});
  write_bytes(file, npy_bytes(1, "{'fortran_order': False, 'shape': ()}\n", raw<float>({1.0f})));
  expect_error(file, "descr", {"missing"});
  write_bytes(file, npy_bytes(1, "{'descr': '<f4', 'shape': ()}\n", raw<float>({1.0f})));
  expect_error(file, "fortran_order", {"missing"});
  write_bytes(file, npy_bytes(1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}\n",
                              raw<float>({1.0f})));
  expect_error(file, "header", {"more than once"});
  write_bytes(file, npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (), 'extra': 1}\n",
                              raw<float>({1.0f})));
  expect_error(file, "header", {"'extra'"});
}

TEST(NpyErrors, MalformedValues) {
  TempDir dir;
  const std::string file = dir.file("v.npy");
  write_bytes(file, npy_bytes(1, "{'descr': '<f4', 'fortran_order': false, 'shape': ()}\n", raw<float>({1.0f})));
  expect_error(file, "fortran_order", {"True or False"});
  write_bytes(file, npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3)}\n", raw<float>({1, 2, 3})));
  expect_error(file, "shape", {"tuple", "(3)"});
  write_bytes(file, npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 2)}\n", ""));
  expect_error(file, "shape", {"non-negative"});
  write_bytes(file, npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': '(1,)'}\n", raw<float>({1})));
  expect_error(file, "shape", {"tuple"});
}

TEST(NpyErrors, UnsupportedDtypesAreNamed) {
  TempDir dir;
  const std::string file = dir.file("d.npy");
  for (const std::string descr : {"<i8", "<f2", "|u1", "<c8", "float32"}) {
    write_bytes(file, npy_bytes(1, "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (1,), }\n",
                                std::string(8, '\0')));
    expect_error(file, "descr", {"unsupported dtype '" + descr + "'", "'<f4'", "'<f8'"});
  }
  write_bytes(file, npy_bytes(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }\n",
                              std::string(4, '\0')));
  expect_error(file, "descr", {"unsupported dtype [('a', '<f4')]"});
}

TEST(NpyErrors, BigEndianIsRejectedWithAHint) {
  TempDir dir;
  const std::string file = dir.file("be.npy");
  write_bytes(file, npy_bytes(1, "{'descr': '>f8', 'fortran_order': False, 'shape': (1,), }\n", std::string(8, '\0')));
  expect_error(file, "descr", {"big-endian", "'>f8'", "astype('<f8')"});
}

TEST(NpyErrors, TruncatedDataAndTrailingGarbageGiveByteCounts) {
  TempDir dir;
  const std::string file = dir.file("t.npy");
  const std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n";
  write_bytes(file, npy_bytes(1, header, std::string(20, '\0')));
  expect_error(file, "data", {"truncated", "expected 24 bytes", "(2, 3)", "found 20"});
  write_bytes(file, npy_bytes(1, header, std::string(27, '\0')));
  expect_error(file, "data", {"trailing garbage", "expected 24 bytes", "found 27", "3 extra bytes"});
}

// Corrupted files (random byte flips and truncations) are either read or rejected with an
// InputError naming the source; nothing else escapes (run under ASan, nothing reads out of bounds).
TEST(NpyErrors, RandomCorruptionsAreReadOrRejectedCleanly) {
  const std::string valid = npy_bytes(1, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3, 1), }\n",
                                      std::string(48, '\x01'));
  std::mt19937 gen(5);
  std::uniform_int_distribution<std::size_t> position(0, valid.size() - 1);
  std::uniform_int_distribution<int> byte(0, 255);
  int rejected = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string bytes = valid;
    for (int flips = 1 + trial % 3; flips > 0; --flips) bytes[position(gen)] = static_cast<char>(byte(gen));
    if (trial % 5 == 0) bytes.resize(position(gen));
    try {
      const NpyArray a = parse_npy(std::as_bytes(std::span<const char>(bytes)), "fuzz.npy");
      std::size_t n = 1;
      for (index d : a.shape) n *= static_cast<std::size_t>(d);
      EXPECT_EQ(a.size(), n);
    } catch (const InputError& e) {
      EXPECT_EQ(e.source(), "fuzz.npy");
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 1000);
}

TEST(NpyWrite, RejectsAValueCountThatDoesNotMatchTheShapeAndKeepsTheOldFile) {
  TempDir dir;
  const std::string file = dir.file("keep.npy");
  write_bytes(file, "previous content");
  const std::vector<index> shape = {2, 3};
  const std::vector<float> five(5, 1.0f);
  try {
    write_npy<float>(file, shape, five);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.source(), file);
    EXPECT_NE(std::string(e.what()).find("expected 6 values"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_bytes(file), "previous content");
}

TEST(NpyWrite, FailedWritesLeaveNoFileAndNoTemporary) {
  TempDir dir;
  const std::vector<index> shape = {2};
  const std::vector<double> values = {1.0, 2.0};
  // Missing directory.
  EXPECT_THROW(write_npy<double>(dir.file("missing/a.npy"), shape, values), InputError);
  // The target is a directory: the final rename fails after the data was written.
  std::filesystem::create_directory(dir.path() / "occupied.npy");
  try {
    write_npy<double>(dir.file("occupied.npy"), shape, values);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "write") << e.what();
  }
  EXPECT_TRUE(std::filesystem::is_directory(dir.path() / "occupied.npy"));
  int entries = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    ++entries;
    EXPECT_EQ(entry.path().filename(), "occupied.npy") << "left behind: " << entry.path();
  }
  EXPECT_EQ(entries, 1);
}

TEST(NpyWrite, ReplacesAnExistingFile) {
  TempDir dir;
  const std::string file = dir.file("a.npy");
  write_bytes(file, "old");
  const std::vector<index> shape = {3};
  const std::vector<float> values = {1, 2, 3};
  write_npy<float>(file, shape, values);
  EXPECT_EQ(read_npy(file).values_as<float>(), values);
}

TEST(NpyWrite, LargeHeadersSwitchToVersion2) {
  TempDir dir;
  const std::string file = dir.file("wide.npy");
  const std::vector<index> shape(30000, 1);  // a header far beyond 65535 bytes
  const std::vector<double> values = {42.0};
  write_npy<double>(file, shape, values);
  const std::string bytes = read_bytes(file);
  EXPECT_EQ(bytes[6], '\x02');
  const NpyArray a = read_npy(file);
  EXPECT_EQ(a.shape, shape);
  EXPECT_EQ(a.values_as<double>(), values);
}

}  // namespace
}  // namespace asteria::io

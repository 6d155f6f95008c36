// Failures a disk, a filesystem or a full budget can cause, each provoked for real (as root
// too: no reliance on permission bits), each expected as a non-ok Status that names the block
// label, the file and the operation, with the previous version of the block left intact.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <functional>
#include <iostream>

#include "core/common/error.hpp"
#include "core/real/nvme/nvme_store.hpp"
#include "tests/nvme/nvme_test_support.hpp"

namespace {

using asteria::Status;
using asteria::StatusCode;
using asteria::real::NvmeOptions;
using asteria::real::NvmeStore;
using asteria::testing::NvmeMode;
using asteria::testing::pattern;
using asteria::testing::ScratchDir;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

#define EXPECT_NAMES(status, ...)                                                      \
  do {                                                                                 \
    for (const std::string& part : std::initializer_list<std::string>{__VA_ARGS__})    \
      EXPECT_TRUE(contains((status).reason(), part)) << "missing \"" << part << "\" in: " << (status).reason(); \
  } while (0)

class NvmeFaults : public ::testing::TestWithParam<NvmeMode> {
 protected:
  NvmeFaults() : store_(dir_.path(), options()) {}
  NvmeOptions options() const { return asteria::testing::options_for(GetParam()); }

  // Writes `data` as block `id` and checks it reads back.
  void put(std::uint64_t id, const std::vector<std::byte>& data) {
    const Status written = store_.write(id, data, "setup");
    ASSERT_TRUE(written.ok()) << written.message();
  }
  void expect_block(std::uint64_t id, const std::vector<std::byte>& data) {
    std::vector<std::byte> out(data.size());
    const Status read = store_.read(id, out, "check");
    ASSERT_TRUE(read.ok()) << read.message();
    EXPECT_TRUE(out == data) << "block " << id << " does not hold the expected version";
  }

  ScratchDir dir_;
  NvmeStore store_;
};

TEST_P(NvmeFaults, StagingPathThatIsADirectoryFailsTheOpen) {
  const auto v1 = pattern(50'000, 1);
  put(3, v1);
  std::filesystem::create_directory(store_.staging_path_of(3));
  const Status status = store_.write(3, pattern(50'000, 2), "layer0.w block 3");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::io_error);
  EXPECT_NAMES(status, "write block 'layer0.w block 3' (id 3)", store_.staging_path_of(3).string(), ": open: ",
               "EISDIR");
  expect_block(3, v1);
}

TEST_P(NvmeFaults, BlockPathThatIsADirectoryFailsThePublishAndTheRead) {
  std::filesystem::create_directory(store_.path_of(4));
  const Status status = store_.write(4, pattern(9000, 2), "blocked");
  ASSERT_FALSE(status.ok());
  EXPECT_NAMES(status, "'blocked' (id 4)", "publish (rename to " + store_.path_of(4).string() + ")", "EISDIR");
  EXPECT_FALSE(std::filesystem::exists(store_.staging_path_of(4))) << "the staging file was left behind";
  EXPECT_EQ(store_.used_bytes(), 0U);
  std::vector<std::byte> out(9000);
  const Status read = store_.read(4, out, "blocked");
  ASSERT_FALSE(read.ok());
  EXPECT_NAMES(read, "read block 'blocked' (id 4)", store_.path_of(4).string(), "not a regular file");
}

// /dev/full accepts the open and fails every write with ENOSPC: a full disk, for real, from the
// write completion itself.
TEST_P(NvmeFaults, FullDeviceReportsNoSpaceAndKeepsThePreviousVersion) {
  ASSERT_TRUE(std::filesystem::exists("/dev/full")) << "Linux provides /dev/full; this test needs it";
  const auto v1 = pattern(300'000, 1);
  put(5, v1);
  std::filesystem::create_symlink("/dev/full", store_.staging_path_of(5));
  const Status status = store_.write(5, pattern(300'000, 2), "spilled optimizer state");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::resource_exhausted);
  EXPECT_NAMES(status, "write block 'spilled optimizer state' (id 5)", store_.staging_path_of(5).string(), "write of",
               "No space left on device", "ENOSPC");
  expect_block(5, v1);
  EXPECT_EQ(store_.used_bytes(), 4096 + v1.size());
}

// RLIMIT_FSIZE caps the size of any file this process writes: EFBIG, without root tricks.
TEST_P(NvmeFaults, FileSizeLimitReportsFileTooLarge) {
  struct rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto previous_handler = std::signal(SIGXFSZ, SIG_IGN);  // the limit also raises SIGXFSZ
  struct rlimit capped = saved;
  capped.rlim_cur = 256 * 1024;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &capped), 0);
  const Status too_big = store_.write(6, pattern(1 << 20, 1), "big block");
  const Status small = store_.write(7, pattern(100'000, 1), "small block");
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, previous_handler);

  ASSERT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.code(), StatusCode::resource_exhausted);
  EXPECT_NAMES(too_big, "write block 'big block' (id 6)", store_.staging_path_of(6).string(), "File too large");
  EXPECT_TRUE(small.ok()) << small.message();
  EXPECT_FALSE(std::filesystem::exists(store_.staging_path_of(6)));
  EXPECT_FALSE(std::filesystem::exists(store_.path_of(6)));
}

TEST_P(NvmeFaults, ReadOfAMissingBlockNamesTheFile) {
  std::vector<std::byte> out(10);
  const Status status = store_.read(99, out, "never written");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), StatusCode::io_error);
  EXPECT_NAMES(status, "read block 'never written' (id 99)", store_.path_of(99).string(), ": open: ", "ENOENT");
}

struct Corruption {
  const char* name;
  std::function<void(const std::filesystem::path& file, std::uint64_t payload_bytes)> apply;
  const char* symptom;  // expected in the Status reason
};

TEST_P(NvmeFaults, CorruptedFilesAreDetectedAndNamed) {
  constexpr std::uint64_t kPayload = 100'007;
  const std::uint64_t kFile = 4096 + kPayload;
  const auto flip = [](std::uint64_t offset) {
    return [offset](const std::filesystem::path& f, std::uint64_t) { asteria::testing::flip_byte(f, offset); };
  };
  const auto resize = [](std::uint64_t bytes) {
    return [bytes](const std::filesystem::path& f, std::uint64_t) { std::filesystem::resize_file(f, bytes); };
  };
  const Corruption corruptions[] = {
      {"first payload byte", flip(4096), "payload checksum mismatch"},
      {"middle payload byte", flip(4096 + kPayload / 2), "payload checksum mismatch"},
      {"last payload byte", flip(kFile - 1), "payload checksum mismatch"},
      {"magic", flip(0), "bad magic"},
      {"version", flip(8), "header checksum mismatch"},
      {"id field", flip(16), "header checksum mismatch"},
      {"length field", flip(24), "header checksum mismatch"},
      {"stored payload checksum", flip(32), "header checksum mismatch"},
      {"header checksum", flip(40), "header checksum mismatch"},
      {"truncated by one byte", resize(kFile - 1), "truncated or extended"},
      {"truncated into the header", resize(100), "truncated"},
      {"emptied", resize(0), "truncated"},
      {"extended by one byte", resize(kFile + 1), "truncated or extended"},
      {"another block's file", [this](const std::filesystem::path& f, std::uint64_t) {
         std::filesystem::copy_file(store_.path_of(2), f, std::filesystem::copy_options::overwrite_existing);
       }, "holds block id 2, not 1"},
  };
  const auto data = pattern(kPayload, 1);
  put(2, pattern(kPayload, 2));
  for (const Corruption& corruption : corruptions) {
    SCOPED_TRACE(corruption.name);
    put(1, data);
    corruption.apply(store_.path_of(1), kPayload);
    std::vector<std::byte> out(kPayload);
    const Status status = store_.read(1, out, "layer7.v block 1");
    ASSERT_FALSE(status.ok()) << "corruption went unnoticed";
    EXPECT_EQ(status.code(), StatusCode::io_error);
    EXPECT_NAMES(status, "read block 'layer7.v block 1' (id 1)", store_.path_of(1).string(), corruption.symptom);
  }
  put(1, data);  // a rewrite heals the block
  expect_block(1, data);
}

TEST_P(NvmeFaults, CapacityBudgetRefusesWritesBeyondIt) {
  constexpr std::size_t kPayload = 10'000;
  NvmeOptions limited = options();
  limited.capacity_bytes = 3 * (4096 + kPayload);
  ScratchDir other;
  NvmeStore store(other.path(), limited);
  for (std::uint64_t id = 1; id <= 3; ++id) ASSERT_TRUE(store.write(id, pattern(kPayload, id), "fits").ok());
  EXPECT_EQ(store.used_bytes(), limited.capacity_bytes);

  const Status full = store.write(4, pattern(kPayload, 4), "one too many");
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.code(), StatusCode::resource_exhausted);
  EXPECT_NAMES(full, "write block 'one too many' (id 4)", store.staging_path_of(4).string(), "capacity budget exceeded");
  EXPECT_FALSE(std::filesystem::exists(store.staging_path_of(4)));
  EXPECT_FALSE(std::filesystem::exists(store.path_of(4)));

  // Replacing a block needs room for both versions until the new one is published.
  const Status replace = store.write(1, pattern(kPayload, 9), "replacement");
  EXPECT_EQ(replace.code(), StatusCode::resource_exhausted) << replace.message();
  std::vector<std::byte> out(kPayload);
  ASSERT_TRUE(store.read(1, out, "old").ok());
  EXPECT_EQ(out, pattern(kPayload, 1));

  store.remove(2);
  EXPECT_TRUE(store.write(4, pattern(kPayload, 4), "fits now").ok());
  EXPECT_EQ(store.write(5, pattern(limited.capacity_bytes, 5), "larger than the budget").code(),
            StatusCode::resource_exhausted);
}

INSTANTIATE_TEST_SUITE_P(Mechanisms, NvmeFaults, ::testing::ValuesIn(asteria::testing::kNvmeModes),
                         asteria::testing::mode_name);

TEST(NvmeDirectory, AFileWhereTheDirectoryShouldBeIsAClearError) {
  ScratchDir dir;
  const auto file = dir / "occupied";
  std::ofstream(file) << "x";
  try {
    NvmeStore store(file, {});
    FAIL() << "a regular file was accepted as the store directory";
  } catch (const asteria::InputError& e) {
    EXPECT_EQ(e.source(), file.string());
    EXPECT_TRUE(contains(e.what(), "not a directory")) << e.what();
  }
  try {
    NvmeStore store(file / "below", {});
    FAIL() << "a directory below a regular file was accepted";
  } catch (const asteria::InputError& e) {
    EXPECT_EQ(e.source(), (file / "below").string());
    EXPECT_TRUE(contains(e.what(), "cannot be created")) << e.what();
  }
}

}  // namespace

// Blocks written and read back bit-exact, through each way bytes can move: io_uring or
// pread/pwrite, O_DIRECT or the page cache, aligned or misaligned caller buffers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <random>

#include "core/common/error.hpp"
#include "core/real/nvme/nvme_store.hpp"
#include "core/real/tier_backend.hpp"
#include "tests/nvme/nvme_test_support.hpp"

namespace {

using asteria::StatusCode;
using asteria::real::AlignedBuffer;
using asteria::real::DirectIo;
using asteria::real::IoMechanism;
using asteria::real::NvmeOptions;
using asteria::real::NvmeStore;
using asteria::testing::pattern;
using asteria::testing::ScratchDir;

using asteria::testing::NvmeMode;

class NvmeRoundTrip : public ::testing::TestWithParam<NvmeMode> {
 protected:
  NvmeOptions options(unsigned depth = 8, std::size_t chunk = std::size_t{1} << 20) const {
    NvmeOptions o = asteria::testing::options_for(GetParam());
    o.queue_depth = depth;
    o.chunk_bytes = chunk;
    return o;
  }
  void check_mode(const NvmeStore& store) {
    std::cout << "[ mechanism ] " << GetParam().name << ": " << store.mechanism() << "\n";
    RecordProperty("mechanism", store.mechanism());
    EXPECT_EQ(store.uses_direct_io(), GetParam().direct == DirectIo::on);
    if (GetParam().mechanism == IoMechanism::syscalls) {
      EXPECT_FALSE(store.uses_io_uring());
    }
    EXPECT_EQ(store.mechanism().find("io_uring (") == 0, store.uses_io_uring()) << store.mechanism();
  }
  ScratchDir dir_;
};

// Writes then reads `bytes` at the given caller-buffer misalignment (0 = 4096-aligned).
void round_trip(NvmeStore& store, std::uint64_t id, std::size_t bytes, std::size_t misalign, std::uint64_t seed) {
  SCOPED_TRACE("id " + std::to_string(id) + ", " + std::to_string(bytes) + " bytes, misaligned by " +
               std::to_string(misalign));
  const auto expected = pattern(bytes, seed);
  AlignedBuffer source_storage(bytes + misalign);
  AlignedBuffer target_storage(bytes + misalign);
  std::span<std::byte> source(source_storage.data() + misalign, bytes);
  std::span<std::byte> target(target_storage.data() + misalign, bytes);
  std::copy(expected.begin(), expected.end(), source.begin());
  std::fill(target.begin(), target.end(), std::byte{0xEE});

  const auto written = store.write(id, source, "round trip");
  ASSERT_TRUE(written.ok()) << written.message();
  ASSERT_TRUE(std::equal(source.begin(), source.end(), expected.begin())) << "write changed the caller's bytes";
  const auto read = store.read(id, target, "round trip");
  ASSERT_TRUE(read.ok()) << read.message();
  ASSERT_TRUE(std::equal(target.begin(), target.end(), expected.begin())) << "read returned different bytes";
}

const std::size_t kSizes[] = {0, 1, 4095, 4096, 4097, (std::size_t{1} << 20) + 3, std::size_t{64} << 20};

TEST_P(NvmeRoundTrip, BitExactForManySizesAndRandomIds) {
  NvmeStore store(dir_.path(), options());
  check_mode(store);
  std::mt19937_64 rng(11);
  std::uint64_t expected_used = 0;
  for (std::size_t bytes : kSizes) {
    const std::uint64_t id = rng();
    round_trip(store, id, bytes, 0, id);
    expected_used += 4096 + bytes;
    EXPECT_EQ(std::filesystem::file_size(store.path_of(id)), 4096 + bytes);
  }
  EXPECT_EQ(store.used_bytes(), expected_used);
  EXPECT_EQ(store.block_count(), std::size(kSizes));
}

TEST_P(NvmeRoundTrip, MisalignedCallerBuffersGoThroughBounceBuffers) {
  NvmeStore store(dir_.path(), options());
  check_mode(store);
  std::uint64_t id = 1;
  for (std::size_t misalign : {1U, 8U, 512U, 4095U})
    for (std::size_t bytes : {std::size_t{1}, std::size_t{4097}, (std::size_t{3} << 20) + 5}) {
        round_trip(store, id, bytes, misalign, id);
        ++id;
      }
}

TEST_P(NvmeRoundTrip, TinyChunksWithManyRequestsInFlight) {
  // 4 KiB chunks, 3 in flight: a 1 MiB block is 257 requests completing in any order.
  NvmeStore store(dir_.path(), options(3, 4096));
  check_mode(store);
  std::uint64_t id = 100;
  for (std::size_t bytes : {std::size_t{0}, std::size_t{4097}, (std::size_t{1} << 20) + 3})
    for (std::size_t misalign : {0U, 3U}) {
        round_trip(store, id, bytes, misalign, id);
        ++id;
      }
}

TEST_P(NvmeRoundTrip, FileHoldsHeaderThenPayloadVerbatim) {
  NvmeStore store(dir_.path(), options());
  check_mode(store);
  const auto data = pattern(10'000, 77);
  ASSERT_TRUE(store.write(0xABCDEF, data, "layout").ok());
  EXPECT_EQ(store.path_of(0xABCDEF), dir_.path() / "0000000000abcdef.blk");
  const auto file = asteria::testing::read_whole_file(store.path_of(0xABCDEF));
  ASSERT_EQ(file.size(), 4096 + data.size());
  EXPECT_EQ(std::memcmp(file.data(), "ASTNVME1", 8), 0);
  EXPECT_EQ(asteria::testing::read_le64(file, 16), 0xABCDEFU);
  EXPECT_EQ(asteria::testing::read_le64(file, 24), data.size());
  EXPECT_EQ(std::memcmp(file.data() + 4096, data.data(), data.size()), 0);
  EXPECT_FALSE(std::filesystem::exists(store.staging_path_of(0xABCDEF)));
}

TEST_P(NvmeRoundTrip, OverwriteReplacesContentAndLength) {
  NvmeStore store(dir_.path(), options());
  check_mode(store);
  const auto first = pattern(5000, 1);
  const auto second = pattern(3 * 4096, 2);
  ASSERT_TRUE(store.write(9, first, "w").ok());
  ASSERT_TRUE(store.write(9, second, "w").ok());
  EXPECT_EQ(store.used_bytes(), 4096 + second.size());
  std::vector<std::byte> out(second.size());
  ASSERT_TRUE(store.read(9, out, "w").ok());
  EXPECT_EQ(out, second);
  std::vector<std::byte> old_size(first.size());
  const auto mismatch = store.read(9, old_size, "w");
  EXPECT_EQ(mismatch.code(), StatusCode::invalid_argument) << mismatch.message();
  EXPECT_NE(mismatch.reason().find("12288"), std::string::npos) << mismatch.reason();
}

TEST_P(NvmeRoundTrip, RemoveDeletesTheFileAndItsAccounting) {
  NvmeStore store(dir_.path(), options());
  check_mode(store);
  const auto data = pattern(8192, 4);
  ASSERT_TRUE(store.write(5, data, "r").ok());
  ASSERT_TRUE(std::filesystem::exists(store.path_of(5)));
  store.remove(5);
  store.remove(12345);  // never written: nothing happens
  EXPECT_EQ(store.used_bytes(), 0U) << "removal is logical at once";
  EXPECT_EQ(store.block_count(), 0U);
  std::vector<std::byte> out(data.size());
  const auto status = store.read(5, out, "gone block");  // whether or not the file is deleted yet
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.reason().find("gone block"), std::string::npos) << status.reason();
  EXPECT_NE(status.reason().find(store.path_of(5).string()), std::string::npos) << status.reason();
  EXPECT_NE(status.reason().find("No such file"), std::string::npos) << status.reason();
  store.flush_removals();
  EXPECT_FALSE(std::filesystem::exists(store.path_of(5)));
}

TEST_P(NvmeRoundTrip, AWriteAfterARemoveKeepsItsFileAndTheStoreDeletesTheRestBeforeItCloses) {
  const auto first = pattern(8192, 4);
  const auto second = pattern(5000, 6);
  std::filesystem::path kept_path;
  std::filesystem::path removed_path;
  {
    NvmeStore store(dir_.path(), options());
    for (std::uint64_t id : {5u, 6u}) ASSERT_TRUE(store.write(id, first, "r").ok());
    store.remove(5);
    ASSERT_TRUE(store.write(5, second, "rewritten").ok());  // cancels the pending deletion
    store.remove(6);
    store.flush_removals();
    std::vector<std::byte> out(second.size());
    ASSERT_TRUE(store.read(5, out, "rewritten").ok());
    EXPECT_EQ(out, second);
    EXPECT_EQ(store.block_count(), 1U);
    kept_path = store.path_of(5);
    removed_path = store.path_of(6);
    for (std::uint64_t id = 100; id < 140; ++id) ASSERT_TRUE(store.write(id, first, "many").ok());
    for (std::uint64_t id = 100; id < 140; ++id) store.remove(id);
  }  // closing deletes every removed file
  EXPECT_TRUE(std::filesystem::exists(kept_path));
  EXPECT_FALSE(std::filesystem::exists(removed_path));
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir_.path()))
    files += entry.path().extension() == ".blk" ? 1 : 0;
  EXPECT_EQ(files, 1U);
}

TEST_P(NvmeRoundTrip, ReopenedStoreAdoptsBlocksAndDropsInterruptedWrites) {
  const auto data = pattern(70'000, 8);
  {
    NvmeStore store(dir_.path(), options());
    check_mode(store);
    ASSERT_TRUE(store.write(77, data, "kept").ok());
    // A second store on the same directory would clobber the first one's files.
    EXPECT_THROW(NvmeStore(dir_.path(), options()), asteria::InputError);
  }
  std::ofstream(dir_ / "000000000000004d.blk.tmp") << "half-written";
  std::ofstream(dir_ / "notes.txt") << "not ours";
  NvmeStore store(dir_.path(), options());
  EXPECT_EQ(store.block_count(), 1U);
  EXPECT_EQ(store.used_bytes(), 4096 + data.size());
  EXPECT_FALSE(std::filesystem::exists(dir_ / "000000000000004d.blk.tmp"));
  EXPECT_TRUE(std::filesystem::exists(dir_ / "notes.txt"));
  std::vector<std::byte> out(data.size());
  ASSERT_TRUE(store.read(77, out, "kept").ok());
  EXPECT_EQ(out, data);
}

INSTANTIATE_TEST_SUITE_P(Mechanisms, NvmeRoundTrip, ::testing::ValuesIn(asteria::testing::kNvmeModes),
                         asteria::testing::mode_name);

TEST(NvmeOptions, InvalidValuesAreRejectedWithTheFieldName) {
  ScratchDir dir;
  NvmeOptions bad_depth;
  bad_depth.queue_depth = 0;
  try {
    NvmeStore store(dir.path(), bad_depth);
    FAIL() << "queue depth 0 accepted";
  } catch (const asteria::InputError& e) {
    EXPECT_EQ(e.field(), "queue_depth");
  }
  NvmeOptions bad_chunk;
  bad_chunk.chunk_bytes = 5000;
  try {
    NvmeStore store(dir.path(), bad_chunk);
    FAIL() << "chunk of 5000 bytes accepted";
  } catch (const asteria::InputError& e) {
    EXPECT_EQ(e.field(), "chunk_bytes");
  }
}

TEST(NvmeOptions, DirectoryIsCreatedWhenMissing) {
  ScratchDir dir;
  const auto nested = dir.path() / "a" / "b";
  NvmeStore store(nested, {});
  EXPECT_TRUE(std::filesystem::is_directory(nested));
  EXPECT_EQ(store.directory(), nested);
  std::cout << "[ mechanism ] defaults: " << store.mechanism() << "\n";
}

}  // namespace

namespace {

// RealMemory reaches the store through its NvmeTier interface (core/real/tier_backend.hpp).
TEST(NvmeStoreTier, RoundTripsThroughRealMemorysInterface) {
  ScratchDir dir;
  NvmeStore store(dir.path(), {});
  asteria::real::NvmeStoreTier<NvmeStore> adapter(store);
  asteria::real::NvmeTier& tier = adapter;
  const auto data = pattern(123'457, 31);
  ASSERT_TRUE(tier.write(8, data, "region 8").ok());
  std::vector<std::byte> out(data.size());
  ASSERT_TRUE(tier.read(8, out, "region 8").ok());
  EXPECT_EQ(out, data);
  tier.remove(8);
  tier.remove(9);  // never written
  EXPECT_FALSE(tier.read(8, out, "region 8").ok());
  EXPECT_EQ(store.block_count(), 0U);
}

}  // namespace

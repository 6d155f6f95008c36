// The checkpoint format: header and manifest round trips, two slots written in turn, and every
// way a slot can be unusable (interrupted, torn, corrupted) leaving the other one loaded.
#include <gtest/gtest.h>

#include "core/checkpoint/checkpoint_reader.hpp"
#include "core/checkpoint/checkpoint_writer.hpp"
#include "core/common/error.hpp"
#include "tests/checkpoint/checkpoint_test_support.hpp"

namespace asteria::checkpoint::test {
namespace {

void write_checkpoint(const std::filesystem::path& dir, std::int64_t step, const std::string& payload) {
  CheckpointWriter w(dir, step, {{"run", "test"}, {"payload", payload}});
  w.add("first", bytes_of("alpha " + payload));
  w.add("second", bytes_of(std::string(1000, 'x') + payload));
  w.add("empty", {});
  w.commit();
}

TEST(CheckpointFormat, HeaderAndManifestRoundTrip) {
  const std::vector<std::byte> header = encode_header({42, 7});
  ASSERT_EQ(header.size(), kHeaderBytes);
  const Header h = parse_header(header, "h");
  EXPECT_EQ(h.step, 42);
  EXPECT_EQ(h.sequence, 7U);

  Manifest m;
  m.step = 42;
  m.sequence = 7;
  m.data_bytes = kHeaderBytes + 10;
  m.header_checksum = header_checksum(header);
  m.chunks = {{"a", kHeaderBytes, 4, 0x1234}, {"b/c d", kHeaderBytes + 4, 6, 0xffffffffffffffffULL}};
  m.meta = {{"args", "[\"--lr\",\"0.1\"]"}};
  const Manifest back = parse_manifest(encode_manifest(m), "m");
  EXPECT_EQ(back.step, 42);
  EXPECT_EQ(back.sequence, 7U);
  ASSERT_EQ(back.chunks.size(), 2U);
  EXPECT_EQ(back.chunks[1].name, "b/c d");
  EXPECT_EQ(back.chunks[1].checksum, 0xffffffffffffffffULL);
  EXPECT_EQ(back.meta.at("args"), m.meta.at("args"));
}

TEST(CheckpointFormat, ACorruptedHeaderOrManifestIsAnInputErrorNamingTheField) {
  std::vector<std::byte> header = encode_header({3, 1});
  header[20] ^= std::byte{1};
  try {
    (void)parse_header(header, "state.bin");
    FAIL() << "a corrupted header was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "header.checksum");
  }
  EXPECT_THROW((void)parse_header(std::span(header).first(12), "state.bin"), InputError);

  Manifest m;
  m.data_bytes = kHeaderBytes + 3;
  m.chunks = {{"a", kHeaderBytes, 3, 1}};
  std::string text = encode_manifest(m);
  text.replace(text.find("\"bytes\": 3"), 10, "\"bytes\": 2");
  try {
    (void)parse_manifest(text, "manifest.json");
    FAIL() << "an edited manifest was accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "checksum");
  }
  EXPECT_THROW((void)parse_manifest("{", "manifest.json"), InputError);
  EXPECT_THROW((void)parse_manifest("[]", "manifest.json"), InputError);
}

TEST(CheckpointFormat, ChunksOutsideTheFileOverlappingOrTwiceAreRefused) {
  for (const std::vector<Chunk>& chunks :
       {std::vector<Chunk>{{"a", kHeaderBytes, 100, 0}}, std::vector<Chunk>{{"a", kHeaderBytes, 4, 0}, {"b", kHeaderBytes + 2, 2, 0}},
        std::vector<Chunk>{{"a", kHeaderBytes, 1, 0}, {"a", kHeaderBytes + 1, 1, 0}},
        std::vector<Chunk>{{"a", 0, 1, 0}}}) {
    Manifest m;
    m.data_bytes = kHeaderBytes + 8;
    m.chunks = chunks;
    EXPECT_THROW((void)parse_manifest(encode_manifest(m), "manifest.json"), InputError) << chunks.size();
  }
}

TEST(CheckpointFormat, SlotsAlternateAndTheNewestLoads) {
  ScratchDir dir;
  const std::filesystem::path ckpt = dir.path() / "ckpt";
  write_checkpoint(ckpt, 1, "one");
  write_checkpoint(ckpt, 2, "two");
  write_checkpoint(ckpt, 3, "three");
  const CheckpointReader r = CheckpointReader::open_latest(ckpt);
  EXPECT_EQ(r.step(), 3);
  EXPECT_EQ(r.manifest().sequence, 3U);
  EXPECT_EQ(r.slot().filename(), "slot-a");  // 1 -> a, 2 -> b, 3 -> a
  EXPECT_TRUE(r.passed_over().empty());
  EXPECT_EQ(r.read("first"), bytes_of("alpha three"));
  EXPECT_TRUE(r.read("empty").empty());
  EXPECT_EQ(r.meta("payload"), "three");
  EXPECT_THROW((void)r.read("missing"), InputError);
  EXPECT_THROW((void)r.meta("missing"), InputError);
}

TEST(CheckpointFormat, AWriterThatNeverCommitsLeavesThePreviousCheckpoint) {
  ScratchDir dir;
  const std::filesystem::path ckpt = dir.path() / "ckpt";
  write_checkpoint(ckpt, 1, "one");
  write_checkpoint(ckpt, 2, "two");
  {
    CheckpointWriter w(ckpt, 3, {});
    w.add("first", bytes_of("partial"));
  }  // a crash before commit: the slot being written has no manifest
  const CheckpointReader r = CheckpointReader::open_latest(ckpt);
  EXPECT_EQ(r.step(), 2);
  ASSERT_EQ(r.passed_over().size(), 1U);
  EXPECT_NE(r.passed_over()[0].find("manifest"), std::string::npos) << r.passed_over()[0];
  for (const auto& entry : std::filesystem::recursive_directory_iterator(ckpt))
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos) << entry.path();
}

TEST(CheckpointFormat, ACorruptedChunkInTheNewestSlotFallsBackToTheOlderOneAndSaysWhy) {
  ScratchDir dir;
  const std::filesystem::path ckpt = dir.path() / "ckpt";
  write_checkpoint(ckpt, 1, "one");
  write_checkpoint(ckpt, 2, "two");
  const Manifest newest = CheckpointReader::open_latest(ckpt).manifest();
  flip_bit(ckpt / "slot-b" / "state.bin", newest.find("second")->offset + 500);
  const CheckpointReader r = CheckpointReader::open_latest(ckpt);
  EXPECT_EQ(r.step(), 1);
  ASSERT_EQ(r.passed_over().size(), 1U);
  EXPECT_NE(r.passed_over()[0].find("slot-b"), std::string::npos);
  EXPECT_NE(r.passed_over()[0].find("chunk 'second'"), std::string::npos) << r.passed_over()[0];
  EXPECT_NE(r.passed_over()[0].find("checksum mismatch"), std::string::npos) << r.passed_over()[0];
}

TEST(CheckpointFormat, ATornDataFileOrAManifestOfAnotherCheckpointIsPassedOver) {
  ScratchDir dir;
  const std::filesystem::path ckpt = dir.path() / "ckpt";
  write_checkpoint(ckpt, 1, "one");
  write_checkpoint(ckpt, 2, "two");
  std::filesystem::resize_file(ckpt / "slot-b" / "state.bin", 100);
  EXPECT_EQ(CheckpointReader::open_latest(ckpt).step(), 1);
  // slot-a's data file under slot-b's manifest: sizes may agree, the header does not.
  write_checkpoint(ckpt, 3, "two");  // into slot-b again (slot-a holds the newest loadable)
  std::filesystem::copy_file(ckpt / "slot-a" / "state.bin", ckpt / "slot-b" / "state.bin",
                             std::filesystem::copy_options::overwrite_existing);
  const CheckpointReader r = CheckpointReader::open_latest(ckpt);
  EXPECT_EQ(r.step(), 1);
  EXPECT_FALSE(r.passed_over().empty());
}

TEST(CheckpointFormat, NoLoadableSlotIsAnInputErrorListingEachSlotsReason) {
  ScratchDir dir;
  const std::filesystem::path ckpt = dir.path() / "ckpt";
  write_checkpoint(ckpt, 1, "one");
  std::filesystem::remove(ckpt / "slot-a" / "manifest.json");
  try {
    (void)CheckpointReader::open_latest(ckpt);
    FAIL() << "an empty checkpoint directory was opened";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("slot-a"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("slot-b"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)CheckpointReader::open_latest(dir.path() / "nowhere"), InputError);
  EXPECT_THROW(CheckpointWriter(dir.path() / "missing" / "ckpt", 1, {}), InputError);
}

}  // namespace
}  // namespace asteria::checkpoint::test

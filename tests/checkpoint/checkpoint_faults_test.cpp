// Disk faults while a checkpoint is written or read: out of space, I/O errors, short writes and
// a failing sync each give an IoError naming the file (and the chunk being written), and the
// previous checkpoint stays the one that loads.
#include <gtest/gtest.h>

#include "core/checkpoint/checkpoint_reader.hpp"
#include "core/checkpoint/checkpoint_writer.hpp"
#include "core/common/error.hpp"
#include "tests/checkpoint/checkpoint_test_support.hpp"
#include "tests/checkpoint/faulty_file_system.hpp"

namespace asteria::checkpoint::test {
namespace {

void write_two_chunks(const std::filesystem::path& dir, std::int64_t step, io::FileSystem* files) {
  CheckpointWriter w(dir, step, {}, files);
  w.add("block/layer0 block 1/values", bytes_of(std::string(4096, 'a' + static_cast<char>(step))));
  w.add("block/layer1 block 0/values", bytes_of(std::string(4096, 'A' + static_cast<char>(step))));
  w.commit();
}

struct Fault {
  const char* name;
  void (*arm)(FaultyFileSystem&);
  const char* expect_in_message;
};

TEST(CheckpointFaults, EachDiskFaultIsAnIoErrorAndThePreviousCheckpointStillLoads) {
  const Fault faults[] = {
      {"disk full in the second chunk", [](FaultyFileSystem& f) { f.space_left = kHeaderBytes + 4096 + 100; },
       "chunk 'block/layer1 block 0/values': No space left on device"},
      {"I/O error on write", [](FaultyFileSystem& f) { f.fail_writes = true; }, "Input/output error"},
      {"I/O error on sync", [](FaultyFileSystem& f) { f.fail_sync = true; }, "Input/output error"},
  };
  for (const Fault& fault : faults) {
    SCOPED_TRACE(fault.name);
    ScratchDir dir;
    const std::filesystem::path ckpt = dir.path() / "ckpt";
    write_two_chunks(ckpt, 1, nullptr);
    FaultyFileSystem files;
    fault.arm(files);
    try {
      write_two_chunks(ckpt, 2, &files);
      FAIL() << "the fault went unnoticed";
    } catch (const IoError& e) {
      EXPECT_NE(std::string(e.what()).find(fault.expect_in_message), std::string::npos) << e.what();
      EXPECT_NE(e.file().find("ckpt"), std::string::npos) << e.file();
    }
    const CheckpointReader r = CheckpointReader::open_latest(ckpt);
    EXPECT_EQ(r.step(), 1);
    EXPECT_EQ(r.read("block/layer0 block 1/values"), bytes_of(std::string(4096, 'b')));
  }
}

TEST(CheckpointFaults, ShortWritesAreContinuedAndTheCheckpointIsWhole) {
  ScratchDir dir;
  FaultyFileSystem files;
  files.largest_write = 7;
  write_two_chunks(dir.path() / "ckpt", 1, &files);
  EXPECT_GT(files.writes, 1000);
  const CheckpointReader r = CheckpointReader::open_latest(dir.path() / "ckpt");
  EXPECT_EQ(r.read("block/layer1 block 0/values"), bytes_of(std::string(4096, 'B')));
}

TEST(CheckpointFaults, AnIoErrorWhileReadingNamesTheFileAndChunk) {
  ScratchDir dir;
  write_two_chunks(dir.path() / "ckpt", 1, nullptr);
  FaultyFileSystem files;
  const CheckpointReader r = CheckpointReader::open_latest(dir.path() / "ckpt", &files);
  files.fail_reads = true;
  try {
    (void)r.read("block/layer0 block 1/values");
    FAIL() << "a failed read went unnoticed";
  } catch (const IoError& e) {
    EXPECT_NE(std::string(e.what()).find("state.bin"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("chunk 'block/layer0 block 1/values'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace asteria::checkpoint::test

#pragma once
// Writes one checkpoint into a checkpoint directory (checkpoint_format.hpp), crash-consistently:
//
//   CheckpointWriter w(dir, step, meta);     // picks the slot that does not hold the newest
//                                            // checkpoint and unlinks its manifest first
//   w.add("model/wte", bytes); ...           // streamed to a temporary data file, checksummed
//   w.commit();                              // data fsynced and renamed, then the manifest
//                                            // (temporary, fsync, rename), then the directories
//
// Until commit() returns, the other slot holds the newest checkpoint untouched; a crash at any
// point leaves it loadable. A failed call (disk full, I/O error, a short write that cannot be
// completed) throws IoError naming the file and the chunk; nothing the caller holds in memory
// is changed, and the destructor removes the temporary file.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>

#include "core/checkpoint/checkpoint_format.hpp"
#include "core/io/file_system.hpp"

namespace asteria::checkpoint {

class CheckpointWriter {
 public:
  // `dir` is created if missing (its parent must exist: InputError otherwise). `files`: the
  // calls to make (null: the operating system's); it must outlive the writer.
  CheckpointWriter(std::filesystem::path dir, std::int64_t step, std::map<std::string, std::string> meta,
                   io::FileSystem* files = nullptr);
  ~CheckpointWriter();
  CheckpointWriter(const CheckpointWriter&) = delete;
  CheckpointWriter& operator=(const CheckpointWriter&) = delete;

  // Appends a chunk; names are unique within a checkpoint.
  void add(const std::string& name, std::span<const std::byte> bytes);
  void commit();

  const std::filesystem::path& slot() const noexcept { return slot_; }
  std::uint64_t data_bytes() const noexcept { return manifest_.data_bytes; }

 private:
  void write_all(int fd, std::span<const std::byte> bytes, const std::filesystem::path& file, const std::string& what);
  void sync_directory(const std::filesystem::path& dir);
  [[noreturn]] void fail(const std::filesystem::path& file, const std::string& what, int error) const;

  std::unique_ptr<io::PosixFileSystem> own_files_;
  io::FileSystem* files_;
  std::filesystem::path dir_;
  std::filesystem::path slot_;
  std::filesystem::path temporary_;
  Manifest manifest_;
  int fd_ = -1;
  bool committed_ = false;
};

}  // namespace asteria::checkpoint

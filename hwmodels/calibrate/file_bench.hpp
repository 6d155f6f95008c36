#pragma once
// Sequential file bandwidth and small-read latency in a scratch directory (the NVMe tier's
// figures when the directory lies on the NVMe drive).
#include <cstddef>
#include <filesystem>
#include <string>

#include "hwmodels/calibrate/measurement.hpp"

namespace asteria::hw::calibrate {

// A fresh, uniquely named directory inside `parent`, removed with its contents on destruction.
// Creating it is the check that `parent` is a writable directory: otherwise InputError names
// `option` (the command-line option that chose it) and `parent`.
class ScratchDirectory {
 public:
  ScratchDirectory(const std::filesystem::path& parent, const std::string& option);
  ~ScratchDirectory();
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;

  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
};

struct FileIoPlan {
  std::size_t bytes = std::size_t{1} << 30;          // file size (rounded up to whole requests)
  std::size_t request_bytes = std::size_t{8} << 20;  // one write() / read(), a multiple of 4 KiB
  int latency_samples = 256;                         // 4 KiB random reads for the latency
};

struct FileIo {
  Measured write;         // bytes/s: sequential writes then fsync, from first write to fsync's return
  Measured read;          // bytes/s: sequential reads of the file just written
  Measured read_latency;  // s: median 4 KiB random read; not measured without O_DIRECT (page cache)
  bool direct = false;    // O_DIRECT was used (bypassing the page cache)
  std::string file_system;  // "ext4", "xfs", "tmpfs (memory, not a drive)", ...
};

// The type of the file system holding `path`, by statfs magic number ("ext4", "tmpfs (memory,
// not a drive)", or "file system 0x..." for one not listed).
std::string file_system_of(const std::filesystem::path& path);

// Writes, syncs and reads back one file of plan.bytes in `directory`, then removes it.
// Throws InputError naming the directory when the file cannot be created, written or read.
FileIo measure_file_io(const std::filesystem::path& directory, const FileIoPlan& plan);

}  // namespace asteria::hw::calibrate

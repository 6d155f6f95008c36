#pragma once
// Opens the newest loadable checkpoint of a checkpoint directory (checkpoint_format.hpp) and
// reads its chunks. A slot is loadable when its manifest parses and passes its checksum, the
// data file's header matches it, the file has the listed size, and every chunk's bytes match
// their checksum: a slot that fails (a crash while it was written, a torn or corrupted file) is
// passed over for the other one, and the reason is kept for the caller to report.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/checkpoint/checkpoint_format.hpp"
#include "core/io/file_system.hpp"

namespace asteria::checkpoint {

// What the writer needs to know of the slots (manifest and header only, no chunk read).
struct SlotScan {
  std::optional<std::size_t> newest;  // index into kSlotNames of the newest complete-looking slot
  std::uint64_t next_sequence = 1;
};
SlotScan scan_slots(const std::filesystem::path& dir, io::FileSystem& files);

// Whether `dir` holds a checkpoint directory's slots (loadable or not).
bool is_checkpoint_directory(const std::filesystem::path& dir);

class CheckpointReader {
 public:
  // Throws InputError naming `dir` when no slot is loadable, with each slot's reason. `files`
  // must outlive the reader (null: the operating system's calls).
  static CheckpointReader open_latest(const std::filesystem::path& dir, io::FileSystem* files = nullptr);

  std::int64_t step() const noexcept { return manifest_.step; }
  const Manifest& manifest() const noexcept { return manifest_; }
  const std::filesystem::path& slot() const noexcept { return slot_; }
  // Slots passed over, each "slot-b: <reason>": the caller warns that a newer one was unusable.
  const std::vector<std::string>& passed_over() const noexcept { return passed_over_; }

  bool has(std::string_view name) const noexcept { return manifest_.find(name) != nullptr; }
  // The chunk's bytes, checked again against its checksum. Throws InputError for a chunk the
  // checkpoint does not hold and IoError naming the file and chunk for a failed or corrupted read.
  std::vector<std::byte> read(std::string_view name) const;
  // A string of the manifest's metadata; InputError naming the slot and key when missing.
  const std::string& meta(const std::string& key) const;
  bool has_meta(const std::string& key) const { return manifest_.meta.count(key) != 0; }

 private:
  CheckpointReader(std::filesystem::path slot, Manifest manifest, io::FileSystem* files,
                   std::shared_ptr<io::PosixFileSystem> own);

  std::filesystem::path slot_;
  Manifest manifest_;
  io::FileSystem* files_;
  std::shared_ptr<io::PosixFileSystem> own_files_;
  std::vector<std::string> passed_over_;
};

}  // namespace asteria::checkpoint

#include "core/checkpoint/checkpoint_writer.hpp"

#include <fcntl.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "core/checkpoint/checkpoint_reader.hpp"
#include "core/common/error.hpp"
#include "core/io/xxhash64.hpp"

namespace asteria::checkpoint {

CheckpointWriter::CheckpointWriter(std::filesystem::path dir, std::int64_t step, std::map<std::string, std::string> meta,
                                   io::FileSystem* files)
    : own_files_(files == nullptr ? std::make_unique<io::PosixFileSystem>() : nullptr),
      files_(files == nullptr ? own_files_.get() : files),
      dir_(std::move(dir)) {
  const std::filesystem::path parent = dir_.has_parent_path() ? dir_.parent_path() : std::filesystem::path(".");
  std::error_code ec;
  if (!std::filesystem::is_directory(parent, ec))
    throw InputError(dir_.string(), "checkpoint directory", "its parent '" + parent.string() + "' does not exist");
  for (std::string_view name : kSlotNames) std::filesystem::create_directories(dir_ / name, ec);
  if (ec) throw IoError(dir_.string(), "create the checkpoint slots", ec.message());
  sync_directory(dir_);

  // The slot to write: not the one holding the newest checkpoint (its manifest and header agree).
  const SlotScan scan = scan_slots(dir_, *files_);
  std::size_t target = 0;
  if (scan.newest) target = 1 - *scan.newest;
  slot_ = dir_ / kSlotNames[target];
  manifest_.step = step;
  manifest_.sequence = scan.next_sequence;
  manifest_.meta = std::move(meta);

  // The slot stops being loadable before any of its bytes change.
  const std::filesystem::path manifest = slot_ / kManifestFile;
  if (files_->unlink(manifest.c_str()) != 0 && errno != ENOENT) fail(manifest, "remove the old manifest", errno);
  sync_directory(slot_);

  temporary_ = slot_ / (std::string(".") + std::string(kDataFile) + ".tmp");
  fd_ = files_->open(temporary_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd_ < 0) fail(temporary_, "create", errno);
  const std::vector<std::byte> header = encode_header({step, manifest_.sequence});
  write_all(fd_, header, temporary_, "write the header");
  manifest_.header_checksum = header_checksum(header);
  manifest_.data_bytes = header.size();
}

CheckpointWriter::~CheckpointWriter() {
  if (fd_ >= 0) files_->close(fd_);
  if (!committed_ && !temporary_.empty()) files_->unlink(temporary_.c_str());
}

void CheckpointWriter::fail(const std::filesystem::path& file, const std::string& what, int error) const {
  throw IoError(file.string(), what, std::strerror(error));
}

void CheckpointWriter::write_all(int fd, std::span<const std::byte> bytes, const std::filesystem::path& file,
                                 const std::string& what) {
  // A short write is continued, as POSIX allows it to be; a write that makes no progress fails.
  while (!bytes.empty()) {
    const ::ssize_t n = files_->write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(file, what, errno);
    if (n == 0) fail(file, what, ENOSPC);
    bytes = bytes.subspan(static_cast<std::size_t>(n));
  }
}

void CheckpointWriter::sync_directory(const std::filesystem::path& dir) {
  const int fd = files_->open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
  if (fd < 0) fail(dir, "open the directory to sync it", errno);
  const int synced = files_->fsync(fd);
  const int error = errno;
  files_->close(fd);
  if (synced != 0) fail(dir, "sync the directory", error);
}

void CheckpointWriter::add(const std::string& name, std::span<const std::byte> bytes) {
  if (committed_ || fd_ < 0) throw std::logic_error("CheckpointWriter::add after commit or a failure");
  if (manifest_.find(name) != nullptr) throw std::logic_error("CheckpointWriter::add: chunk '" + name + "' twice");
  Chunk chunk{name, manifest_.data_bytes, bytes.size(), io::xxh64(bytes)};
  try {
    write_all(fd_, bytes, temporary_, "write chunk '" + name + "'");
  } catch (...) {
    files_->close(fd_);
    fd_ = -1;
    throw;
  }
  manifest_.data_bytes += bytes.size();
  manifest_.chunks.push_back(std::move(chunk));
}

void CheckpointWriter::commit() {
  if (committed_ || fd_ < 0) throw std::logic_error("CheckpointWriter::commit twice or after a failure");
  const int fd = fd_;
  fd_ = -1;
  if (files_->fsync(fd) != 0) {
    const int error = errno;
    files_->close(fd);
    fail(temporary_, "flush to disk", error);
  }
  if (files_->close(fd) != 0) fail(temporary_, "close", errno);
  const std::filesystem::path data = slot_ / kDataFile;
  if (files_->rename(temporary_.c_str(), data.c_str()) != 0) fail(data, "rename the temporary data file", errno);
  temporary_.clear();

  const std::string text = encode_manifest(manifest_);
  const std::filesystem::path manifest = slot_ / kManifestFile;
  const std::filesystem::path manifest_temporary = slot_ / (std::string(".") + std::string(kManifestFile) + ".tmp");
  const int mfd = files_->open(manifest_temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (mfd < 0) fail(manifest_temporary, "create", errno);
  try {
    write_all(mfd, std::as_bytes(std::span(text.data(), text.size())), manifest_temporary, "write the manifest");
    if (files_->fsync(mfd) != 0) fail(manifest_temporary, "flush to disk", errno);
  } catch (...) {
    files_->close(mfd);
    files_->unlink(manifest_temporary.c_str());
    throw;
  }
  if (files_->close(mfd) != 0) fail(manifest_temporary, "close", errno);
  if (files_->rename(manifest_temporary.c_str(), manifest.c_str()) != 0) fail(manifest, "rename the manifest", errno);
  sync_directory(slot_);
  committed_ = true;
}

}  // namespace asteria::checkpoint

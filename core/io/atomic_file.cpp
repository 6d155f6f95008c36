#include "core/io/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

#include "core/common/error.hpp"

namespace asteria::io {
namespace {

std::string errno_text(int error) { return std::strerror(error); }

// Owns the temporary file until it is renamed: closes and removes it on every early exit.
class TemporaryFile {
 public:
  explicit TemporaryFile(const std::filesystem::path& target) : target_(target) {
    const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
      throw InputError(target.string(), "directory", "expected an existing directory '" + dir.string() + "'");
    std::random_device entropy;
    for (int attempt = 0; attempt < 16 && fd_ < 0; ++attempt) {
      char suffix[32];
      std::snprintf(suffix, sizeof suffix, ".tmp-%08x%08x", entropy(), entropy());
      std::string name = ".";  // hidden, next to the target
      name += target.filename().string();
      name += suffix;
      path_ = dir / name;
      // 0666 lets the process umask decide the final permissions, as for any new file.
      fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd_ < 0 && errno != EEXIST) fail("could not create a temporary file in '" + dir.string() + "'", errno);
    }
    if (fd_ < 0) fail("could not create a unique temporary file in '" + dir.string() + "'", EEXIST);
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
  ~TemporaryFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_ && !path_.empty()) ::unlink(path_.c_str());
  }

  void write(std::span<const std::byte> bytes) {
    const std::byte* data = bytes.data();
    std::size_t left = bytes.size();
    while (left > 0) {
      const ::ssize_t n = ::write(fd_, data, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) fail("could not write", n < 0 ? errno : EIO);
      data += n;
      left -= static_cast<std::size_t>(n);
    }
  }

  void commit() {
    if (::fsync(fd_) != 0) fail("could not flush to disk", errno);
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail("could not close", errno);
    if (::rename(path_.c_str(), target_.c_str()) != 0) fail("could not rename the temporary file over it", errno);
    committed_ = true;
  }

 private:
  [[noreturn]] void fail(const std::string& what, int error) const {
    throw InputError(target_.string(), "write", what + ": " + errno_text(error));
  }

  std::filesystem::path target_;
  std::filesystem::path path_;
  int fd_ = -1;
  bool committed_ = false;
};

}  // namespace

std::string_view file_type_text(std::filesystem::file_type type) noexcept {
  switch (type) {
    case std::filesystem::file_type::regular: return "a regular file";
    case std::filesystem::file_type::directory: return "a directory";
    case std::filesystem::file_type::symlink: return "a symbolic link";
    case std::filesystem::file_type::block: return "a block device";
    case std::filesystem::file_type::character: return "a character device";
    case std::filesystem::file_type::fifo: return "a named pipe";
    case std::filesystem::file_type::socket: return "a socket";
    case std::filesystem::file_type::not_found: return "nothing";
    default: return "a file of unknown type";
  }
}

std::filesystem::path writable_target(const std::filesystem::path& file) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status link = fs::symlink_status(file, ec);
  if (!fs::exists(link)) return file;
  if (fs::is_regular_file(link)) return file;
  // Renaming over a link would replace the link: write to what it names, a regular file only.
  const fs::file_status target = fs::status(file, ec);
  if (fs::is_symlink(link) && (fs::is_regular_file(target) || !fs::exists(target))) {
    const fs::path resolved = fs::weakly_canonical(file, ec);
    if (!ec) return resolved;
  }
  const fs::file_type type = fs::is_symlink(link) ? target.type() : link.type();
  throw InputError(file.string(), "write",
                   "a regular file to replace (or none), found " + std::string(file_type_text(type)) +
                       (fs::is_symlink(link) ? " behind a symbolic link" : "") + ": it is left as it is");
}

void write_file_atomically(const std::filesystem::path& file, std::span<const std::span<const std::byte>> pieces) {
  TemporaryFile temporary(writable_target(file));
  for (std::span<const std::byte> piece : pieces) temporary.write(piece);
  temporary.commit();
}

void write_file_atomically(const std::filesystem::path& file, std::string_view text) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(text.data()), text.size());
  write_file_atomically(file, std::span<const std::span<const std::byte>>(&bytes, 1));
}

}  // namespace asteria::io

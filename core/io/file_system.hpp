#pragma once
// The few POSIX calls a durable write and a checked read make, behind an interface: checkpoints
// go through it, so that tests can make a call fail where the disk would (ENOSPC, EIO, a short
// write, a torn file) and check that the caller reports it and loses nothing.
//
// Each call behaves as its POSIX namesake: a result < 0 means failure, with the reason in errno.
#include <sys/types.h>

#include <cstddef>

namespace asteria::io {

class FileSystem {
 public:
  virtual ~FileSystem() = default;
  virtual int open(const char* path, int flags, int mode) = 0;
  virtual ::ssize_t write(int fd, const void* data, std::size_t bytes) = 0;
  virtual ::ssize_t pread(int fd, void* data, std::size_t bytes, ::off_t offset) = 0;
  virtual int fsync(int fd) = 0;
  virtual int close(int fd) = 0;
  virtual int rename(const char* from, const char* to) = 0;
  virtual int unlink(const char* path) = 0;
};

// The operating system's calls.
class PosixFileSystem final : public FileSystem {
 public:
  int open(const char* path, int flags, int mode) override;
  ::ssize_t write(int fd, const void* data, std::size_t bytes) override;
  ::ssize_t pread(int fd, void* data, std::size_t bytes, ::off_t offset) override;
  int fsync(int fd) override;
  int close(int fd) override;
  int rename(const char* from, const char* to) override;
  int unlink(const char* path) override;
};

}  // namespace asteria::io

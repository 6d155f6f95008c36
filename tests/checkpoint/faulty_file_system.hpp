#pragma once
// A FileSystem that passes calls to the operating system's until told to fail them the way a
// disk does: out of space after some bytes, I/O errors on write, sync or read, short writes.
#include <cerrno>
#include <cstddef>

#include "core/io/file_system.hpp"

namespace asteria::checkpoint::test {

class FaultyFileSystem final : public io::FileSystem {
 public:
  std::size_t space_left = static_cast<std::size_t>(-1);  // bytes writes may still add (ENOSPC after)
  std::size_t largest_write = static_cast<std::size_t>(-1);  // a write takes at most this much (short writes)
  bool fail_writes = false;  // EIO
  bool fail_sync = false;    // EIO from fsync
  bool fail_reads = false;   // EIO from pread
  int writes = 0;            // write calls made

  int open(const char* path, int flags, int mode) override { return real_.open(path, flags, mode); }
  ::ssize_t write(int fd, const void* data, std::size_t bytes) override {
    ++writes;
    if (fail_writes) return fail(EIO);
    if (space_left == 0) return fail(ENOSPC);
    std::size_t n = bytes < largest_write ? bytes : largest_write;
    if (n > space_left) n = space_left;
    const ::ssize_t done = real_.write(fd, data, n);
    if (done > 0) space_left -= static_cast<std::size_t>(done);
    return done;
  }
  ::ssize_t pread(int fd, void* data, std::size_t bytes, ::off_t offset) override {
    if (fail_reads) return fail(EIO);
    return real_.pread(fd, data, bytes, offset);
  }
  int fsync(int fd) override { return fail_sync ? static_cast<int>(fail(EIO)) : real_.fsync(fd); }
  int close(int fd) override { return real_.close(fd); }
  int rename(const char* from, const char* to) override { return real_.rename(from, to); }
  int unlink(const char* path) override { return real_.unlink(path); }

 private:
  static ::ssize_t fail(int error) {
    errno = error;
    return -1;
  }
  io::PosixFileSystem real_;
};

}  // namespace asteria::checkpoint::test

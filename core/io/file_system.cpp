#include "core/io/file_system.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

namespace asteria::io {

int PosixFileSystem::open(const char* path, int flags, int mode) { return ::open(path, flags, mode); }
::ssize_t PosixFileSystem::write(int fd, const void* data, std::size_t bytes) { return ::write(fd, data, bytes); }
::ssize_t PosixFileSystem::pread(int fd, void* data, std::size_t bytes, ::off_t offset) {
  return ::pread(fd, data, bytes, offset);
}
int PosixFileSystem::fsync(int fd) { return ::fsync(fd); }
int PosixFileSystem::close(int fd) { return ::close(fd); }
int PosixFileSystem::rename(const char* from, const char* to) { return std::rename(from, to); }
int PosixFileSystem::unlink(const char* path) { return ::unlink(path); }

}  // namespace asteria::io

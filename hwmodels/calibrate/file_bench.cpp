#include "hwmodels/calibrate/file_bench.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/common/error.hpp"

namespace asteria::hw::calibrate {
namespace {

constexpr std::size_t kPage = 4096;  // O_DIRECT alignment of buffers, offsets and sizes

std::string os_error(int error) { return std::strerror(error); }

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const noexcept { return fd_; }

 private:
  int fd_;
};

struct AlignedFree {
  void operator()(std::byte* p) const noexcept { std::free(p); }
};
using AlignedBuffer = std::unique_ptr<std::byte, AlignedFree>;

AlignedBuffer aligned_buffer(std::size_t bytes) {
  void* p = std::aligned_alloc(kPage, bytes);
  if (p == nullptr) throw Error("calibrate: cannot allocate a " + std::to_string(bytes) + "-byte I/O buffer");
  return AlignedBuffer(static_cast<std::byte*>(p));
}

// Opens with O_DIRECT where the file system supports it (tmpfs does not: EINVAL), else buffered.
int open_file(const std::filesystem::path& file, int flags, bool& direct) {
  int fd = ::open(file.c_str(), flags | O_DIRECT | O_CLOEXEC, 0600);
  direct = fd >= 0;
  if (fd < 0 && errno == EINVAL) fd = ::open(file.c_str(), flags | O_CLOEXEC, 0600);
  return fd;
}

[[noreturn]] void fail(const std::filesystem::path& directory, const std::string& what, int error) {
  throw InputError(directory.string(), "scratch file", "expected to " + what + ": " + os_error(error));
}

void write_all(int fd, const std::byte* data, std::size_t length, off_t offset, const std::filesystem::path& dir) {
  while (length > 0) {
    const ssize_t done = ::pwrite(fd, data, length, offset);
    if (done < 0 && errno == EINTR) continue;
    if (done <= 0) fail(dir, "write the benchmark file", done < 0 ? errno : ENOSPC);
    data += done;
    length -= static_cast<std::size_t>(done);
    offset += done;
  }
}

void read_all(int fd, std::byte* data, std::size_t length, off_t offset, const std::filesystem::path& dir) {
  while (length > 0) {
    const ssize_t done = ::pread(fd, data, length, offset);
    if (done < 0 && errno == EINTR) continue;
    if (done <= 0) fail(dir, "read the benchmark file back", done < 0 ? errno : EIO);
    data += done;
    length -= static_cast<std::size_t>(done);
    offset += done;
  }
}

std::string size_text(std::size_t bytes) {
  if (bytes % (std::size_t{1} << 30) == 0) return std::to_string(bytes >> 30) + " GiB";
  if (bytes % (std::size_t{1} << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " B";
}

}  // namespace

std::string file_system_of(const std::filesystem::path& path) {
  struct statfs info {};
  if (::statfs(path.c_str(), &info) != 0) return "unknown file system";
  // Magic numbers from linux/magic.h: the file systems scratch space is commonly on.
  struct Known {
    unsigned long magic;
    const char* name;
  };
  constexpr std::array kKnown = {
      Known{0xEF53, "ext4"},          Known{0x58465342, "xfs"},  Known{0x9123683E, "btrfs"},
      Known{0x2FC12FC1, "zfs"},       Known{0x6969, "nfs"},      Known{0x794C7630, "overlayfs"},
      Known{0x01021994, "tmpfs (memory, not a drive)"},        Known{0x0BD00BD0, "lustre"},
      Known{0x47504653, "gpfs"},
  };
  const auto magic = static_cast<unsigned long>(info.f_type);
  for (const Known& known : kKnown)
    if (known.magic == magic) return known.name;
  char text[40];
  std::snprintf(text, sizeof text, "file system 0x%lx", magic);
  return text;
}

ScratchDirectory::ScratchDirectory(const std::filesystem::path& parent, const std::string& option) {
  const std::filesystem::path dir = parent.empty() ? std::filesystem::path(".") : parent;
  std::string pattern = (dir / ".asteria-calibrate-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr)
    throw InputError(option + " " + dir.string(), "scratch directory",
                     "expected an existing, writable directory (cannot create a directory in it: " + os_error(errno) +
                         ")");
  path_ = pattern;
}

ScratchDirectory::~ScratchDirectory() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

FileIo measure_file_io(const std::filesystem::path& directory, const FileIoPlan& plan) {
  if (plan.request_bytes == 0 || plan.request_bytes % kPage != 0)
    throw InputError("file bandwidth", "request size", "expected a multiple of 4096 bytes");
  if (plan.bytes == 0) throw InputError("file bandwidth", "file size", "expected a size > 0");
  // A file smaller than one request is written in one request of its size (whole pages).
  const std::size_t request_bytes =
      std::min(plan.request_bytes, std::max<std::size_t>(kPage, (plan.bytes + kPage - 1) / kPage * kPage));
  const std::size_t requests = (plan.bytes + request_bytes - 1) / request_bytes;
  const std::size_t file_bytes = requests * request_bytes;
  const std::filesystem::path file = directory / "bandwidth.bin";

  // Random contents: compressing or deduplicating file systems get no shortcut.
  AlignedBuffer buffer = aligned_buffer(request_bytes);
  std::mt19937 engine(42);
  for (std::size_t i = 0; i + sizeof(std::uint32_t) <= request_bytes; i += sizeof(std::uint32_t)) {
    const std::uint32_t word = engine();
    std::memcpy(buffer.get() + i, &word, sizeof word);
  }

  FileIo result;
  result.file_system = file_system_of(directory);
  double write_seconds = 0.0;
  {
    const FileDescriptor fd(open_file(file, O_WRONLY | O_CREAT | O_TRUNC, result.direct));
    if (fd.get() < 0) fail(directory, "create a file there", errno);
    const WallClock::time_point start = WallClock::now();
    for (std::size_t r = 0; r < requests; ++r)
      write_all(fd.get(), buffer.get(), request_bytes, static_cast<off_t>(r * request_bytes), directory);
    if (::fsync(fd.get()) != 0) fail(directory, "fsync the benchmark file", errno);
    write_seconds = seconds_between(start, WallClock::now());
    // Buffered fallback: drop the written pages so the reads below come from the device.
    ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED);
  }

  bool read_direct = false;
  double read_seconds = 0.0;
  {
    const FileDescriptor fd(open_file(file, O_RDONLY, read_direct));
    if (fd.get() < 0) fail(directory, "open the benchmark file for reading", errno);
    ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED);
    const WallClock::time_point start = WallClock::now();
    for (std::size_t r = 0; r < requests; ++r)
      read_all(fd.get(), buffer.get(), request_bytes, static_cast<off_t>(r * request_bytes), directory);
    read_seconds = seconds_between(start, WallClock::now());

    if (read_direct && plan.latency_samples > 0) {
      std::vector<double> samples;
      std::uniform_int_distribution<std::size_t> page(0, file_bytes / kPage - 1);
      for (int i = 0; i < plan.latency_samples; ++i) {
        const auto offset = static_cast<off_t>(page(engine) * kPage);
        const WallClock::time_point t0 = WallClock::now();
        read_all(fd.get(), buffer.get(), kPage, offset, directory);
        samples.push_back(seconds_between(t0, WallClock::now()));
      }
      std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
      result.read_latency.value = samples[samples.size() / 2];
      result.read_latency.method = "median of " + std::to_string(plan.latency_samples) +
                                   " random 4 KiB O_DIRECT reads (queue depth 1) on " + result.file_system;
    }
  }
  std::error_code ignored;
  std::filesystem::remove(file, ignored);

  const std::string requests_text = size_text(request_bytes) + " requests on " + result.file_system;
  result.write.value = static_cast<double>(file_bytes) / write_seconds;
  result.write.method = "sequential write of " + size_text(file_bytes) + " in " + requests_text +
                        (result.direct ? " with O_DIRECT" : " through the page cache (no O_DIRECT here)") +
                        ", fsync included";
  result.read.value = static_cast<double>(file_bytes) / read_seconds;
  result.read.method = "sequential read of " + size_text(file_bytes) + " in " + requests_text +
                       (read_direct ? " with O_DIRECT" : " after POSIX_FADV_DONTNEED (no O_DIRECT here)");
  result.direct = result.direct && read_direct;
  return result;
}

}  // namespace asteria::hw::calibrate

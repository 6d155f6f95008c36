#pragma once
// Shared by the NVMe store tests: scratch directories on a real filesystem, reproducible
// byte patterns, and raw file edits that stand for disk corruption.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "core/real/nvme/nvme_store.hpp"

namespace asteria::testing {

// One way bytes can move; tests run under each (no mode is skipped: a forced option that the
// machine cannot honour makes the store's constructor throw, and the test fails).
struct NvmeMode {
  real::IoMechanism mechanism;
  real::DirectIo direct;
  const char* name;
};

inline const NvmeMode kNvmeModes[] = {
    {real::IoMechanism::automatic, real::DirectIo::on, "automatic_O_DIRECT"},
    {real::IoMechanism::automatic, real::DirectIo::off, "automatic_buffered"},
    {real::IoMechanism::syscalls, real::DirectIo::on, "pread_pwrite_O_DIRECT"},
    {real::IoMechanism::syscalls, real::DirectIo::off, "pread_pwrite_buffered"},
};

// gtest prints the mode by name instead of its bytes.
inline void PrintTo(const NvmeMode& mode, std::ostream* out) { *out << mode.name; }

inline std::string mode_name(const ::testing::TestParamInfo<NvmeMode>& info) { return info.param.name; }

inline real::NvmeOptions options_for(const NvmeMode& mode) {
  real::NvmeOptions options;
  options.mechanism = mode.mechanism;
  options.direct_io = mode.direct;
  return options;
}

// A fresh directory, removed with its content at scope exit. It lives under
// $ASTERIA_NVME_TEST_DIR when set, else under the build tree (a disk filesystem, so O_DIRECT
// is testable; /tmp may be tmpfs).
class ScratchDir {
 public:
  ScratchDir() {
    const char* override_root = std::getenv("ASTERIA_NVME_TEST_DIR");
    const std::filesystem::path root = override_root ? override_root : ASTERIA_NVME_TEST_ROOT;
    std::random_device entropy;
    path_ = root / ("nvme-" + std::to_string(::getpid()) + "-" + std::to_string(entropy()));
    std::filesystem::create_directories(path_);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const noexcept { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// Bytes that depend on (seed, position): two different seeds give different content almost
// everywhere, so a mix of two versions is detectable at any position.
inline std::vector<std::byte> pattern(std::size_t bytes, std::uint64_t seed) {
  std::vector<std::byte> out(bytes);
  std::uint64_t state = seed * 0x9E3779B97F4A7C15ULL + 0x632BE59BD9B4E019ULL;
  for (std::size_t i = 0; i < bytes; i += 8) {
    state += 0x9E3779B97F4A7C15ULL;  // splitmix64
    std::uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    for (std::size_t k = 0; k < 8 && i + k < bytes; ++k) out[i + k] = static_cast<std::byte>(z >> (8 * k));
  }
  return out;
}

inline std::vector<std::byte> read_whole_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) out[i] = static_cast<std::byte>(raw[i]);
  return out;
}

// Flips every bit of one byte in place, as a failing disk might.
inline void flip_byte(const std::filesystem::path& path, std::uint64_t offset) {
  std::fstream file(path, std::ios::binary | std::ios::in | std::ios::out);
  file.seekg(static_cast<std::streamoff>(offset));
  char c = 0;
  file.get(c);
  file.seekp(static_cast<std::streamoff>(offset));
  file.put(static_cast<char>(~c));
}

inline std::uint64_t read_le64(const std::vector<std::byte>& bytes, std::size_t offset) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < 8; ++i) value |= static_cast<std::uint64_t>(bytes.at(offset + i)) << (8 * i);
  return value;
}

}  // namespace asteria::testing

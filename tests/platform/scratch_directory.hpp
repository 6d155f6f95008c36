#pragma once
// A fresh directory under the system's temporary directory, removed with its content at scope exit.
#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>

namespace asteria::real::testing {

class ScratchDirectory {
 public:
  explicit ScratchDirectory(const std::string& prefix) {
    std::random_device entropy;
    path_ = std::filesystem::temp_directory_path() /
            (prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(entropy()));
    std::filesystem::create_directories(path_);
  }
  ~ScratchDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace asteria::real::testing

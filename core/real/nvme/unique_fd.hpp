#pragma once
// Owns a file descriptor; close() reports the close error that a destructor would swallow
// (on some filesystems a failed write surfaces only there).
#include <unistd.h>

#include <utility>

namespace asteria::real {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) noexcept : fd_(fd) {}
  ~UniqueFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      if (fd_ >= 0) ::close(fd_);
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const noexcept { return fd_; }
  explicit operator bool() const noexcept { return fd_ >= 0; }
  int close() noexcept { return ::close(std::exchange(fd_, -1)); }  // 0 or -1 with errno

 private:
  int fd_ = -1;
};

}  // namespace asteria::real

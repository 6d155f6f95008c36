#pragma once
// A queue of positioned reads and writes with several requests in flight: io_uring when the
// kernel allows it, otherwise plain pread/pwrite one request at a time. Both behave alike to the
// transfer engine (core/real/nvme/transfer.hpp), which is written once against this interface.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace asteria::real {

enum class IoOp { read, write };

struct IoRequest {
  IoOp op = IoOp::read;
  int fd = -1;
  std::byte* buffer = nullptr;  // only read from for writes
  std::size_t bytes = 0;
  std::uint64_t offset = 0;
  std::uint64_t tag = 0;        // handed back with the completion
};

struct IoCompletion {
  std::uint64_t tag = 0;
  std::int64_t result = 0;      // bytes moved, or -errno
};

class IoQueue {
 public:
  virtual ~IoQueue() = default;
  // Requests that may be in flight at once; push() beyond that is a caller bug.
  virtual unsigned depth() const noexcept = 0;
  virtual void push(const IoRequest& request) = 0;
  // Starts what was pushed and waits for one request to finish. Returns 0, or -errno when the
  // queue itself failed (never for a failed request: that comes back in `done.result`).
  virtual int wait(IoCompletion& done) = 0;
};

// nullptr when io_uring cannot be set up here; `error` then holds the reason.
std::unique_ptr<IoQueue> make_uring_queue(unsigned depth, std::string& error);
std::unique_ptr<IoQueue> make_syscall_queue();

}  // namespace asteria::real

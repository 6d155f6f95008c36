#include "core/real/nvme/io_queue.hpp"

#include <liburing.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>

namespace asteria::real {
namespace {

class UringQueue final : public IoQueue {
 public:
  explicit UringQueue(unsigned depth) : depth_(depth) {}
  ~UringQueue() override {
    if (initialized_) io_uring_queue_exit(&ring_);
  }
  UringQueue(const UringQueue&) = delete;
  UringQueue& operator=(const UringQueue&) = delete;

  int init() {
    const int rc = io_uring_queue_init(depth_, &ring_, 0);
    initialized_ = rc == 0;
    return rc;
  }

  unsigned depth() const noexcept override { return depth_; }

  void push(const IoRequest& request) override {
    // Never null: at most depth() requests are in flight and the ring has depth() entries.
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    const auto bytes = static_cast<unsigned>(request.bytes);
    if (request.op == IoOp::read)
      io_uring_prep_read(sqe, request.fd, request.buffer, bytes, request.offset);
    else
      io_uring_prep_write(sqe, request.fd, request.buffer, bytes, request.offset);
    io_uring_sqe_set_data64(sqe, request.tag);
  }

  int wait(IoCompletion& done) override {
    io_uring_cqe* cqe = nullptr;
    for (;;) {
      // Submits whatever was pushed and waits for at least one completion.
      const int rc = io_uring_submit_and_wait(&ring_, 1);
      if (rc == -EINTR || rc == -EAGAIN || rc == -EBUSY) continue;
      if (rc < 0) return rc;
      const int peek = io_uring_peek_cqe(&ring_, &cqe);
      if (peek == 0 && cqe != nullptr) break;
      if (peek != -EAGAIN && peek != -EINTR) return peek;
    }
    done.tag = io_uring_cqe_get_data64(cqe);
    done.result = cqe->res;
    io_uring_cqe_seen(&ring_, cqe);
    return 0;
  }

 private:
  io_uring ring_{};
  unsigned depth_;
  bool initialized_ = false;
};

// One request at a time, executed when the engine waits: the same protocol with depth 1.
class SyscallQueue final : public IoQueue {
 public:
  unsigned depth() const noexcept override { return 1; }
  void push(const IoRequest& request) override { pending_.push_back(request); }
  int wait(IoCompletion& done) override {
    if (pending_.empty()) return -EINVAL;
    const IoRequest request = pending_.front();
    pending_.pop_front();
    const ssize_t moved = request.op == IoOp::read
                              ? ::pread(request.fd, request.buffer, request.bytes, static_cast<off_t>(request.offset))
                              : ::pwrite(request.fd, request.buffer, request.bytes, static_cast<off_t>(request.offset));
    done.tag = request.tag;
    done.result = moved < 0 ? -static_cast<std::int64_t>(errno) : static_cast<std::int64_t>(moved);
    return 0;
  }

 private:
  std::deque<IoRequest> pending_;
};

}  // namespace

std::unique_ptr<IoQueue> make_uring_queue(unsigned depth, std::string& error) {
  auto queue = std::make_unique<UringQueue>(depth);
  const int rc = queue->init();
  if (rc < 0) {
    error = std::string("io_uring_queue_init: ") + std::strerror(-rc);
    return nullptr;
  }
  return queue;
}

std::unique_ptr<IoQueue> make_syscall_queue() { return std::make_unique<SyscallQueue>(); }

}  // namespace asteria::real

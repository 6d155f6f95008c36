#include "core/real/nvme/io_context.hpp"

#include <cstring>
#include <new>

namespace asteria::real {

std::string errno_text(int error) {
  char buffer[256];
  // GNU strerror_r: thread-safe, returns a pointer to the text (maybe not into `buffer`).
  const char* text = ::strerror_r(error, buffer, sizeof buffer);
  const char* name = ::strerrorname_np(error);
  std::string out = text ? text : "unknown error";
  out += " [";
  out += name ? name : ("errno " + std::to_string(error)).c_str();
  out += "]";
  return out;
}

AlignedBuffer::AlignedBuffer(std::size_t bytes) {
  bytes_ = (bytes + kDirectAlignment - 1) / kDirectAlignment * kDirectAlignment;
  if (bytes_ == 0) return;
  void* p = std::aligned_alloc(kDirectAlignment, bytes_);
  if (p == nullptr) throw std::bad_alloc();
  std::memset(p, 0, bytes_);
  data_.reset(static_cast<std::byte*>(p));
}

IoContext::IoContext(std::unique_ptr<IoQueue> queue, std::size_t chunk_bytes)
    : queue_(std::move(queue)),
      chunk_bytes_(chunk_bytes),
      bounce_(chunk_bytes * queue_->depth()),
      header_(kBlockHeaderBytes) {}

IoContextPool::IoContextPool(bool use_uring, unsigned depth, std::size_t chunk_bytes, std::unique_ptr<IoContext> first)
    : use_uring_(use_uring), depth_(depth), chunk_bytes_(chunk_bytes) {
  if (first) {
    idle_.push_back(std::move(first));
    built_ = 1;
  }
}

IoContextPool::~IoContextPool() = default;

IoContextPool::Lease IoContextPool::acquire() {
  {
    std::lock_guard lock(mutex_);
    if (!idle_.empty()) {
      auto context = std::move(idle_.back());
      idle_.pop_back();
      return Lease(*this, std::move(context));
    }
  }
  // Built outside the lock: a ring setup and buffer allocation take a while.
  std::unique_ptr<IoQueue> queue;
  bool degraded = false;
  if (use_uring_) {
    std::string error;
    queue = make_uring_queue(depth_, error);
    degraded = queue == nullptr;  // e.g. out of memory for rings: still correct, just serial
  }
  if (!queue) queue = make_syscall_queue();
  auto context = std::make_unique<IoContext>(std::move(queue), chunk_bytes_);
  {
    std::lock_guard lock(mutex_);
    ++built_;
    if (degraded) ++degraded_;
  }
  return Lease(*this, std::move(context));
}

void IoContextPool::give_back(std::unique_ptr<IoContext> context) {
  if (context->poisoned) {
    (void)context.release();  // deliberately leaked: the kernel may still own its buffers
    return;
  }
  std::lock_guard lock(mutex_);
  idle_.push_back(std::move(context));
}

std::size_t IoContextPool::degraded_contexts() const {
  std::lock_guard lock(mutex_);
  return degraded_;
}

std::size_t IoContextPool::size() const {
  std::lock_guard lock(mutex_);
  return built_;
}

}  // namespace asteria::real

#pragma once
// What one synchronous store call needs to move bytes: an I/O queue and aligned bounce buffers
// (one chunk per request in flight, plus a header block). Building one costs an io_uring setup
// (a few mmaps) and the buffers' first touch, so a pool keeps them: a call leases a context,
// concurrent calls get distinct ones, and the pool grows to the peak number of concurrent calls.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "core/real/nvme/block_header.hpp"
#include "core/real/nvme/io_queue.hpp"

namespace asteria::real {

inline constexpr std::size_t kDirectAlignment = 4096;  // safe for 512-byte and 4Kn devices alike

// errno as text: "No space left on device [ENOSPC]".
std::string errno_text(int error);

class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(std::size_t bytes);  // bytes rounded up to kDirectAlignment; zero-filled
  std::byte* data() const noexcept { return data_.get(); }
  std::size_t size() const noexcept { return bytes_; }

 private:
  struct Free {
    void operator()(std::byte* p) const noexcept { std::free(p); }
  };
  std::unique_ptr<std::byte, Free> data_;
  std::size_t bytes_ = 0;
};

class IoContext {
 public:
  IoContext(std::unique_ptr<IoQueue> queue, std::size_t chunk_bytes);
  IoQueue& queue() noexcept { return *queue_; }
  std::size_t chunk_bytes() const noexcept { return chunk_bytes_; }
  std::byte* bounce(unsigned slot) noexcept { return bounce_.data() + slot * chunk_bytes_; }
  std::span<std::byte, kBlockHeaderBytes> header_block() noexcept {
    return std::span<std::byte, kBlockHeaderBytes>(header_.data(), kBlockHeaderBytes);
  }
  // Set when the queue failed with requests possibly still in flight: such a context must never
  // be reused nor its buffers freed, since the kernel may still write into them.
  bool poisoned = false;

 private:
  std::unique_ptr<IoQueue> queue_;
  std::size_t chunk_bytes_;
  AlignedBuffer bounce_;
  AlignedBuffer header_;
};

class IoContextPool {
 public:
  // `first` is the context built while probing (may be null). When `use_uring` is false every
  // context uses pread/pwrite.
  IoContextPool(bool use_uring, unsigned depth, std::size_t chunk_bytes, std::unique_ptr<IoContext> first);
  ~IoContextPool();
  IoContextPool(const IoContextPool&) = delete;
  IoContextPool& operator=(const IoContextPool&) = delete;

  class Lease {
   public:
    Lease(IoContextPool& pool, std::unique_ptr<IoContext> context) : pool_(&pool), context_(std::move(context)) {}
    Lease(Lease&&) noexcept = default;
    Lease& operator=(Lease&&) = delete;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() {
      if (context_) pool_->give_back(std::move(context_));
    }
    IoContext& operator*() const noexcept { return *context_; }
    IoContext* operator->() const noexcept { return context_.get(); }

   private:
    IoContextPool* pool_;
    std::unique_ptr<IoContext> context_;
  };

  Lease acquire();
  // Contexts that wanted io_uring but got pread/pwrite because a later ring setup failed.
  std::size_t degraded_contexts() const;
  std::size_t size() const;  // contexts built so far

 private:
  void give_back(std::unique_ptr<IoContext> context);

  const bool use_uring_;
  const unsigned depth_;
  const std::size_t chunk_bytes_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<IoContext>> idle_;
  std::size_t built_ = 0;
  std::size_t degraded_ = 0;
};

}  // namespace asteria::real

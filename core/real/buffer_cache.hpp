#pragma once
// Freed region buffers of one memory tier, kept for reuse by the next region of the same size.
// The state store moves the same blocks between tiers every step; without reuse each move pays a
// fresh allocation: page faults and zeroing of new host pages, or cudaMalloc / cudaHostAlloc,
// which synchronize the GPU. The owner bounds what the cache may hold (see RealMemory), and the
// cache frees buffers through the function it was given: on trim and when it is destroyed.
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>

namespace asteria::real {

class BufferCache {
 public:
  using Free = std::function<void(std::byte* buffer, std::size_t size)>;

  explicit BufferCache(Free free) : free_(std::move(free)) {}
  ~BufferCache();
  BufferCache(const BufferCache&) = delete;
  BufferCache& operator=(const BufferCache&) = delete;

  // A kept buffer of exactly `size` bytes (no longer counted here), or nullptr.
  std::byte* take(std::size_t size);
  // Keeps `buffer` (`size` bytes, counted as `counted`: what the owner's budget counted for it)
  // if the cache then counts at most `limit` bytes; false: the caller frees it.
  bool keep(std::byte* buffer, std::size_t size, std::size_t counted, std::size_t limit);
  // Frees kept buffers, largest first, until the cache counts at most `limit` bytes.
  void trim(std::size_t limit);

  std::size_t bytes() const;  // counted bytes of the kept buffers
  std::size_t buffers() const;
  std::size_t reused() const;  // buffers handed out again by take()

 private:
  Free free_;
  mutable std::mutex mutex_;
  struct Kept {
    std::byte* buffer;
    std::size_t counted;
  };
  std::multimap<std::size_t, Kept> kept_;  // by size
  std::size_t bytes_ = 0;
  std::size_t reused_ = 0;
};

}  // namespace asteria::real

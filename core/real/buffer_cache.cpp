#include "core/real/buffer_cache.hpp"

#include <iterator>
#include <utility>
#include <vector>

namespace asteria::real {

BufferCache::~BufferCache() { trim(0); }

std::byte* BufferCache::take(std::size_t size) {
  std::lock_guard lock(mutex_);
  auto it = kept_.find(size);
  if (it == kept_.end()) return nullptr;
  const Kept kept = it->second;
  kept_.erase(it);
  bytes_ -= kept.counted;
  ++reused_;
  return kept.buffer;
}

bool BufferCache::keep(std::byte* buffer, std::size_t size, std::size_t counted, std::size_t limit) {
  std::lock_guard lock(mutex_);
  if (counted > limit || bytes_ > limit - counted) return false;
  kept_.emplace(size, Kept{buffer, counted});
  bytes_ += counted;
  return true;
}

void BufferCache::trim(std::size_t limit) {
  std::vector<std::pair<std::byte*, std::size_t>> freed;
  {
    std::lock_guard lock(mutex_);
    while (bytes_ > limit && !kept_.empty()) {
      auto largest = std::prev(kept_.end());
      bytes_ -= largest->second.counted;
      freed.emplace_back(largest->second.buffer, largest->first);
      kept_.erase(largest);
    }
  }
  for (auto [buffer, size] : freed) free_(buffer, size);  // outside the lock: a cudaFree may take a while
}

std::size_t BufferCache::bytes() const {
  std::lock_guard lock(mutex_);
  return bytes_;
}

std::size_t BufferCache::buffers() const {
  std::lock_guard lock(mutex_);
  return kept_.size();
}

std::size_t BufferCache::reused() const {
  std::lock_guard lock(mutex_);
  return reused_;
}

}  // namespace asteria::real

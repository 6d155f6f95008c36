// NvmeStore's removals: logical at once, the file deleted by a background thread (see the header).
#include <unistd.h>

#include <cerrno>
#include <optional>

#include "core/real/nvme/nvme_store.hpp"

namespace asteria::real {

void NvmeStore::remove(std::uint64_t id) {
  const auto id_guard = id_locks_.lock(id);  // after a write of this id in progress
  std::uint64_t bytes = 0;
  {
    std::lock_guard lock(accounting_mutex_);
    auto it = file_bytes_.find(id);
    if (it == file_bytes_.end()) return;  // never written, or already removed
    bytes = it->second;
    committed_bytes_ -= bytes;
    file_bytes_.erase(it);
  }
  {
    std::lock_guard lock(removal_mutex_);
    removal_pending_[id] = bytes;
    removal_queue_.push_back(id);
  }
  removal_wake_.notify_one();
}

bool NvmeStore::removal_pending(std::uint64_t id) {
  std::lock_guard lock(removal_mutex_);
  return removal_pending_.contains(id);
}

void NvmeStore::cancel_removal(std::uint64_t id) {
  std::lock_guard lock(removal_mutex_);
  removal_pending_.erase(id);  // its queue entry finds nothing to do
}

void NvmeStore::flush_removals() {
  std::unique_lock lock(removal_mutex_);
  removal_done_.wait(lock, [this] { return removal_queue_.empty() && !removal_busy_; });
}

void NvmeStore::run_removals() {
  std::unique_lock lock(removal_mutex_);
  for (;;) {
    removal_wake_.wait(lock, [this] { return !removal_queue_.empty() || removal_stopping_; });
    if (removal_queue_.empty()) return;  // stopping, and nothing left to delete
    const std::uint64_t id = removal_queue_.front();
    removal_queue_.pop_front();
    removal_busy_ = true;
    lock.unlock();
    {
      // Under the id's lock, so a write of the id either cancelled this already or comes after.
      const auto id_guard = id_locks_.lock(id);
      std::optional<std::uint64_t> bytes;
      {
        std::lock_guard pending_lock(removal_mutex_);
        if (auto it = removal_pending_.find(id); it != removal_pending_.end()) bytes = it->second;
      }
      if (bytes) {
        if (::unlink(path_of(id).c_str()) != 0 && errno != ENOENT) {
          std::lock_guard accounting(accounting_mutex_);
          orphaned_bytes_ += *bytes;  // still on disk: still counted against the capacity
        }
        // Pending until the file is gone, so a read in between fails as for a missing file.
        std::lock_guard pending_lock(removal_mutex_);
        removal_pending_.erase(id);
      }
    }
    lock.lock();
    removal_busy_ = false;
    if (removal_queue_.empty()) removal_done_.notify_all();
  }
}

}  // namespace asteria::real

#pragma once
// One mutex per block id, created on first use and dropped when nobody holds or waits for it:
// writes and removes of one id are serialized (they share the id's staging file), while calls
// on different ids never contend.
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace asteria::real {

class IdLocks {
  struct Entry {
    std::mutex mutex;
    int users = 0;  // holders and waiters; guarded by IdLocks::table_mutex_
  };

 public:
  class Guard {
   public:
    Guard(IdLocks& locks, std::uint64_t id, Entry& entry) : locks_(locks), id_(id), entry_(entry) {
      entry_.mutex.lock();
    }
    ~Guard() {
      entry_.mutex.unlock();
      locks_.release(id_);
    }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

   private:
    IdLocks& locks_;
    std::uint64_t id_;
    Entry& entry_;
  };

  Guard lock(std::uint64_t id) {
    Entry* entry = nullptr;
    {
      std::lock_guard table_lock(table_mutex_);
      auto& slot = table_[id];
      if (!slot) slot = std::make_unique<Entry>();
      ++slot->users;
      entry = slot.get();
    }
    return Guard(*this, id, *entry);
  }

 private:
  void release(std::uint64_t id) {
    std::lock_guard table_lock(table_mutex_);
    auto it = table_.find(id);
    if (it != table_.end() && --it->second->users == 0) table_.erase(it);
  }

  std::mutex table_mutex_;
  std::unordered_map<std::uint64_t, std::unique_ptr<Entry>> table_;
};

}  // namespace asteria::real

#include "core/real/trace.hpp"

namespace asteria::real {

void WorkLog::record(WorkRecord record) {
  std::lock_guard lock(mutex_);
  if (records_.size() >= max_records_) {
    ++dropped_;
    return;
  }
  records_.push_back(std::move(record));
}

std::vector<WorkRecord> WorkLog::records() const {
  std::lock_guard lock(mutex_);
  return records_;
}

std::size_t WorkLog::dropped() const {
  std::lock_guard lock(mutex_);
  return dropped_;
}

void WorkLog::clear() {
  std::lock_guard lock(mutex_);
  records_.clear();
  dropped_ = 0;
}

}  // namespace asteria::real

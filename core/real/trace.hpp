#pragma once
// What ran where and when: one record per work item an executor finished. Trace writers (Chrome
// JSON, replayable traces) read these later; the executors only append.
#include <cstddef>
#include <mutex>
#include <string>
#include <vector>

#include "core/platform/cost.hpp"
#include "core/platform/time.hpp"

namespace asteria::real {

struct WorkRecord {
  std::string executor;  // "device", "host-workers", "copy host->nvme"
  std::string label;
  platform::WorkKind kind = platform::WorkKind::other;
  platform::Seconds submitted = 0.0;
  platform::Seconds started = 0.0;
  platform::Seconds finished = 0.0;
  bool ok = true;
};

class TraceSink {
 public:
  virtual ~TraceSink() = default;
  // Called from executor threads, concurrently: implementations synchronize.
  virtual void record(WorkRecord record) = 0;
};

// Keeps records in memory, up to a limit (past it they are counted, not kept, so long runs
// cannot exhaust memory through their trace).
class WorkLog final : public TraceSink {
 public:
  explicit WorkLog(std::size_t max_records = 1'000'000) : max_records_(max_records) {}
  void record(WorkRecord record) override;
  std::vector<WorkRecord> records() const;  // a copy, in the order the work finished
  std::size_t dropped() const;
  void clear();

 private:
  mutable std::mutex mutex_;
  std::size_t max_records_;
  std::size_t dropped_ = 0;
  std::vector<WorkRecord> records_;
};

}  // namespace asteria::real

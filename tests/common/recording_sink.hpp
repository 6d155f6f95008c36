#pragma once
// An ActivitySink for tests: keeps every activity and counter sample it is given, in order,
// behind a mutex (the real backend records from its executor threads).
#include <mutex>
#include <string>
#include <vector>

#include "core/platform/activity.hpp"

namespace asteria::test {

struct CounterRecord {
  std::string name;
  double time = 0.0;
  double value = 0.0;
  std::int64_t step = 0;  // the step begun last when it was sampled
};

class RecordingSink final : public platform::ActivitySink {
 public:
  explicit RecordingSink(int unit = 0) : unit_(unit) {}
  int unit() const noexcept override { return unit_; }
  void record(platform::Activity activity) override {
    std::lock_guard lock(mutex_);
    activities_.push_back(std::move(activity));
  }
  void counter(const std::string& name, platform::Seconds time, double value) override {
    std::lock_guard lock(mutex_);
    counters_.push_back({name, time, value, step_});
  }
  void begin_step(std::int64_t step) override {
    std::lock_guard lock(mutex_);
    step_ = step;
  }

  std::vector<platform::Activity> activities() const {
    std::lock_guard lock(mutex_);
    return activities_;
  }
  std::vector<CounterRecord> counters() const {
    std::lock_guard lock(mutex_);
    return counters_;
  }
  // Activities on tracks whose name starts with `prefix`.
  std::vector<platform::Activity> on_track(const std::string& prefix) const {
    std::vector<platform::Activity> out;
    for (const platform::Activity& a : activities())
      if (a.track.rfind(prefix, 0) == 0) out.push_back(a);
    return out;
  }

 private:
  int unit_;
  mutable std::mutex mutex_;
  std::vector<platform::Activity> activities_;
  std::vector<CounterRecord> counters_;
  std::int64_t step_ = 0;
};

}  // namespace asteria::test

#pragma once
// Progress of a run on stderr, the same for every verb: nothing during the first second, then at
// most one line a second and one for the last step:
//   "sim: step 12/36 (warm-up), step time 1.702 s, wall 3.1 s[, <detail>]"
#include <chrono>
#include <iosfwd>
#include <string>

#include "core/runtime/driver/driver_options.hpp"

namespace asteria::cli {

class Progress {
 public:
  // `name` starts each line ("sim", "synth soap async S=5", "train").
  Progress(std::ostream& out, std::string name, bool enabled, int total_steps);
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // After each step; `detail` (e.g. "loss 2.31", "simulated 10.2 s") is appended when shown.
  void step(const runtime::StepRecord& record, const std::string& detail = {});

 private:
  using Clock = std::chrono::steady_clock;
  std::ostream& out_;
  std::string name_;
  bool enabled_;
  int total_;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_ = start_;
};

// Progress over the items of a verb without steps (a collective's sizes, a plan's schedule
// candidates): a first line when the work starts, then a line per finished item once a second
// has passed, at most one a second, and always the last:
//   "collective: 3/24 done (4194304 bytes: 812 us simulated), wall 2.4 s"
class ItemProgress {
 public:
  ItemProgress(std::ostream& out, std::string name, bool enabled, std::size_t total, const std::string& start);
  ItemProgress(const ItemProgress&) = delete;
  ItemProgress& operator=(const ItemProgress&) = delete;

  // After item `done` (1-based) of the total; `what` says which and how it went.
  void done(std::size_t done, const std::string& what);

 private:
  using Clock = std::chrono::steady_clock;
  std::ostream& out_;
  std::string name_;
  bool enabled_;
  std::size_t total_;
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_ = start_;
};

}  // namespace asteria::cli

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

}  // namespace asteria::cli

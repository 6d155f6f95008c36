#pragma once
// What happened when, in a form every backend can fill and every writer can read: slices (a
// piece of work on a track: a stream, a worker, a link, a disk) and counter samples (tier
// occupancy, queue depth). Times are seconds from the start of the run (wall clock on the real
// backend, simulated time in the simulator). Not thread-safe: a backend with threads records
// into its own structures and converts once the run is over.
#include <string>
#include <utility>
#include <vector>

namespace asteria::traces {

struct Slice {
  std::string track;     // "gpu0 stream", "cpu0 worker 3", "link c2c-h2d0", "disk nvme0"
  std::string name;      // "backward layer 3", "refresh layer3.w block 2"
  std::string category;  // "compute", "optimizer", "refresh", "transfer", "io", "wait"
  double start_s = 0.0;
  double end_s = 0.0;
  // Shown with the slice ("step": "12", "block": "\"layer3.w block 2\""): each value is JSON text.
  std::vector<std::pair<std::string, std::string>> args{};
};

struct CounterSample {
  std::string counter;  // "resident device bytes"
  double time_s = 0.0;
  double value = 0.0;
};

class Timeline {
 public:
  void add_slice(Slice slice) { slices_.push_back(std::move(slice)); }
  void add_counter(CounterSample sample) { counters_.push_back(std::move(sample)); }
  const std::vector<Slice>& slices() const noexcept { return slices_; }
  const std::vector<CounterSample>& counters() const noexcept { return counters_; }
  bool empty() const noexcept { return slices_.empty() && counters_.empty(); }

 private:
  std::vector<Slice> slices_;
  std::vector<CounterSample> counters_;
};

}  // namespace asteria::traces

#include "traces/track_lanes.hpp"

#include <algorithm>
#include <numeric>

namespace asteria::traces {

std::vector<std::size_t> assign_lanes(std::span<const LaneInterval> intervals) {
  std::vector<std::size_t> order(intervals.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  // Enclosing slices before the slices they enclose: by start, then longest first.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (intervals[a].start_ns != intervals[b].start_ns) return intervals[a].start_ns < intervals[b].start_ns;
    return intervals[a].end_ns > intervals[b].end_ns;
  });

  // Each lane keeps the end times of its currently open slices, innermost last. Because starts
  // only increase, a slice ended before the current start can be dropped for good.
  std::vector<std::vector<std::int64_t>> open_ends_per_lane;
  std::vector<std::size_t> lane_of(intervals.size(), 0);
  for (const std::size_t index : order) {
    const LaneInterval& slice = intervals[index];
    std::size_t lane = 0;
    for (; lane < open_ends_per_lane.size(); ++lane) {
      auto& open_ends = open_ends_per_lane[lane];
      while (!open_ends.empty() && open_ends.back() <= slice.start_ns) open_ends.pop_back();
      if (open_ends.empty() || slice.end_ns <= open_ends.back()) break;
    }
    if (lane == open_ends_per_lane.size()) open_ends_per_lane.emplace_back();
    open_ends_per_lane[lane].push_back(slice.end_ns);
    lane_of[index] = lane;
  }
  return lane_of;
}

}  // namespace asteria::traces

#pragma once
// Splits the slices of one track into lanes in which every pair of slices is either disjoint or
// properly nested. Trace viewers draw one thread as a stack of nested slices; two slices that
// overlap only partially (A starts, B starts, A ends, B ends) cannot be drawn on one thread, and
// Perfetto drops or truncates one of them. Such slices go to a further lane instead.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace asteria::traces {

// A half-open interval [start, end) in integer nanoseconds; end >= start.
struct LaneInterval {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
};

// Returns, for each interval (same order as the input), the lane it belongs to: 0 for the
// track itself, 1 for the first overflow lane, and so on. Greedy and deterministic: intervals
// are visited by start (longer first on ties) and each takes the lowest lane where it either
// starts after everything open there has ended or fits entirely inside the innermost open one.
// Touching intervals ([0,5) and [5,9)) are disjoint; an interval equal to another nests in it.
std::vector<std::size_t> assign_lanes(std::span<const LaneInterval> intervals);

}  // namespace asteria::traces

#include "traces/track_lanes.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace asteria::traces {
namespace {

std::vector<std::size_t> lanes(const std::vector<LaneInterval>& intervals) { return assign_lanes(intervals); }

TEST(TrackLanes, EmptyInputGivesNoLanes) { EXPECT_TRUE(lanes({}).empty()); }

TEST(TrackLanes, DisjointAndTouchingSlicesShareTheTrack) {
  // [0,5) and [5,9) touch; [20,30) is far away.
  EXPECT_EQ(lanes({{0, 5}, {5, 9}, {20, 30}}), (std::vector<std::size_t>{0, 0, 0}));
}

TEST(TrackLanes, NestedSlicesStayOnTheTrack) {
  // parent [0,100) holds [10,50) which holds [20,30); [60,100) ends with the parent; an
  // identical copy of the parent nests in it; a zero-length mark at 70 nests in [60,100).
  const std::vector<LaneInterval> nested = {{0, 100}, {10, 50}, {20, 30}, {60, 100}, {0, 100}, {70, 70}};
  EXPECT_EQ(lanes(nested), (std::vector<std::size_t>(nested.size(), 0)));
}

TEST(TrackLanes, PartialOverlapGoesToAnOverflowLane) {
  // [0,5) and [3,8) cross: the later one moves to lane 1.
  EXPECT_EQ(lanes({{0, 5}, {3, 8}}), (std::vector<std::size_t>{0, 1}));
}

TEST(TrackLanes, EachCrossingNeedsItsOwnLaneAndFreedLanesAreReused) {
  // [4,9) crosses both [0,5) (lane 0) and [3,8) (lane 1): lane 2. [10,12) starts after all
  // of them ended: back to lane 0. [6,7) starts once [0,5) has ended: lane 0 again.
  EXPECT_EQ(lanes({{0, 5}, {3, 8}, {4, 9}, {10, 12}, {6, 7}}), (std::vector<std::size_t>{0, 1, 2, 0, 0}));
}

TEST(TrackLanes, ChildOfAnOverflowSliceNestsInItsLane) {
  // [4,6) starts inside [0,5) but ends after it, so it cannot nest in lane 0; it lies inside
  // [3,8), which is in lane 1, so it nests there.
  EXPECT_EQ(lanes({{0, 5}, {3, 8}, {4, 6}}), (std::vector<std::size_t>{0, 1, 1}));
}

TEST(TrackLanes, ResultDoesNotDependOnInputOrder) {
  // The same intervals as above, listed from last to first: each interval keeps its lane.
  EXPECT_EQ(lanes({{4, 6}, {3, 8}, {0, 5}}), (std::vector<std::size_t>{1, 1, 0}));
  // The enclosing slice listed after its child still takes lane 0 with the child nested.
  EXPECT_EQ(lanes({{2, 3}, {0, 10}}), (std::vector<std::size_t>{0, 0}));
}

}  // namespace
}  // namespace asteria::traces

// The real backend's work records as a timeline: tracks and categories named as the simulator
// names them, times kept, host work dealt to worker lanes, failed work still shown.
#include "traces/work_log_timeline.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/common/status.hpp"
#include "core/real/real_platform.hpp"
#include "traces/chrome_trace.hpp"
#include "tests/io/temp_dir.hpp"

namespace asteria::traces {
namespace {

using platform::WorkKind;
using real::WorkRecord;

WorkRecord record(std::string executor, std::string label, double started, double finished, bool ok = true) {
  return {std::move(executor), std::move(label), WorkKind::gemm, started, started, finished, ok};
}

const Slice& slice_named(const Timeline& timeline, const std::string& name) {
  for (const Slice& s : timeline.slices())
    if (s.name == name) return s;
  ADD_FAILURE() << "no slice named " << name;
  static const Slice none;
  return none;
}

TEST(WorkLogTimeline, AnEmptyLogAddsNothing) {
  Timeline timeline;
  add_work_records({}, timeline);
  EXPECT_TRUE(timeline.empty());
}

TEST(WorkLogTimeline, DeviceWorkIsOnTheStreamTrackWithItsRoleAsCategory) {
  const std::vector<WorkRecord> records = {
      record("device", "forward block0.attn", 0.5, 0.75),
      record("device", "backward block0.attn", 0.75, 1.25),
      record("device", "optimizer block0.attn", 1.25, 1.5),
      record("device", "install refresh", 1.5, 1.5),
  };
  Timeline timeline;
  add_work_records(records, timeline);
  ASSERT_EQ(timeline.slices().size(), 4u);
  const std::map<std::string, std::string> expected_category = {{"forward block0.attn", "compute"},
                                                                 {"backward block0.attn", "compute"},
                                                                 {"optimizer block0.attn", "optimizer"},
                                                                 {"install refresh", "other"}};
  for (const auto& [name, category] : expected_category) {
    const Slice& s = slice_named(timeline, name);
    EXPECT_EQ(s.track, "gpu0 stream") << name;
    EXPECT_EQ(s.category, category) << name;
  }
  const Slice& backward = slice_named(timeline, "backward block0.attn");
  EXPECT_DOUBLE_EQ(backward.start_s, 0.75);
  EXPECT_DOUBLE_EQ(backward.end_s, 1.25);
  EXPECT_TRUE(timeline.counters().empty());
}

TEST(WorkLogTimeline, SlicesSpanStartToFinishNotTheQueueing) {
  WorkRecord r = record("device", "forward l0", 2.0, 3.0);
  r.submitted = 1.0;
  Timeline timeline;
  add_work_records({&r, 1}, timeline);
  ASSERT_EQ(timeline.slices().size(), 1u);
  EXPECT_DOUBLE_EQ(timeline.slices()[0].start_s, 2.0);
  EXPECT_DOUBLE_EQ(timeline.slices()[0].end_s, 3.0);
}

TEST(WorkLogTimeline, HostWorkIsDealtToTheLowestFreeWorkerLane) {
  // Given out of order; by start: a [0,2) lane 0; b [1,3) lane 1 (0 busy); c [2,4) lane 0 (a ended
  // at 2, half-open); d [2.5,3.5) lane 2 (0 busy until 4, 1 until 3); e [3,5) lane 1 (b ended at 3).
  const std::vector<WorkRecord> records = {
      record("host-workers", "refresh e", 3.0, 5.0),          record("host-workers", "refresh c", 2.0, 4.0),
      record("host-workers", "refresh a", 0.0, 2.0),          record("host-workers", "host optimizer d", 2.5, 3.5),
      record("host-workers", "refresh b", 1.0, 3.0),
  };
  Timeline timeline;
  add_work_records(records, timeline);
  ASSERT_EQ(timeline.slices().size(), 5u);
  const std::map<std::string, std::string> expected_track = {{"refresh a", "cpu0 worker 0"},
                                                              {"refresh b", "cpu0 worker 1"},
                                                              {"refresh c", "cpu0 worker 0"},
                                                              {"host optimizer d", "cpu0 worker 2"},
                                                              {"refresh e", "cpu0 worker 1"}};
  for (const auto& [name, track] : expected_track) EXPECT_EQ(slice_named(timeline, name).track, track) << name;
  EXPECT_EQ(slice_named(timeline, "refresh c").category, "refresh");
  EXPECT_EQ(slice_named(timeline, "host optimizer d").category, "optimizer");
  EXPECT_DOUBLE_EQ(slice_named(timeline, "refresh e").start_s, 3.0);
  EXPECT_DOUBLE_EQ(slice_named(timeline, "refresh e").end_s, 5.0);
}

TEST(WorkLogTimeline, AnInstantOnTheHostTakesNoLaneOfItsOwn) {
  // Work without a body is recorded as an instant; with both lanes busy it goes to lane 0 and
  // does not keep the next work off a lane that is free.
  const std::vector<WorkRecord> records = {
      record("host-workers", "refresh a", 0.0, 2.0),
      record("host-workers", "refresh b", 0.5, 2.5),
      record("host-workers", "host optimizer instant", 1.0, 1.0),
      record("host-workers", "refresh c", 2.0, 3.0),
  };
  Timeline timeline;
  add_work_records(records, timeline);
  EXPECT_EQ(slice_named(timeline, "host optimizer instant").track, "cpu0 worker 0");
  EXPECT_EQ(slice_named(timeline, "refresh c").track, "cpu0 worker 0");
  std::set<std::string> tracks;
  for (const Slice& s : timeline.slices()) tracks.insert(s.track);
  EXPECT_EQ(tracks, (std::set<std::string>{"cpu0 worker 0", "cpu0 worker 1"}));
}

TEST(WorkLogTimeline, CopyEnginesGoToTheSimulatorsLinksAndDisk) {
  const std::vector<WorkRecord> records = {
      record("copy device->host", "d2h", 0, 1),   record("copy host->device", "h2d", 0, 1),
      record("copy device->device", "d2d", 0, 1), record("copy host->host", "h2h", 0, 1),
      record("copy host->nvme", "h2n", 0, 1),     record("copy nvme->device", "n2d", 0, 1),
  };
  Timeline timeline;
  add_work_records(records, timeline);
  const std::map<std::string, std::pair<std::string, std::string>> expected = {
      {"d2h", {"link d2h0", "transfer"}},  {"h2d", {"link h2d0", "transfer"}}, {"d2d", {"link hbm0", "transfer"}},
      {"h2h", {"link dram0", "transfer"}}, {"h2n", {"disk nvme0", "io"}},      {"n2d", {"disk nvme0", "io"}}};
  for (const auto& [name, where] : expected) {
    EXPECT_EQ(slice_named(timeline, name).track, where.first) << name;
    EXPECT_EQ(slice_named(timeline, name).category, where.second) << name;
  }
}

TEST(WorkLogTimeline, TheUnitNumbersEveryTrack) {
  WorkLogTimelineOptions options;
  options.unit = 3;
  const std::vector<WorkRecord> records = {record("device", "forward l", 0, 1),
                                           record("host-workers", "refresh b", 0, 1),
                                           record("copy device->host", "c", 0, 1),
                                           record("copy host->nvme", "n", 0, 1)};
  Timeline timeline;
  add_work_records(records, timeline, options);
  EXPECT_EQ(slice_named(timeline, "forward l").track, "gpu3 stream");
  EXPECT_EQ(slice_named(timeline, "refresh b").track, "cpu3 worker 0");
  EXPECT_EQ(slice_named(timeline, "c").track, "link d2h3");
  EXPECT_EQ(slice_named(timeline, "n").track, "disk nvme3");
}

TEST(WorkLogTimeline, FailedWorkIsShownAndMarked) {
  const std::vector<WorkRecord> records = {record("host-workers", "refresh w block 1", 1.0, 2.0, false),
                                           record("copy nvme->host", "read w", 2.0, 2.5, false)};
  Timeline timeline;
  add_work_records(records, timeline);
  ASSERT_EQ(timeline.slices().size(), 2u);
  const Slice& refresh = slice_named(timeline, "refresh w block 1 (failed)");
  EXPECT_EQ(refresh.track, "cpu0 worker 0");
  EXPECT_EQ(refresh.category, "refresh");
  EXPECT_DOUBLE_EQ(refresh.start_s, 1.0);
  EXPECT_DOUBLE_EQ(refresh.end_s, 2.0);
  EXPECT_EQ(slice_named(timeline, "read w (failed)").track, "disk nvme0");
}

TEST(WorkLogTimeline, UnknownExecutorsKeepTheirNameAndABackwardsRecordIsAnInstant) {
  const std::vector<WorkRecord> records = {record("nccl", "all-reduce", 1.0, 1.5),
                                           record("device", "forward l", 2.0, 1.0)};
  Timeline timeline;
  add_work_records(records, timeline);
  EXPECT_EQ(slice_named(timeline, "all-reduce").track, "nccl");
  EXPECT_EQ(slice_named(timeline, "all-reduce").category, "other");
  const Slice& backwards = slice_named(timeline, "forward l");
  EXPECT_DOUBLE_EQ(backwards.start_s, 2.0);
  EXPECT_DOUBLE_EQ(backwards.end_s, 2.0);
}

// The executor names the converter expects are the ones RealPlatform gives, and the result is
// a trace the Chrome writer accepts.
TEST(WorkLogTimeline, ARealPlatformsLogConvertsToNamedTracks) {
  real::RealPlatformOptions options;
  options.host_threads = 2;
  options.device_mode = real::DeviceMode::cpu;
  real::RealPlatform platform(options);
  const auto succeed = [] { return Status::success(); };
  platform::Pending forward = platform.device_stream().submit({"forward l0", {}, succeed});
  platform::Pending refresh = platform.host_workers().submit({"refresh l0 block 0", {}, succeed});
  auto src = platform.memory().allocate(platform::Tier::host, 64, "src");
  auto dst = platform.memory().allocate(platform::Tier::device, 64, "dst");
  ASSERT_TRUE(src && dst);
  platform::Pending copy = platform.memory().copy(*src, *dst);
  ASSERT_TRUE(forward.status().ok());
  ASSERT_TRUE(refresh.status().ok());
  ASSERT_TRUE(copy.status().ok());

  Timeline timeline;
  add_work_records(platform.trace().records(), timeline);
  std::map<std::string, std::string> category_of_track;
  for (const Slice& s : timeline.slices()) {
    category_of_track[s.track] = s.category;
    EXPECT_GE(s.end_s, s.start_s) << s.name;
    EXPECT_GE(s.start_s, 0.0) << s.name;  // seconds since the platform's clock started
  }
  const std::map<std::string, std::string> expected = {
      {"gpu0 stream", "compute"}, {"cpu0 worker 0", "refresh"}, {"link h2d0", "transfer"}};
  EXPECT_EQ(category_of_track, expected);
  platform.memory().release(*src);
  platform.memory().release(*dst);

  const testing::TempDir dir;
  write_chrome_trace(timeline, dir.path() / "trace.json");
  std::ifstream in(dir.path() / "trace.json");
  const nlohmann::json trace = nlohmann::json::parse(in);
  std::set<std::string> threads;
  for (const nlohmann::json& e : trace.at("traceEvents"))
    if (e.at("ph") == "M" && e.at("name") == "thread_name") threads.insert(e.at("args").at("name"));
  EXPECT_EQ(threads, (std::set<std::string>{"gpu0 stream", "cpu0 worker 0", "link h2d0"}));
}

}  // namespace
}  // namespace asteria::traces

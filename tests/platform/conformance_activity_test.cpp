// Conformance: what every backend reports about the work it ran. Each backend records on the same
// track names, copies the Work's OpTag into the Activity unchanged, records a failed body as not
// ok, and tags a copy with its cause's step and op.
#include <algorithm>
#include <vector>

#include "tests/common/recording_sink.hpp"
#include "tests/platform/conformance.hpp"

namespace asteria::platform::conformance {
namespace {

Requirements recording() {
  Requirements r;
  r.record_activities = true;
  return r;
}

void expect_same_tag(const OpTag& actual, const OpTag& expected) {
  EXPECT_EQ(actual.step, expected.step);
  EXPECT_EQ(actual.op, expected.op);
  EXPECT_EQ(actual.launch, expected.launch);
  EXPECT_EQ(actual.role, expected.role) << to_string(actual.role) << " for " << to_string(expected.role);
}

TEST_P(PlatformConformance, ReportsWhereItsTimeComesFrom) {
  const TimeSource expected = GetParam().time;
  run([expected](Platform& p) { EXPECT_EQ(p.time_source(), expected) << to_string(p.time_source()); });
}

TEST_P(PlatformConformance, RecordsNothingWithoutASink) {
  run([](Platform& p) { EXPECT_EQ(p.activities(), nullptr); });
}

TEST_P(PlatformConformance, RecordsEachWorkWithItsTagOnTheSharedTracks) {
  run(
      [](Platform& p) {
        auto* sink = dynamic_cast<test::RecordingSink*>(p.activities());
        ASSERT_NE(sink, nullptr);
        EXPECT_EQ(sink->unit(), 0);

        const OpTag kernel_tag{4, 17, 2, ActivityRole::launch};
        const OpTag refresh_tag{4, 18, -1, ActivityRole::refresh_job};
        const OpTag failing_tag{5, 3, -1, ActivityRole::op};
        Work kernel = work("fused kernels", [] { return Status::success(); });
        kernel.tag = kernel_tag;
        kernel.cost = ::asteria::platform::Cost{WorkKind::gemm, 1e6, 2e3, 0, true};
        Work refresh = work("refresh block 1", [] { return Status::success(); });
        refresh.tag = refresh_tag;
        refresh.cost = ::asteria::platform::Cost{WorkKind::eigh, 0.0, 0.0, 8};
        Work failing = work("failing refresh", [] { return Status(StatusCode::no_convergence, "no"); });
        failing.tag = failing_tag;
        ASSERT_TRUE(p.device_stream().submit(std::move(kernel)).status().ok());
        ASSERT_TRUE(p.host_workers().submit(std::move(refresh)).status().ok());
        ASSERT_FALSE(p.host_workers().submit(std::move(failing)).status().ok());

        const std::vector<Activity> on_stream = sink->on_track(device_stream_track(0));
        ASSERT_EQ(on_stream.size(), 1u);
        EXPECT_EQ(on_stream[0].track, "gpu0 stream");
        EXPECT_EQ(on_stream[0].label, "fused kernels");
        expect_same_tag(on_stream[0].tag, kernel_tag);
        EXPECT_EQ(on_stream[0].cost.pieces()[0].kind, WorkKind::gemm);
        EXPECT_EQ(on_stream[0].cost.flops(), 1e6);
        EXPECT_EQ(on_stream[0].cost.bytes(), 2e3);
        EXPECT_TRUE(on_stream[0].cost.pieces()[0].reduced_precision);
        EXPECT_TRUE(on_stream[0].ok);
        EXPECT_LE(on_stream[0].start, on_stream[0].end);

        std::vector<Activity> on_workers = sink->on_track("cpu0 worker ");
        ASSERT_EQ(on_workers.size(), 2u);
        const int lanes = p.host_workers().concurrency();
        for (const Activity& a : on_workers) {
          bool named = false;
          for (int k = 0; k < lanes; ++k) named = named || a.track == host_worker_track(0, k);
          EXPECT_TRUE(named) << a.track;
          EXPECT_LE(a.start, a.end);
        }
        std::sort(on_workers.begin(), on_workers.end(),
                  [](const Activity& a, const Activity& b) { return a.tag.step < b.tag.step; });
        EXPECT_EQ(on_workers[0].label, "refresh block 1");
        expect_same_tag(on_workers[0].tag, refresh_tag);
        EXPECT_EQ(on_workers[0].cost.pieces()[0].dimension, 8);
        EXPECT_TRUE(on_workers[0].ok);
        EXPECT_EQ(on_workers[1].label, "failing refresh");
        expect_same_tag(on_workers[1].tag, failing_tag);
        EXPECT_FALSE(on_workers[1].ok) << "a failed body is recorded as failed";
      },
      recording());
}

TEST_P(PlatformConformance, RecordsACopyWithItsCausesStepAndOp) {
  run(
      [](Platform& p) {
        auto* sink = dynamic_cast<test::RecordingSink*>(p.activities());
        ASSERT_NE(sink, nullptr);
        Memory& m = p.memory();
        std::optional<Region> host = m.allocate(Tier::host, 4096, "weights");
        std::optional<Region> device = m.allocate(Tier::device, 4096, "weights on device");
        std::optional<Region> disk = m.allocate(Tier::nvme, 4096, "weights on nvme");
        ASSERT_TRUE(host && device && disk);
        const std::size_t before = sink->activities().size();
        const OpTag upload{2, 9, -1, ActivityRole::op};
        const OpTag evict{2, 10, 1, ActivityRole::launch};
        ASSERT_TRUE(m.copy(*host, *device, upload).status().ok());
        ASSERT_TRUE(m.copy(*host, *disk, evict).status().ok());
        const std::vector<Activity> all = sink->activities();
        const std::vector<Activity> copies(all.begin() + static_cast<std::ptrdiff_t>(before), all.end());
        ASSERT_EQ(copies.size(), 2u);
        for (const Activity& a : copies) {
          EXPECT_EQ(a.cost.bytes(), 4096.0);
          EXPECT_TRUE(a.ok);
          EXPECT_LE(a.start, a.end);
        }
        EXPECT_NE(copies[0].label.find("weights -> weights on device"), std::string::npos) << copies[0].label;
        expect_same_tag(copies[0].tag, {upload.step, upload.op, upload.launch, ActivityRole::transfer});
        EXPECT_NE(copies[1].label.find("weights -> weights on nvme"), std::string::npos) << copies[1].label;
        expect_same_tag(copies[1].tag, {evict.step, evict.op, evict.launch, ActivityRole::io});
        m.release(*host);
        m.release(*device);
        m.release(*disk);
      },
      recording());
}

}  // namespace
}  // namespace asteria::platform::conformance

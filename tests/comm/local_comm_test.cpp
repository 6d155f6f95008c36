// The in-process communicator: the conformance scenarios with each rank on a thread of its own,
// and what only it can show (its layout, its activities, a world ending with calls unmatched).
#include "core/real/local_comm.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/real/real_sync.hpp"
#include "tests/comm/comm_conformance.hpp"
#include "tests/common/recording_sink.hpp"

namespace asteria::comm_conformance {
namespace {

void run_local(int ranks, Scenario scenario) {
  real::LocalCommWorld world(ranks, 2);
  std::deque<real::RealSync> syncs(static_cast<std::size_t>(ranks));
  std::deque<platform::CompletionBoard> boards;
  for (real::RealSync& s : syncs) boards.emplace_back(s);
  std::vector<std::thread> threads;
  for (int r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      try {
        Rank rank{world.rank(r), boards[static_cast<std::size_t>(r)],
                  [] { std::this_thread::sleep_for(std::chrono::milliseconds(20)); }};
        scenario(rank);
      } catch (const std::exception& e) {
        ADD_FAILURE() << "rank " << r << " threw: " << e.what();
      }
    });
  for (std::thread& t : threads) t.join();
}

Backend local_backend() { return {"local", run_local}; }

INSTANTIATE_TEST_SUITE_P(LocalComm, CommConformance, ::testing::ValuesIn(params(local_backend(), {1, 2, 3, 4})),
                         param_name);

TEST(LocalComm, RanksFillNodesInOrder) {
  real::LocalCommWorld world(5, 2);
  EXPECT_EQ(world.size(), 5);
  for (int r = 0; r < 5; ++r) {
    EXPECT_EQ(world.rank(r).rank(), r);
    EXPECT_EQ(world.rank(r).size(), 5);
    EXPECT_EQ(world.rank(r).node_of(r), r / 2);
    EXPECT_EQ(world.rank(r).nodes(), 3);
  }
  EXPECT_THROW(world.rank(5), std::out_of_range);
  EXPECT_THROW(static_cast<void>(world.rank(0).node_of(5)), std::out_of_range);
}

TEST(LocalComm, RejectsAnEmptyWorldOrNode) {
  EXPECT_THROW(real::LocalCommWorld(0, 1), std::invalid_argument);
  EXPECT_THROW(real::LocalCommWorld(2, 0), std::invalid_argument);
}

TEST(LocalComm, RecordsOneActivityPerCollectiveOnItsRanksTrack) {
  test::RecordingSink sink0(0), sink1(1);
  real::LocalCommWorld world(2, 2);
  world.record(0, &sink0);
  world.record(1, &sink1);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r)
    threads.emplace_back([&world, r] {
      std::vector<float> v(8, 1.0f);
      platform::CollectiveOptions options;
      options.label = "reduce gradients";
      options.tag.step = 3;
      EXPECT_TRUE(world.rank(r).world().all_reduce(platform::CommBuffer::of(v), platform::ReduceOp::sum,
                                                   std::move(options)).status().ok());
    });
  for (std::thread& t : threads) t.join();
  for (const test::RecordingSink* sink : {&sink0, &sink1}) {
    const auto recorded = sink->activities();
    ASSERT_EQ(recorded.size(), 1u);
    EXPECT_EQ(recorded[0].track, platform::comm_track(sink->unit()));
    EXPECT_EQ(recorded[0].label, "reduce gradients");
    EXPECT_EQ(recorded[0].tag.step, 3);
    EXPECT_DOUBLE_EQ(recorded[0].cost.bytes(), 32.0);
    EXPECT_LE(recorded[0].start, recorded[0].end);
    EXPECT_TRUE(recorded[0].ok);
  }
}

// A collective some member never called cannot complete: the world's end fails it.
TEST(LocalComm, EndingTheWorldFailsCollectivesAMemberNeverCalled) {
  platform::Pending lonely;
  std::vector<float> v(2, 1.0f);
  {
    real::LocalCommWorld world(2, 1);
    lonely = world.rank(0).world().all_reduce(platform::CommBuffer::of(v), platform::ReduceOp::sum);
    EXPECT_FALSE(lonely.test());
  }
  ASSERT_TRUE(lonely.test());
  EXPECT_FALSE(lonely.status().ok());
  EXPECT_NE(lonely.status().reason().find("ended"), std::string::npos) << lonely.status().message();
}

}  // namespace
}  // namespace asteria::comm_conformance

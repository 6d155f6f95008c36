// The simulated ranks' communicator: values, ordering after the input's work, groups, failures.
// Flow timing itself is checked against hand calculations in collective_flow_test.cpp.
#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <stdexcept>
#include <vector>

#include "core/platform/collective_values.hpp"
#include "sim/simulation.hpp"
#include "tests/common/recording_sink.hpp"
#include "tests/sim/in_child.hpp"
#include "tests/sim/tiny_profile.hpp"

namespace asteria::sim {
namespace {

using platform::CommBuffer;
using platform::CommGroup;
using platform::Cost;
using platform::Numerics;
using platform::Pending;
using platform::Platform;
using platform::ReduceOp;
using platform::Work;
using platform::WorkKind;
using testing::run_in_child;
using testing::tiny_options;

// Four units, two per node (tiny_profile), holding values.
SimulationOptions four_units(Numerics numerics = Numerics::values) {
  SimulationOptions o = tiny_options(numerics);
  o.units = 4;
  return o;
}

// The rank's communicator; a platform without one fails the test (throws).
platform::Comm& comm_of(Platform& p) {
  if (p.comm() == nullptr) throw std::logic_error("unit without a Comm");
  return *p.comm();
}

TEST(SimComm, OneUnitHasNoComm) {
  run_in_child([] {
    Simulation sim(tiny_options());
    sim.run([](int, Platform& p) { EXPECT_EQ(p.comm(), nullptr); });
  });
}

TEST(SimComm, SeveralUnitsShareOneWorldFillingNodesInOrder) {
  run_in_child([] {
    Simulation sim(four_units());
    sim.run([](int unit, Platform& p) {
      platform::Comm& comm = comm_of(p);
      EXPECT_EQ(comm.rank(), unit);
      EXPECT_EQ(comm.size(), 4);
      EXPECT_EQ(comm.node_of(unit), unit / 2);
      EXPECT_EQ(comm.nodes(), 2);
    });
  });
}

// Rank order is the contract: 1e8 + 1 rounds to 1e8 in fp32, so ((1e8 + 1) - 1e8) + 1 = 1,
// where a pairwise order would give (1e8 + 1) + (-1e8 + 1) = 0.
TEST(SimComm, AllReduceAddsInRankOrderAndEveryReplicaGetsTheSameBits) {
  run_in_child([] {
    Simulation sim(four_units());
    const std::vector<float> contribution = {1e8f, 1.0f, -1e8f, 1.0f};
    std::vector<std::vector<float>> sums(4), averages(4);
    sim.run([&](int unit, Platform& p) {
      auto& sum = sums[static_cast<std::size_t>(unit)];
      sum = {contribution[static_cast<std::size_t>(unit)], static_cast<float>(unit + 1)};
      auto& average = averages[static_cast<std::size_t>(unit)];
      average = {static_cast<float>(unit), 2.0f};
      CommGroup& world = comm_of(p).world();
      Pending a = world.all_reduce(CommBuffer::of(sum), ReduceOp::sum);
      Pending b = world.all_reduce(CommBuffer::of(average), ReduceOp::average);
      ASSERT_TRUE(a.status().ok()) << a.status().message();
      ASSERT_TRUE(b.status().ok()) << b.status().message();
    });
    for (const auto& s : sums) EXPECT_EQ(s, (std::vector<float>{1.0f, 10.0f}));
    for (const auto& a : averages) EXPECT_EQ(a, (std::vector<float>{1.5f, 2.0f}));
  });
}

TEST(SimComm, ReduceScatterAllGatherAndBroadcastMoveTheRightShards) {
  run_in_child([] {
    Simulation sim(four_units());
    std::vector<std::vector<float>> mine(4), gathered(4), broadcast(4);
    sim.run([&](int unit, Platform& p) {
      CommGroup& world = comm_of(p).world();
      // Rank r contributes r + 10·shard to every element of shard `shard`.
      std::vector<float> all(8);
      for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<float>(unit) + 10.0f * static_cast<float>(i / 2);
      auto& m = mine[static_cast<std::size_t>(unit)];
      m.assign(2, -1.0f);
      ASSERT_TRUE(world.reduce_scatter(CommBuffer::of(all), CommBuffer::of(m), ReduceOp::sum).status().ok());
      auto& g = gathered[static_cast<std::size_t>(unit)];
      g.assign(8, -1.0f);
      std::vector<float> own = {static_cast<float>(unit), static_cast<float>(-unit)};
      ASSERT_TRUE(world.all_gather(CommBuffer::of(own), CommBuffer::of(g)).status().ok());
      auto& b = broadcast[static_cast<std::size_t>(unit)];
      b = {static_cast<float>(unit) * 7.0f};
      ASSERT_TRUE(world.broadcast(CommBuffer::of(b), 2).status().ok());
    });
    for (int r = 0; r < 4; ++r) {
      // Σ_q (q + 10·r) = 6 + 40·r on both elements of shard r.
      const float expected = 6.0f + 40.0f * static_cast<float>(r);
      EXPECT_EQ(mine[static_cast<std::size_t>(r)], (std::vector<float>{expected, expected})) << "rank " << r;
      EXPECT_EQ(gathered[static_cast<std::size_t>(r)], (std::vector<float>{0, 0, 1, -1, 2, -2, 3, -3}));
      EXPECT_EQ(broadcast[static_cast<std::size_t>(r)], (std::vector<float>{14.0f}));
    }
  });
}

TEST(SimComm, Bf16ValuesAreAddedInFp32AndRoundedOnce) {
  run_in_child([] {
    Simulation sim(four_units());
    std::vector<std::vector<std::uint16_t>> values(4);
    sim.run([&](int unit, Platform& p) {
      // 1 + 3·2⁻⁹ = 1.005859375 rounds to 1.0078125; added one by one in bf16, each 2⁻⁹ (below
      // the half-ulp 2⁻⁸ at 1) would vanish and leave 1.
      auto& v = values[static_cast<std::size_t>(unit)];
      v = {platform::float_to_bf16(unit == 0 ? 1.0f : 0.001953125f)};
      ASSERT_TRUE(comm_of(p).world().all_reduce(CommBuffer::of_bf16(v), ReduceOp::sum).status().ok());
    });
    for (const auto& v : values) EXPECT_EQ(platform::bf16_to_float(v[0]), 1.0078125f);
  });
}

// The collective waits for the device work that produces its input, but the caller does not.
TEST(SimComm, ACollectiveStartsAfterItsInputsWorkWithoutBlockingTheCaller) {
  run_in_child([] {
    std::deque<test::RecordingSink> sinks;
    for (int u = 0; u < 4; ++u) sinks.emplace_back(u);
    SimulationOptions options = four_units(Numerics::shapes);
    options.activities = [&sinks](int unit) { return &sinks.at(static_cast<std::size_t>(unit)); };
    Simulation sim(options);
    std::vector<double> returned_at(4, -1.0);
    sim.run([&](int unit, Platform& p) {
      // Unit u's gradient takes (u + 1) · 0.5 ms: 1 GFLOP bf16 GEMMs at 2 TFLOP/s, plus launch.
      Work gradient{"gradient", Cost{WorkKind::gemm, (unit + 1) * 1e9, 0.0, 0, true}, {}};
      Pending produced = p.device_stream().submit(std::move(gradient));
      platform::CollectiveOptions after;
      after.after = {produced};
      after.label = "reduce gradients";
      Pending reduced = comm_of(p).world().all_reduce(CommBuffer::sized(1 << 20, platform::DType::bf16),
                                                     ReduceOp::sum, std::move(after));
      returned_at[static_cast<std::size_t>(unit)] = p.clock().now();
      ASSERT_TRUE(reduced.status().ok());
    });
    for (double t : returned_at) EXPECT_EQ(t, 0.0) << "the call returned at once";
    const double last_input = 4 * 5e-4 + 1e-5;
    for (int u = 0; u < 4; ++u) {
      const auto recorded = sinks[static_cast<std::size_t>(u)].activities();
      const platform::Activity* comm = nullptr;
      for (const auto& a : recorded)
        if (a.track == platform::comm_track(u)) comm = &a;
      ASSERT_NE(comm, nullptr) << "unit " << u << " records its collective";
      EXPECT_EQ(comm->label, "reduce gradients");
      EXPECT_NEAR(comm->start, last_input, 1e-12) << "starts when the slowest member's input exists";
      EXPECT_GT(comm->end, comm->start) << "2 MiB take time on the links";
      EXPECT_DOUBLE_EQ(comm->cost.bytes(), 2.0 * (1 << 20));
    }
  });
}

TEST(SimComm, NodeAndLeaderGroupsComeFromSplits) {
  run_in_child([] {
    Simulation sim(four_units());
    std::vector<std::vector<float>> node_sums(4), leader_sums(4);
    sim.run([&](int unit, Platform& p) {
      platform::Comm& comm = comm_of(p);
      CommGroup& node = comm.node();
      EXPECT_EQ(node.size(), 2);
      EXPECT_EQ(node.rank(), unit % 2);
      EXPECT_EQ(node.world_rank(0), unit / 2 * 2);
      auto& n = node_sums[static_cast<std::size_t>(unit)];
      n = {static_cast<float>(unit)};
      ASSERT_TRUE(node.all_reduce(CommBuffer::of(n), ReduceOp::sum).status().ok());
      CommGroup* leaders = comm.leaders();
      EXPECT_EQ(leaders != nullptr, unit % 2 == 0) << "unit " << unit;
      if (leaders == nullptr) return;
      EXPECT_EQ(leaders->size(), 2);
      auto& l = leader_sums[static_cast<std::size_t>(unit)];
      l = {static_cast<float>(unit)};
      ASSERT_TRUE(leaders->all_reduce(CommBuffer::of(l), ReduceOp::sum).status().ok());
    });
    EXPECT_EQ(node_sums, (std::vector<std::vector<float>>{{1}, {1}, {5}, {5}}));
    EXPECT_EQ(leader_sums[0], std::vector<float>{2});
    EXPECT_EQ(leader_sums[2], std::vector<float>{2});
  });
}

// Three ranks over two nodes cannot split evenly by node: the collective runs as a ring.
TEST(SimComm, AGroupOverUnevenNodesStillReduces) {
  run_in_child([] {
    Simulation sim(four_units());
    std::vector<std::vector<float>> sums(4);
    sim.run([&](int unit, Platform& p) {
      std::unique_ptr<CommGroup> three = comm_of(p).world().split(unit < 3 ? 0 : -1, -unit);
      EXPECT_EQ(three != nullptr, unit < 3);
      if (!three) return;
      EXPECT_EQ(three->size(), 3);
      EXPECT_EQ(three->rank(), 2 - unit) << "ordered by key";
      auto& s = sums[static_cast<std::size_t>(unit)];
      s = {static_cast<float>(unit + 1)};
      ASSERT_TRUE(three->all_reduce(CommBuffer::of(s), ReduceOp::sum).status().ok());
    });
    EXPECT_EQ(sums, (std::vector<std::vector<float>>{{6}, {6}, {6}, {}}));
  });
}

TEST(SimComm, MismatchedCallsAndFailedInputsFailTheCollectiveOnEveryMember) {
  run_in_child([] {
    Simulation sim(four_units());
    std::vector<StatusCode> mismatched(4), failed(4);
    sim.run([&](int unit, Platform& p) {
      CommGroup& world = comm_of(p).world();
      std::vector<float> data(unit == 3 ? 3 : 2, 1.0f);
      mismatched[static_cast<std::size_t>(unit)] =
          world.all_reduce(CommBuffer::of(data), ReduceOp::sum).status().code();
      Work broken{"broken", Cost{}, [unit]() -> Status {
                    if (unit == 1) throw std::runtime_error("bad gradient");
                    return Status::success();
                  }};
      platform::CollectiveOptions options;
      options.after = {p.device_stream().submit(std::move(broken))};
      std::vector<float> more(2, 1.0f);
      failed[static_cast<std::size_t>(unit)] =
          world.all_reduce(CommBuffer::of(more), ReduceOp::sum, std::move(options)).status().code();
    });
    for (int u = 0; u < 4; ++u) {
      EXPECT_NE(mismatched[static_cast<std::size_t>(u)], StatusCode::ok) << "unit " << u;
      EXPECT_NE(failed[static_cast<std::size_t>(u)], StatusCode::ok) << "unit " << u;
    }
  });
}

TEST(SimComm, BadBuffersAreRejectedWhereTheyArePassed) {
  run_in_child([] {
    Simulation sim(four_units());
    sim.run([](int, Platform& p) {
      CommGroup& world = comm_of(p).world();
      std::vector<float> all(6), mine(2);
      EXPECT_THROW(world.reduce_scatter(CommBuffer::of(all), CommBuffer::of(mine), ReduceOp::sum),
                   std::invalid_argument);
      EXPECT_THROW(world.all_gather(CommBuffer::of(mine), CommBuffer::of(all)), std::invalid_argument);
      EXPECT_THROW(world.broadcast(CommBuffer::of(mine), 4), std::invalid_argument);
    });
  });
}

}  // namespace
}  // namespace asteria::sim

// Copies between tiers take the times of their links and disks (tiny profile: h2d 1 GB/s and
// 1 µs, d2h 0.5 GB/s and 2 µs, NVMe write 1 GB/s, read 2 GB/s, 100 µs per request, device
// memory 200 GB/s, host memory 50 GB/s; a copy reads and writes, so it gets half of those).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/simulation.hpp"
#include "tests/common/recording_sink.hpp"
#include "tests/sim/in_child.hpp"
#include "tests/sim/tiny_profile.hpp"

namespace asteria::sim {
namespace {

using platform::Memory;
using platform::Numerics;
using platform::Pending;
using platform::Platform;
using platform::Region;
using platform::Tier;
using testing::run_in_child;
using testing::tiny_options;
using testing::tolerance;

constexpr std::size_t kBytes = 400'000;

Region must_allocate(Memory& m, Tier tier, std::size_t bytes, const std::string& label) {
  std::optional<Region> r = m.allocate(tier, bytes, label);
  if (!r) throw std::runtime_error("could not allocate " + label);
  return *r;
}

// Simulated seconds one copy from a `from` region to a `to` region of kBytes takes alone.
double time_one_copy(Platform& p, Tier from, Tier to, const platform::OpTag& cause = {}) {
  Region a = must_allocate(p.memory(), from, kBytes, "a");
  Region b = must_allocate(p.memory(), to, kBytes, "b");
  const double start = p.clock().now();
  EXPECT_TRUE(p.memory().copy(a, b, cause).status().ok());
  const double seconds = p.clock().now() - start;
  p.memory().release(a);
  p.memory().release(b);
  return seconds;
}

// What one leg of a copy should have recorded.
struct ExpectedLeg {
  std::string track;
  platform::ActivityRole role;
  double seconds;
};

// The recorded legs, in order: each on its link or disk, for the copy's bytes, with the step and
// op of the copy's cause, back to back (a leg starts when the one before it ends).
void expect_legs(const std::vector<platform::Activity>& recorded, const std::vector<ExpectedLeg>& expected,
                 const platform::OpTag& cause, const std::string& label = "a -> b") {
  ASSERT_EQ(recorded.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const platform::Activity& a = recorded[i];
    EXPECT_EQ(a.track, expected[i].track) << i;
    EXPECT_EQ(a.label, label) << i;
    EXPECT_EQ(a.tag.role, expected[i].role) << i << ": " << platform::to_string(a.tag.role);
    EXPECT_EQ(a.tag.step, cause.step) << i;
    EXPECT_EQ(a.tag.op, cause.op) << i;
    EXPECT_EQ(a.tag.launch, cause.launch) << i;
    EXPECT_EQ(a.cost.bytes(), static_cast<double>(kBytes)) << i;
    EXPECT_NEAR(a.end - a.start, expected[i].seconds, tolerance(expected[i].seconds)) << i;
    if (i > 0) {
      EXPECT_NEAR(a.start, recorded[i - 1].end, 1e-12) << i;
    }
    EXPECT_TRUE(a.ok) << i;
  }
}

TEST(SimTransfers, OneCopyTakesLatencyPlusBytesOverBandwidth) {
  run_in_child([] {
    test::RecordingSink sink(0);
    SimulationOptions options = tiny_options(Numerics::shapes);
    options.activities = [&sink](int) { return &sink; };
    Simulation sim(options);
    const platform::OpTag cause{3, 12, -1, platform::ActivityRole::op};
    sim.run([&](int, Platform& p) {
      EXPECT_NEAR(time_one_copy(p, Tier::host, Tier::device, cause), 1e-6 + 4e-4, tolerance(4.01e-4)) << "h2d";
      EXPECT_NEAR(time_one_copy(p, Tier::device, Tier::host, cause), 2e-6 + 8e-4, tolerance(8.02e-4)) << "d2h";
      EXPECT_NEAR(time_one_copy(p, Tier::device, Tier::device, cause), 4e5 / 1e11, tolerance(4e-6))
          << "device memory";
      EXPECT_NEAR(time_one_copy(p, Tier::host, Tier::host, cause), 4e5 / 2.5e10, tolerance(1.6e-5)) << "host memory";
    });
    EXPECT_EQ(sim.activity_counts().communications, 4u);
    EXPECT_EQ(sim.activity_counts().executions, 0u);
    // Each copy on the link the simulator charged it to, in the order they ran.
    const std::vector<platform::Activity> recorded = sink.activities();
    ASSERT_EQ(recorded.size(), 4u);
    const auto transfer = platform::ActivityRole::transfer;
    const std::vector<ExpectedLeg> expected{{"link h2d0", transfer, 4.01e-4},
                                            {"link d2h0", transfer, 8.02e-4},
                                            {"link hbm0", transfer, 4e-6},
                                            {"link dram0", transfer, 1.6e-5}};
    for (std::size_t i = 0; i < expected.size(); ++i) {
      SCOPED_TRACE("copy " + std::to_string(i));
      expect_legs({recorded[i]}, {expected[i]}, cause);
    }
  });
}

TEST(SimTransfers, ConcurrentCopiesShareTheLinkFairly) {
  run_in_child([] {
    Simulation sim(tiny_options(Numerics::shapes));
    sim.run([](int, Platform& p) {
      Memory& m = p.memory();
      std::vector<Region> regions;
      for (const char* label : {"a", "b"}) regions.push_back(must_allocate(m, Tier::host, kBytes, label));
      for (const char* label : {"a on device", "b on device"})
        regions.push_back(must_allocate(m, Tier::device, kBytes, label));
      const Pending first = m.copy(regions[0], regions[2]);
      const Pending second = m.copy(regions[1], regions[3]);
      std::vector<double> ends;
      for (const Pending& copy : {first, second}) {
        copy.wait();
        ends.push_back(p.clock().now());
      }
      // Each gets half of 1 GB/s: 1 µs + 2 · 400 kB / (1 GB/s), and they end together.
      EXPECT_NEAR(ends[0], 1e-6 + 8e-4, tolerance(8.01e-4));
      EXPECT_NEAR(ends[1], 1e-6 + 8e-4, tolerance(8.01e-4));
      // The other direction is its own link: a d2h copy beside an h2d copy is not slowed.
      const double start = p.clock().now();
      const Pending up = m.copy(regions[0], regions[2]);
      const Pending down = m.copy(regions[3], regions[1]);
      up.wait();
      EXPECT_NEAR(p.clock().now() - start, 4.01e-4, tolerance(4.01e-4));
      down.wait();
      EXPECT_NEAR(p.clock().now() - start, 8.02e-4, tolerance(8.02e-4));
      for (Region& r : regions) m.release(r);
    });
  });
}

TEST(SimTransfers, NvmeRequestsTakeLatencyPlusBytesOverTheirBandwidth) {
  run_in_child([] {
    test::RecordingSink sink(0);
    SimulationOptions options = tiny_options(Numerics::shapes);
    options.activities = [&sink](int) { return &sink; };
    Simulation sim(options);
    std::vector<std::vector<platform::Activity>> per_copy;
    auto legs_since = [&sink](std::size_t before) {
      const std::vector<platform::Activity> all = sink.activities();
      return std::vector<platform::Activity>(all.begin() + static_cast<std::ptrdiff_t>(before), all.end());
    };
    sim.run([&](int, Platform& p) {
      // Write 1 GB/s, read 2 GB/s, 100 µs per request.
      std::size_t before = sink.activities().size();
      EXPECT_NEAR(time_one_copy(p, Tier::host, Tier::nvme), 1e-4 + 4e-4, tolerance(5e-4)) << "write";
      per_copy.push_back(legs_since(before));
      before = sink.activities().size();
      EXPECT_NEAR(time_one_copy(p, Tier::nvme, Tier::host), 1e-4 + 2e-4, tolerance(3e-4)) << "read";
      per_copy.push_back(legs_since(before));
      // Through the host: d2h then a write; a read then h2d; a read then a write.
      before = sink.activities().size();
      EXPECT_NEAR(time_one_copy(p, Tier::device, Tier::nvme), 8.02e-4 + 5e-4, tolerance(1.302e-3));
      per_copy.push_back(legs_since(before));
      before = sink.activities().size();
      EXPECT_NEAR(time_one_copy(p, Tier::nvme, Tier::device), 3e-4 + 4.01e-4, tolerance(7.01e-4));
      per_copy.push_back(legs_since(before));
      before = sink.activities().size();
      EXPECT_NEAR(time_one_copy(p, Tier::nvme, Tier::nvme), 3e-4 + 5e-4, tolerance(8e-4));
      per_copy.push_back(legs_since(before));
    });
    EXPECT_EQ(sim.activity_counts().ios, 6u);
    EXPECT_EQ(sim.activity_counts().communications, 2u);
    // Each leg on its disk or link, a disk request with its latency.
    const auto io = platform::ActivityRole::io;
    const auto transfer = platform::ActivityRole::transfer;
    const std::vector<std::vector<ExpectedLeg>> expected{
        {{"disk nvme0", io, 5e-4}},
        {{"disk nvme0", io, 3e-4}},
        {{"link d2h0", transfer, 8.02e-4}, {"disk nvme0", io, 5e-4}},
        {{"disk nvme0", io, 3e-4}, {"link h2d0", transfer, 4.01e-4}},
        {{"disk nvme0", io, 3e-4}, {"disk nvme0", io, 5e-4}},
    };
    ASSERT_EQ(per_copy.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      SCOPED_TRACE("copy " + std::to_string(i));
      expect_legs(per_copy[i], expected[i], platform::OpTag{});
    }
  });
}

// A transfer (a plan's transfer op: a gradient down, new weights up) takes the path and the time
// of a copy of its bytes, with no region and no data:
//   host -> device    1 µs + 400 kB / 1 GB/s = 401 µs on the h2d link;
//   device -> host    2 µs + 400 kB / 0.5 GB/s = 802 µs on the d2h link;
//   host -> nvme      100 µs + 400 kB / 1 GB/s = 500 µs, a disk write;
//   device -> nvme    802 µs over d2h, then the 500 µs write.
// Zero bytes take no time and leave no record.
TEST(SimTransfers, ATransferTakesTheTimeOfItsPathAndHoldsNoMemory) {
  run_in_child([] {
    test::RecordingSink sink(0);
    SimulationOptions options = tiny_options(Numerics::values);  // data-true: still no bytes held
    options.activities = [&sink](int) { return &sink; };
    Simulation sim(options);
    const platform::OpTag cause{2, 40, -1, platform::ActivityRole::transfer};
    std::vector<std::vector<platform::Activity>> per_transfer;
    sim.run([&](int, Platform& p) {
      const auto time_transfer = [&](Tier from, Tier to) {
        const std::size_t before = sink.activities().size();
        const double start = p.clock().now();
        EXPECT_TRUE(p.memory().transfer(from, to, kBytes, "gradient of w", cause).status().ok());
        const double seconds = p.clock().now() - start;
        const std::vector<platform::Activity> all = sink.activities();
        per_transfer.emplace_back(all.begin() + static_cast<std::ptrdiff_t>(before), all.end());
        return seconds;
      };
      EXPECT_NEAR(time_transfer(Tier::host, Tier::device), 4.01e-4, tolerance(4.01e-4)) << "h2d";
      EXPECT_NEAR(time_transfer(Tier::device, Tier::host), 8.02e-4, tolerance(8.02e-4)) << "d2h";
      EXPECT_NEAR(time_transfer(Tier::host, Tier::nvme), 5e-4, tolerance(5e-4)) << "write";
      EXPECT_NEAR(time_transfer(Tier::device, Tier::nvme), 1.302e-3, tolerance(1.302e-3)) << "d2h, write";
      const platform::Pending nothing = p.memory().transfer(Tier::device, Tier::host, 0, "empty", cause);
      EXPECT_TRUE(nothing.test());
      for (Tier t : {Tier::device, Tier::host, Tier::nvme}) EXPECT_EQ(p.memory().usage(t).peak_resident, 0u);
    });
    EXPECT_EQ(sim.activity_counts().communications, 3u);
    EXPECT_EQ(sim.activity_counts().ios, 2u);
    const auto io = platform::ActivityRole::io;
    const auto transfer = platform::ActivityRole::transfer;
    const std::vector<std::vector<ExpectedLeg>> expected{{{"link h2d0", transfer, 4.01e-4}},
                                                         {{"link d2h0", transfer, 8.02e-4}},
                                                         {{"disk nvme0", io, 5e-4}},
                                                         {{"link d2h0", transfer, 8.02e-4}, {"disk nvme0", io, 5e-4}}};
    ASSERT_EQ(per_transfer.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      SCOPED_TRACE("transfer " + std::to_string(i));
      expect_legs(per_transfer[i], expected[i], cause, "gradient of w");
    }
  });
}

// A transfer shares its link with copies: beside a copy of the same size on h2d, each gets half
// of 1 GB/s and both end at 1 µs + 2 x 400 kB / (1 GB/s) = 801 µs.
TEST(SimTransfers, ATransferSharesItsLinkWithCopies) {
  run_in_child([] {
    Simulation sim(tiny_options(Numerics::shapes));
    sim.run([](int, Platform& p) {
      Region a = must_allocate(p.memory(), Tier::host, kBytes, "a");
      Region b = must_allocate(p.memory(), Tier::device, kBytes, "b");
      const Pending copy = p.memory().copy(a, b);
      const Pending moved = p.memory().transfer(Tier::host, Tier::device, kBytes, "weights of w", {});
      copy.wait();
      moved.wait();
      EXPECT_NEAR(p.clock().now(), 1e-6 + 8e-4, tolerance(8.01e-4));
      p.memory().release(a);
      p.memory().release(b);
    });
  });
}

TEST(SimTransfers, CopiesMoveTheSmallerSizeOfTheTwoRegions) {
  run_in_child([] {
    Simulation sim(tiny_options(Numerics::shapes));
    sim.run([](int, Platform& p) {
      Region big = must_allocate(p.memory(), Tier::host, 2 * kBytes, "big");
      Region small = must_allocate(p.memory(), Tier::device, kBytes, "small");
      const double start = p.clock().now();
      ASSERT_TRUE(p.memory().copy(big, small).status().ok());
      EXPECT_NEAR(p.clock().now() - start, 4.01e-4, tolerance(4.01e-4));
      p.memory().release(big);
      p.memory().release(small);
    });
  });
}

}  // namespace
}  // namespace asteria::sim

// Tier budgets from the profile, unified memory, data-true and data-free regions, occupancy
// counters (tiny profile: 1 MB of GPU memory, 4 MB of host memory of which half is usable,
// 10 MB of NVMe).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "sim/simulation.hpp"
#include "tests/common/recording_sink.hpp"
#include "tests/sim/in_child.hpp"
#include "tests/sim/tiny_profile.hpp"

namespace asteria::sim {
namespace {

using platform::Memory;
using platform::Numerics;
using platform::Platform;
using platform::Region;
using platform::Tier;
using testing::q;
using testing::run_in_child;
using testing::tiny_options;
using testing::tolerance;

Region must_allocate(Memory& m, Tier tier, std::size_t bytes, const std::string& label) {
  std::optional<Region> r = m.allocate(tier, bytes, label);
  if (!r) throw std::runtime_error("could not allocate " + label);
  return *r;
}

hw::HardwareProfile unified_profile() {
  hw::HardwareProfile p = testing::tiny_profile();
  p.host_memory.unified = true;
  p.gpu.memory_bytes = q(1.5e6);  // the largest share the GPU may take of the 2 MB pool
  return p;
}

TEST(SimMemory, TheModelsOwnMemoryIsReservedOnceFromAUnifiedPool) {
  workload::ModelMemory model;
  model.bytes = {900'000, 800'000, 0};  // 1.7 MB of the 2 MB pool
  std::vector<runtime::TierShortfall> short_of;
  const TierBudgets left = hw::less_model_memory(budgets_from(unified_profile()), model, short_of);
  EXPECT_TRUE(short_of.empty());
  EXPECT_EQ(left.device, 600'000u);
  EXPECT_EQ(left.host, 1'200'000u);
  EXPECT_EQ(left.unified, 300'000u);  // the pool less device and host together

  model.bytes = {1'200'000, 1'000'000, 0};  // each within its tier, 2.2 MB in a 2 MB pool
  const TierBudgets over = hw::less_model_memory(budgets_from(unified_profile()), model, short_of);
  ASSERT_EQ(short_of.size(), 1u);
  EXPECT_TRUE(short_of[0].shared_pool);
  EXPECT_EQ(short_of[0].needed, 2'200'000u);
  EXPECT_EQ(short_of[0].where(), "device + host (one unified memory)");
  EXPECT_EQ(over.unified, 2'000'000u);

  short_of.clear();  // separate memories: each tier on its own
  model.bytes = {1'200'000, 0, 0};
  (void)hw::less_model_memory(budgets_from(testing::tiny_profile()), model, short_of);
  ASSERT_EQ(short_of.size(), 1u);
  EXPECT_FALSE(short_of[0].shared_pool);
  EXPECT_EQ(short_of[0].tier, Tier::device);
}

TEST(SimMemory, BudgetsComeFromTheProfile) {
  const TierBudgets b = budgets_from(testing::tiny_profile());
  EXPECT_EQ(b.device, 1'000'000u);
  EXPECT_EQ(b.host, 2'000'000u);  // 4 MB · 0.5
  EXPECT_EQ(b.nvme, 10'000'000u);
  EXPECT_EQ(b.unified, 0u);
  const TierBudgets u = budgets_from(unified_profile());
  EXPECT_EQ(u.device, 1'500'000u);
  EXPECT_EQ(u.host, 2'000'000u);
  EXPECT_EQ(u.unified, 2'000'000u);

  run_in_child([] {
    Simulation sim(tiny_options());
    Memory& m = sim.platform(0).memory();
    EXPECT_EQ(m.usage(Tier::device).capacity, 1'000'000u);
    EXPECT_EQ(m.usage(Tier::host).capacity, 2'000'000u);
    EXPECT_EQ(m.usage(Tier::nvme).capacity, 10'000'000u);
    EXPECT_FALSE(m.shared_pool().has_value()) << "separate memories declare no pool";
  });
}

TEST(SimMemory, UnifiedMemoryKeepsDevicePlusHostWithinOnePool) {
  run_in_child([] {
    SimulationOptions options = tiny_options(Numerics::shapes);
    options.profile = unified_profile();
    Simulation sim(options);
    Memory& m = sim.platform(0).memory();
    Region device = must_allocate(m, Tier::device, 1'500'000, "device share");
    // The pool, declared: what the state store checks device + host against.
    ASSERT_TRUE(m.shared_pool().has_value());
    EXPECT_EQ(m.shared_pool()->capacity, 2'000'000u);
    EXPECT_EQ(m.shared_pool()->resident, 1'500'000u);
    EXPECT_FALSE(m.allocate(Tier::device, 1, "over the device share").has_value());
    EXPECT_FALSE(m.allocate(Tier::host, 600'000, "over the pool").has_value());
    Region host = must_allocate(m, Tier::host, 500'000, "rest of the pool");
    EXPECT_FALSE(m.allocate(Tier::host, 1, "one byte too many").has_value());
    m.release(device);
    Region more = must_allocate(m, Tier::host, 1'500'000, "host takes the rest");
    EXPECT_EQ(m.usage(Tier::host).resident, 2'000'000u);
    EXPECT_FALSE(m.allocate(Tier::device, 1, "pool is full").has_value());
    EXPECT_TRUE(m.allocate(Tier::nvme, 1'000'000, "nvme is separate").has_value());
    m.release(host);
    m.release(more);
  });
}

TEST(SimMemory, RandomAllocationsNeverExceedTheBudgets) {
  run_in_child([] {
    SimulationOptions options = tiny_options(Numerics::shapes);
    options.profile = unified_profile();
    Simulation sim(options);
    Memory& m = sim.platform(0).memory();
    std::mt19937 gen(5);
    std::vector<Region> held;
    int refused = 0;
    for (int op = 0; op < 2000; ++op) {
      if (held.empty() || gen() % 3 != 0) {
        const Tier tier = gen() % 2 == 0 ? Tier::device : Tier::host;
        if (auto r = m.allocate(tier, 1 + gen() % 400'000, "random")) held.push_back(*r);
        else ++refused;
      } else {
        const std::size_t i = gen() % held.size();
        m.release(held[i]);
        held.erase(held.begin() + static_cast<std::ptrdiff_t>(i));
      }
      const std::size_t device = m.usage(Tier::device).resident;
      const std::size_t host = m.usage(Tier::host).resident;
      ASSERT_LE(device, 1'500'000u);
      ASSERT_LE(host, 2'000'000u);
      ASSERT_LE(device + host, 2'000'000u) << "operation " << op;
    }
    EXPECT_GT(refused, 10) << "the budgets were reached";
    EXPECT_LE(m.usage(Tier::device).peak_resident, 1'500'000u);
    for (Region& r : held) m.release(r);
  });
}

TEST(SimMemory, DataTrueCopiesMoveTheBytesWhenTheCopyEnds) {
  run_in_child([] {
    Simulation sim(tiny_options(Numerics::values));
    sim.run([](int, Platform& p) {
      Memory& m = p.memory();
      EXPECT_TRUE(m.holds_data());
      Region host = must_allocate(m, Tier::host, 1000, "host");
      Region device = must_allocate(m, Tier::device, 1000, "device");
      ASSERT_NE(m.host_address(host), nullptr);
      ASSERT_NE(m.host_address(device), nullptr);
      for (int i = 0; i < 1000; ++i) m.host_address(host)[i] = static_cast<std::byte>(i % 251);
      const platform::Pending copy = m.copy(host, device);
      EXPECT_EQ(m.host_address(device)[7], std::byte{0}) << "nothing arrives before the copy's time is up";
      ASSERT_TRUE(copy.status().ok());
      EXPECT_NEAR(p.clock().now(), 1e-6 + 1e-6, tolerance(2e-6));  // 1 µs latency + 1000 B at 1 GB/s
      EXPECT_EQ(std::memcmp(m.host_address(host), m.host_address(device), 1000), 0);
      m.release(host);
      m.release(device);
    });
  });
}

TEST(SimMemory, DataFreeRegionsAreSizesOnly) {
  run_in_child([] {
    Simulation sim(tiny_options(Numerics::shapes));
    sim.run([](int, Platform& p) {
      Memory& m = p.memory();
      EXPECT_FALSE(m.holds_data());
      Region host = must_allocate(m, Tier::host, 400'000, "host");
      Region device = must_allocate(m, Tier::device, 400'000, "device");
      EXPECT_EQ(m.host_address(host), nullptr);
      EXPECT_EQ(m.host_address(device), nullptr);
      EXPECT_EQ(m.usage(Tier::device).resident, 400'000u);
      ASSERT_TRUE(m.copy(host, device).status().ok());
      EXPECT_NEAR(p.clock().now(), 4.01e-4, tolerance(4.01e-4)) << "copies still take their time";
      m.release(host);
      m.release(device);
    });
  });
}

TEST(SimMemory, ARegionReleasedDuringACopyIsGivenBackWhenTheCopyEnds) {
  run_in_child([] {
    Simulation sim(tiny_options(Numerics::values));
    sim.run([](int, Platform& p) {
      Memory& m = p.memory();
      Region host = must_allocate(m, Tier::host, 400'000, "host");
      Region device = must_allocate(m, Tier::device, 400'000, "device");
      const platform::Pending copy = m.copy(host, device);
      m.release(host);
      EXPECT_FALSE(host.valid());
      EXPECT_EQ(m.usage(Tier::host).resident, 400'000u) << "the copy still reads it";
      copy.wait();
      EXPECT_EQ(m.usage(Tier::host).resident, 0u);
      m.release(device);
      Region stranger{Tier::host, 12345, 1, "stranger"};
      EXPECT_THROW(m.release(stranger), std::logic_error);
    });
  });
}

TEST(SimMemory, OccupancyIsSampledOnEveryAllocationAndRelease) {
  run_in_child([] {
    test::RecordingSink sink(0);
    SimulationOptions options = tiny_options(Numerics::shapes);
    options.activities = [&sink](int) { return &sink; };
    Simulation sim(options);
    sim.run([](int, Platform& p) {
      Memory& m = p.memory();
      Region a = must_allocate(m, Tier::device, 300, "a");
      p.clock().sleep_for(0.5);
      Region b = must_allocate(m, Tier::device, 200, "b");
      m.release(a);
      p.clock().sleep_for(0.25);
      m.release(b);
      Region h = must_allocate(m, Tier::host, 100, "h");
      Region n = must_allocate(m, Tier::nvme, 50, "n");
      m.release(n);
      m.release(h);
    });
    const std::vector<test::CounterRecord> counters = sink.counters();
    ASSERT_EQ(counters.size(), 8u);
    const char* const names[] = {"gpu0 resident device bytes", "gpu0 resident device bytes",
                                 "gpu0 resident device bytes", "gpu0 resident device bytes",
                                 "gpu0 resident host bytes",   "gpu0 resident nvme bytes",
                                 "gpu0 resident nvme bytes",   "gpu0 resident host bytes"};
    const double times[] = {0.0, 0.5, 0.5, 0.75, 0.75, 0.75, 0.75, 0.75};
    const double values[] = {300, 500, 200, 0, 100, 50, 0, 0};
    for (std::size_t i = 0; i < counters.size(); ++i) {
      EXPECT_EQ(counters[i].name, names[i]) << i;
      EXPECT_DOUBLE_EQ(counters[i].time, times[i]) << i;
      EXPECT_DOUBLE_EQ(counters[i].value, values[i]) << i;
    }
    EXPECT_TRUE(sink.activities().empty()) << "allocations are not activities";
  });
}

}  // namespace
}  // namespace asteria::sim

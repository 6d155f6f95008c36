// A reservation (Memory::reserve: a refresh job's shadow buffers charged to the host) counts its
// bytes against the tier's budget and its peak, and holds no bytes. Tiny profile: a host budget of
// 4 MB x 0.5 = 2 MB.
#include <gtest/gtest.h>

#include <stdexcept>

#include "sim/simulation.hpp"
#include "tests/sim/in_child.hpp"
#include "tests/sim/tiny_profile.hpp"

namespace asteria::sim {
namespace {

using platform::Numerics;
using platform::Platform;
using platform::Region;
using platform::Tier;
using testing::run_in_child;
using testing::tiny_options;

TEST(SimReservations, CountAgainstTheBudgetAndHoldNoBytes) {
  run_in_child([] {
    Simulation sim(tiny_options(Numerics::values));  // data-true: a region would hold real bytes
    sim.run([](int, Platform& p) {
      platform::Memory& m = p.memory();
      ASSERT_EQ(m.usage(Tier::host).capacity, 2'000'000u);
      std::optional<Region> shadow = m.reserve(Tier::host, 1'500'000, "refresh of w");
      ASSERT_TRUE(shadow);
      EXPECT_EQ(m.usage(Tier::host).resident, 1'500'000u);
      EXPECT_EQ(m.host_address(*shadow), nullptr);
      // 500 kB left: a 600 kB region or reservation does not fit, a 500 kB one does.
      EXPECT_FALSE(m.allocate(Tier::host, 600'000, "too big"));
      EXPECT_FALSE(m.reserve(Tier::host, 600'000, "too big"));
      std::optional<Region> state = m.allocate(Tier::host, 500'000, "state");
      ASSERT_TRUE(state);
      EXPECT_THROW(m.copy(*shadow, *state), std::logic_error);  // nothing to copy
      m.release(*shadow);
      EXPECT_EQ(m.usage(Tier::host).resident, 500'000u);
      EXPECT_EQ(m.usage(Tier::host).peak_resident, 2'000'000u);
      m.release(*state);
    });
  });
}

}  // namespace
}  // namespace asteria::sim

// The memory capabilities the step's host updates use, on the backends besides the simulator
// (tests/sim/transfer_test.cpp, tests/sim/reservation_test.cpp): Memory::transfer, a modelled
// move of bytes that carries no data, and Memory::reserve, bytes counted with none held.
#include <gtest/gtest.h>

#include <stdexcept>

#include "core/platform/fake/fake_platform.hpp"
#include "core/real/real_platform.hpp"
#include "tests/common/recording_sink.hpp"

namespace asteria::runtime::test {
namespace {

using platform::ActivityRole;
using platform::OpTag;
using platform::Region;
using platform::Tier;

real::RealPlatformOptions real_options(platform::ActivitySink* sink) {
  real::RealPlatformOptions o;
  o.memory.budgets = {1 << 20, 1 << 20, 1 << 20};
  o.host_threads = 1;
  o.activities = sink;
  return o;
}

// h2d modelled at 1 MB/s with 10 ms latency: 30 kB take 10 ms + 30 ms = 40 ms at least, on the
// h2d copy engine, listed with the copies. d2h unmodelled (time measured): the numbers already
// moved on their own path, so the transfer is over at once and recorded with zero length.
TEST(RealMemoryTransfers, ModelledLinksTakeTheirDurationMeasuredTimeIsInstant) {
  asteria::test::RecordingSink sink(0);
  real::RealPlatformOptions o = real_options(&sink);
  o.memory.link(Tier::host, Tier::device) = real::LinkModel{1.0e6, 0.01};
  real::RealPlatform p(o);
  real::RealMemory& m = p.real_memory();
  const OpTag cause{3, 17, -1, ActivityRole::transfer};
  ASSERT_TRUE(m.transfer(Tier::host, Tier::device, 30'000, "weights of w", cause).status().ok());
  const std::vector<real::MoveRecord> moves = m.moves();
  ASSERT_EQ(moves.size(), 1u);
  EXPECT_GE(moves[0].end - moves[0].start, 0.04);
  EXPECT_EQ(moves[0].bytes, 30'000u);
  const platform::Pending down = m.transfer(Tier::device, Tier::host, 30'000, "gradient of w", cause);
  EXPECT_TRUE(down.test());
  EXPECT_EQ(m.moves().size(), 1u);  // nothing ran
  std::vector<platform::Activity> recorded;
  for (const platform::Activity& a : sink.activities())
    if (a.tag.op == 17) recorded.push_back(a);
  ASSERT_EQ(recorded.size(), 2u);
  EXPECT_EQ(recorded[0].track, "link h2d0");
  EXPECT_EQ(recorded[0].label, "weights of w");
  EXPECT_GE(recorded[0].end - recorded[0].start, 0.04);
  EXPECT_EQ(recorded[1].track, "link d2h0");
  EXPECT_EQ(recorded[1].label, "gradient of w");
  EXPECT_EQ(recorded[1].start, recorded[1].end);
  for (const platform::Activity& a : recorded) {
    EXPECT_EQ(a.tag.role, ActivityRole::transfer);
    EXPECT_EQ(a.tag.step, 3);
    EXPECT_EQ(a.cost.bytes(), 30'000.0);
  }
  for (Tier t : {Tier::device, Tier::host, Tier::nvme}) EXPECT_EQ(m.usage(t).peak_resident, 0u);
}

TEST(RealMemoryReservations, CountAgainstTheBudgetAndHoldNoBytes) {
  real::RealPlatform p(real_options(nullptr));
  platform::Memory& m = p.memory();
  std::optional<Region> shadow = m.reserve(Tier::host, 800'000, "refresh of w");
  ASSERT_TRUE(shadow);
  EXPECT_EQ(m.usage(Tier::host).resident, 800'000u);
  EXPECT_EQ(m.host_address(*shadow), nullptr);
  EXPECT_FALSE(m.reserve(Tier::host, 300'000, "beyond the 1 MiB budget"));
  std::optional<Region> state = m.allocate(Tier::host, 200'000, "state");
  ASSERT_TRUE(state);
  EXPECT_THROW(m.copy(*shadow, *state), std::logic_error);
  m.release(*shadow);
  EXPECT_EQ(m.usage(Tier::host).resident, 200'000u);
  EXPECT_EQ(m.usage(Tier::host).peak_resident, 1'000'000u);
  m.release(*state);
}

// The fake backend charges its copy rate, one move after another on its copy engine: at
// 1000 B/s, 500 B take 0.5 s, then 250 B up take 0.25 s more.
TEST(FakeMemoryTransfers, TakeTheCopyRateOneAfterAnother) {
  platform::fake::FakeOptions f;
  f.copy_bytes_per_second = 1000.0;
  platform::fake::FakePlatform p(f);
  const platform::Pending down = p.memory().transfer(Tier::device, Tier::host, 500, "gradient", {});
  const platform::Pending up = p.memory().transfer(Tier::host, Tier::device, 250, "weights", {});
  down.wait();
  EXPECT_DOUBLE_EQ(p.now(), 0.5);
  up.wait();
  EXPECT_DOUBLE_EQ(p.now(), 0.75);
  std::optional<Region> shadow = p.memory().reserve(Tier::host, 100, "refresh");
  ASSERT_TRUE(shadow);
  EXPECT_EQ(p.memory().host_address(*shadow), nullptr);
  EXPECT_THROW(p.memory().copy(*shadow, *shadow), std::logic_error);
  p.memory().release(*shadow);
  EXPECT_EQ(p.memory().usage(Tier::host).resident, 0u);
}

// A backend without the capabilities: transfers are done at once, reservations allocate.
class PlainMemory final : public platform::Memory {
 public:
  platform::TierUsage usage(Tier) const override { return {100, resident_, resident_}; }
  std::optional<Region> allocate(Tier tier, std::size_t bytes, std::string label) override {
    resident_ += bytes;
    return Region{tier, 1, bytes, std::move(label)};
  }
  void release(Region& region) override {
    resident_ -= region.bytes;
    region = {};
  }
  std::byte* host_address(const Region&) override { return nullptr; }
  platform::Pending copy(const Region&, const Region&, const OpTag&) override { return platform::Pending::ready(); }

 private:
  std::size_t resident_ = 0;
};

TEST(MemoryDefaults, TransfersAreInstantAndReservationsAllocate) {
  PlainMemory m;
  EXPECT_TRUE(m.transfer(Tier::device, Tier::host, 1 << 20, "gradient", {}).test());
  std::optional<Region> r = m.reserve(Tier::host, 40, "refresh");
  ASSERT_TRUE(r);
  EXPECT_EQ(m.usage(Tier::host).resident, 40u);
  m.release(*r);
}

}  // namespace
}  // namespace asteria::runtime::test

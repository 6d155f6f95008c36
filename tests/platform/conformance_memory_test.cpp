// Conformance: memory tiers (budgets, copies, Allocation).
#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "tests/platform/conformance.hpp"

namespace asteria::platform::conformance {
namespace {

constexpr Tier kTiers[] = {Tier::device, Tier::host, Tier::nvme};

std::vector<std::byte> random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<std::byte> v(n);
  for (std::byte& b : v) b = static_cast<std::byte>(byte(gen));
  return v;
}

Region must_allocate(Memory& m, Tier tier, std::size_t bytes, const std::string& label) {
  std::optional<Region> r = m.allocate(tier, bytes, label);
  if (!r) throw std::runtime_error("could not allocate " + label);
  return *r;
}

void fill(Memory& m, const Region& r, const std::vector<std::byte>& bytes) {
  std::byte* p = m.host_address(r);
  ASSERT_NE(p, nullptr);
  std::memcpy(p, bytes.data(), std::min(bytes.size(), r.bytes));
}

std::vector<std::byte> contents(Memory& m, const Region& r) {
  const std::byte* p = m.host_address(r);
  if (p == nullptr) return {};
  return {p, p + r.bytes};
}

TEST_P(PlatformConformance, TiersHaveTheirBudgetsAndAllocationsNeverExceedThem) {
  run([](Platform& p) {
    const Requirements req;
    Memory& m = p.memory();
    for (Tier tier : kTiers) {
      const TierUsage empty = m.usage(tier);
      const std::size_t required = tier == Tier::device ? req.device_capacity
                                   : tier == Tier::host ? req.host_capacity
                                                        : req.nvme_capacity;
      ASSERT_GE(empty.capacity, required) << to_string(tier);
      EXPECT_EQ(empty.resident, 0u) << to_string(tier);
      std::optional<Region> all = m.allocate(tier, empty.capacity, "all of it");
      ASSERT_TRUE(all.has_value()) << to_string(tier);
      EXPECT_TRUE(all->valid());
      EXPECT_EQ(all->tier, tier);
      EXPECT_EQ(all->bytes, empty.capacity);
      EXPECT_EQ(all->label, "all of it");
      EXPECT_EQ(m.usage(tier).resident, empty.capacity);
      EXPECT_FALSE(m.allocate(tier, 1, "one byte too many").has_value()) << to_string(tier);
      m.release(*all);
      EXPECT_FALSE(all->valid());
      EXPECT_EQ(m.usage(tier).resident, 0u);
      EXPECT_FALSE(m.allocate(tier, empty.capacity + 1, "more than the tier").has_value());
      std::optional<Region> again = m.allocate(tier, empty.capacity / 2, "half");
      ASSERT_TRUE(again.has_value());
      m.release(*again);
    }
  });
}

TEST_P(PlatformConformance, PeakResidentIsTheHighWaterMark) {
  run([](Platform& p) {
    Memory& m = p.memory();
    const std::size_t cap = m.usage(Tier::host).capacity;
    Region a = must_allocate(m, Tier::host, cap / 2, "a");
    Region b = must_allocate(m, Tier::host, cap / 4, "b");
    m.release(a);
    Region c = must_allocate(m, Tier::host, cap / 8, "c");
    EXPECT_EQ(m.usage(Tier::host).resident, cap / 4 + cap / 8);
    m.release(b);
    m.release(c);
    EXPECT_EQ(m.usage(Tier::host).resident, 0u);
    EXPECT_EQ(m.usage(Tier::host).peak_resident, cap / 2 + cap / 4);
  });
}

// Workers allocate and release at random; each fills its regions with its own tag and checks
// the tag survives until release (overlapping regions would overwrite each other).
TEST_P(PlatformConformance, ConcurrentAllocationsStayWithinBudgetsAndApart) {
  run([](Platform& p) {
    Memory& m = p.memory();
    auto mutex = p.sync().make_mutex();
    int over_budget = 0;
    int corrupted = 0;
    int successes = 0;
    auto hammer = [&](int worker) {
      return [&, worker] {
        std::mt19937 gen(static_cast<unsigned>(1000 + worker));
        std::vector<Region> held;
        const auto tag = static_cast<std::byte>(worker + 1);
        auto check_and_release = [&](Region& r) {
          const std::byte* bytes = m.host_address(r);
          if (bytes != nullptr && std::any_of(bytes, bytes + r.bytes, [&](std::byte b) { return b != tag; })) {
            LockGuard lock(*mutex);
            ++corrupted;
          }
          m.release(r);
        };
        for (int op = 0; op < 400; ++op) {
          const Tier tier = op % 3 == 0 ? Tier::device : Tier::host;
          const std::size_t cap = m.usage(tier).capacity;
          if (held.size() < 6 && gen() % 3 != 0) {
            const std::size_t bytes = 1 + gen() % (cap / 6);
            if (std::optional<Region> r = m.allocate(tier, bytes, "hammer")) {
              if (std::byte* dst = m.host_address(*r)) std::memset(dst, static_cast<int>(tag), r->bytes);
              held.push_back(*r);
              LockGuard lock(*mutex);
              ++successes;
            }
          } else if (!held.empty()) {
            const std::size_t i = gen() % held.size();
            check_and_release(held[i]);
            held.erase(held.begin() + static_cast<std::ptrdiff_t>(i));
          }
          for (Tier t : {Tier::device, Tier::host}) {
            const TierUsage u = m.usage(t);
            if (u.resident > u.capacity || u.peak_resident > u.capacity) {
              LockGuard lock(*mutex);
              ++over_budget;
            }
          }
        }
        for (Region& r : held) check_and_release(r);
        return Status::success();
      };
    };
    std::vector<Pending> pending;
    for (int w = 0; w < 4; ++w) pending.push_back(p.host_workers().submit(work("hammer", hammer(w))));
    for (const Pending& q : pending) ASSERT_TRUE(q.status().ok());
    EXPECT_EQ(over_budget, 0);
    EXPECT_EQ(corrupted, 0);
    EXPECT_GT(successes, 100);
    for (Tier t : {Tier::device, Tier::host}) {
      EXPECT_EQ(m.usage(t).resident, 0u) << to_string(t);
      EXPECT_LE(m.usage(t).peak_resident, m.usage(t).capacity) << to_string(t);
    }
  });
}

TEST_P(PlatformConformance, CopiesMoveBytesThroughEveryTier) {
  run([](Platform& p) {
    Memory& m = p.memory();
    constexpr std::size_t n = 10'000;  // not a multiple of a page
    const std::vector<std::byte> data = random_bytes(n, 7);
    Region source = must_allocate(m, Tier::host, n, "source");
    fill(m, source, data);
    Region device = must_allocate(m, Tier::device, n, "on device");
    Region nvme = must_allocate(m, Tier::nvme, n, "on nvme");
    Region device2 = must_allocate(m, Tier::device, n, "back on device");
    Region back = must_allocate(m, Tier::host, n, "back on host");
    EXPECT_EQ(m.host_address(nvme), nullptr);

    ASSERT_TRUE(m.copy(source, device).status().ok());
    if (m.host_address(device) != nullptr) {
      EXPECT_EQ(contents(m, device), data);
    }
    ASSERT_TRUE(m.copy(device, nvme).status().ok());      // device -> nvme
    ASSERT_TRUE(m.copy(nvme, device2).status().ok());     // nvme -> device
    ASSERT_TRUE(m.copy(device2, back).status().ok());     // device -> host
    EXPECT_EQ(contents(m, back), data);

    Region host2 = must_allocate(m, Tier::host, n, "host again");
    Region nvme2 = must_allocate(m, Tier::nvme, n, "nvme again");
    ASSERT_TRUE(m.copy(nvme, nvme2).status().ok());       // nvme -> nvme
    ASSERT_TRUE(m.copy(nvme2, host2).status().ok());      // nvme -> host
    EXPECT_EQ(contents(m, host2), data);
    for (Region* r : {&source, &device, &nvme, &device2, &back, &host2, &nvme2}) m.release(*r);
    for (Tier t : kTiers) EXPECT_EQ(m.usage(t).resident, 0u) << to_string(t);
  });
}

// min(src.bytes, dst.bytes) bytes move; the rest of the destination keeps its bytes.
TEST_P(PlatformConformance, CopiesMoveTheSmallerSizeAndKeepTheRest) {
  run([](Platform& p) {
    Memory& m = p.memory();
    const std::vector<std::byte> long_data = random_bytes(300, 11);
    const std::vector<std::byte> short_data = random_bytes(120, 12);
    Region long_host = must_allocate(m, Tier::host, 300, "long");
    Region short_host = must_allocate(m, Tier::host, 120, "short");
    fill(m, long_host, long_data);
    fill(m, short_host, short_data);

    Region nvme = must_allocate(m, Tier::nvme, 300, "nvme");
    ASSERT_TRUE(m.copy(long_host, nvme).status().ok());
    ASSERT_TRUE(m.copy(short_host, nvme).status().ok());  // overwrites the first 120 bytes only
    Region out = must_allocate(m, Tier::host, 300, "out");
    ASSERT_TRUE(m.copy(nvme, out).status().ok());
    std::vector<std::byte> expected = long_data;
    std::copy(short_data.begin(), short_data.end(), expected.begin());
    EXPECT_EQ(contents(m, out), expected);

    Region truncated = must_allocate(m, Tier::host, 120, "truncated");
    ASSERT_TRUE(m.copy(nvme, truncated).status().ok());  // the first 120 bytes of a 300-byte region
    EXPECT_EQ(contents(m, truncated), short_data);

    Region device = must_allocate(m, Tier::device, 300, "device");
    Region from_device = must_allocate(m, Tier::host, 300, "from device");
    ASSERT_TRUE(m.copy(short_host, device).status().ok());  // 120 bytes into a zeroed region
    ASSERT_TRUE(m.copy(device, from_device).status().ok());
    std::vector<std::byte> head_then_zeros(300, std::byte{0});
    std::copy(short_data.begin(), short_data.end(), head_then_zeros.begin());
    EXPECT_EQ(contents(m, from_device), head_then_zeros);
    for (Region* r : {&long_host, &short_host, &nvme, &out, &truncated, &device, &from_device}) m.release(*r);
  });
}

TEST_P(PlatformConformance, AllocationReleasesItsRegion) {
  run([](Platform& p) {
    Memory& m = p.memory();
    {
      Allocation a(m, must_allocate(m, Tier::host, 1000, "scoped"));
      EXPECT_TRUE(a.valid());
      EXPECT_NE(a.host_address(), nullptr);
      EXPECT_EQ(m.usage(Tier::host).resident, 1000u);
      Allocation moved(std::move(a));
      EXPECT_FALSE(a.valid());
      EXPECT_TRUE(moved.valid());
      EXPECT_EQ(m.usage(Tier::host).resident, 1000u);
      Allocation other(m, must_allocate(m, Tier::host, 500, "other"));
      other = std::move(moved);  // releases "other"
      EXPECT_EQ(m.usage(Tier::host).resident, 1000u);
      EXPECT_EQ(other.region().label, "scoped");
    }
    EXPECT_EQ(m.usage(Tier::host).resident, 0u);
    Allocation r(m, must_allocate(m, Tier::nvme, 64, "reset"));
    r.reset();
    EXPECT_FALSE(r.valid());
    EXPECT_EQ(m.usage(Tier::nvme).resident, 0u);
  });
}

}  // namespace
}  // namespace asteria::platform::conformance

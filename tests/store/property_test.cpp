// Random block sizes, budgets, policies and acquire/release/prefetch sequences (with injected
// copy failures): after every operation no tier holds more than its budget, the store's own
// accounting matches the platform's, and every block's bytes are exactly the last ones written.
#include <algorithm>
#include <array>
#include <random>

#include "tests/store/store_test_support.hpp"

namespace asteria::runtime::testing {
namespace {

struct Scenario {
  PlacementPolicy policy = PlacementPolicy::tiered;
  std::vector<std::size_t> floats;
  std::vector<bool> on_device;
  std::size_t max_acquired = 1;
  FakeOptions platform;
  StoreOptions store;
  std::vector<BlockId> order;
};

Scenario draw(std::mt19937_64& rng) {
  Scenario s;
  auto uniform = [&](std::size_t lo, std::size_t hi) {
    return std::uniform_int_distribution<std::size_t>(lo, hi)(rng);
  };
  const std::size_t n = uniform(2, 7);
  std::size_t sum = 0;
  std::size_t largest = 0;
  for (std::size_t i = 0; i < n; ++i) {
    s.floats.push_back(uniform(1, 64));
    s.on_device.push_back(uniform(0, 1) == 1);
    sum += 4 * s.floats.back();
    largest = std::max(largest, 4 * s.floats.back());
  }
  s.policy = static_cast<PlacementPolicy>(uniform(0, 3));
  s.max_acquired = uniform(1, 2);
  const std::size_t working = s.max_acquired * largest;  // what the update tier must hold at once
  auto slack = [&] { return uniform(0, sum); };
  std::size_t device = 0, host = 0, nvme = 0;
  switch (s.policy) {
    case PlacementPolicy::device: device = sum + slack(); host = slack(); nvme = slack(); break;
    case PlacementPolicy::host: device = working + slack(); host = sum + slack(); nvme = slack(); break;
    case PlacementPolicy::nvme: device = working + slack(); host = working + slack(); nvme = sum + slack(); break;
    case PlacementPolicy::tiered: device = working + slack(); host = slack(); nvme = sum + slack(); break;
    case PlacementPolicy::planned: break;  // never drawn: planned placement has its own tests
  }
  s.platform = budgets(device, host, nvme, uniform(0, 1) == 1 ? 1000.0 : 0.0);
  s.store.policy = s.policy;
  s.store.lookahead = static_cast<int>(uniform(0, 3));
  s.store.nvme_update_tier = uniform(0, 1) == 1 ? Tier::device : Tier::host;
  for (BlockId id = 0; id < n; ++id)
    if (uniform(0, 4) != 0) s.order.push_back(id);  // some blocks have no known next use
  std::shuffle(s.order.begin(), s.order.end(), rng);
  return s;
}

// The invariants checked after every operation.
void check(FakePlatform& p, const StateStore& store, const Blocks& blocks, std::uint64_t seed, int op) {
  for (Tier t : {Tier::device, Tier::host, Tier::nvme}) {
    const platform::TierUsage u = p.memory().usage(t);
    ASSERT_LE(u.resident, u.capacity) << "seed " << seed << " op " << op;
    ASSERT_EQ(store.store_resident(t), u.resident) << "seed " << seed << " op " << op;
  }
  for (BlockId id = 0; id < blocks.size(); ++id) {
    const bool on_nvme = store.location(id) == Tier::nvme && blocks[id]->view->bytes() > 0;
    ASSERT_EQ(blocks[id]->state.resident(), !on_nvme) << "seed " << seed << " op " << op << " block " << id;
    if (!on_nvme) {
      ASSERT_TRUE(blocks[id]->intact()) << "seed " << seed << " op " << op << " block " << id;
    }
  }
}

struct Coverage {
  std::size_t acquires = 0;
  std::size_t moves = 0;
  std::size_t failures_caught = 0;
  std::array<std::size_t, 4> per_policy{};
};

void run(std::uint64_t seed, Coverage& coverage) {
  std::mt19937_64 rng(seed);
  const Scenario s = draw(rng);
  FakePlatform p(s.platform);
  Blocks blocks = make_blocks(s.floats, seed);
  StateStore store(p, s.store);
  add_all(store, blocks, s.on_device);
  store.set_use_order(s.order);
  store.place();
  check(p, store, blocks, seed, -1);
  coverage.per_policy[static_cast<std::size_t>(s.policy)] += 1;

  std::uint64_t next_pattern = seed * 7919 + 1;
  std::vector<BlockId> in_use;
  auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
  for (int op = 0; op < 200; ++op) {
    const std::size_t r = pick(100);
    try {
      if (r < 35) {
        const BlockId id = pick(blocks.size());
        if (in_use.size() < s.max_acquired && !store.acquired(id)) {
          store.acquire(id);
          in_use.push_back(id);
          ++coverage.acquires;
          ASSERT_EQ(store.location(id), store.update_tier(id)) << "seed " << seed;
          ASSERT_TRUE(blocks[id]->intact()) << "seed " << seed << " op " << op << " block " << id;
        }
      } else if (r < 65) {
        if (!in_use.empty()) {
          const std::size_t k = pick(in_use.size());
          const BlockId id = in_use[k];
          in_use.erase(in_use.begin() + static_cast<std::ptrdiff_t>(k));
          const bool dirty = pick(10) < 6;
          if (dirty) blocks[id]->fill(next_pattern++);  // the update
          store.release(id, dirty);
        }
      } else if (r < 80) {
        store.prefetch(pick(blocks.size()));
      } else if (r < 95) {
        p.advance_to(p.now() + 0.001 * static_cast<double>(pick(500)));
        store.poll();
      } else {
        p.fake_memory().fail_next_copy({StatusCode::io_error, "injected disk error"});
      }
    } catch (const TransferError& e) {
      ++coverage.failures_caught;
      // Injected: the store stays consistent and the state intact (checked below).
      ASSERT_NE(std::string(e.what()).find("injected disk error"), std::string::npos) << e.what();
      for (BlockId id = 0; id < blocks.size(); ++id)
        ASSERT_EQ(store.acquired(id), std::find(in_use.begin(), in_use.end(), id) != in_use.end())
            << "seed " << seed;
    }
    check(p, store, blocks, seed, op);
    if (::testing::Test::HasFatalFailure()) return;
  }
  // Wind down; an injected failure may still be pending for the next copy.
  for (BlockId id : in_use) {
    try {
      store.release(id, false);
    } catch (const TransferError&) {
    }
  }
  for (int attempt = 0;; ++attempt) {
    try {
      store.drain();
      store.unplace();
      break;
    } catch (const TransferError&) {
      ASSERT_LT(attempt, 3) << "seed " << seed;
    }
  }
  coverage.moves += p.fake_memory().moves().size();
  for (const auto& b : blocks) {
    ASSERT_TRUE(b->state.owns_storage()) << "seed " << seed;
    ASSERT_TRUE(b->intact()) << "seed " << seed;
  }
  for (Tier t : {Tier::device, Tier::host, Tier::nvme}) {
    ASSERT_EQ(p.memory().usage(t).resident, 0u) << "seed " << seed;
    ASSERT_LE(p.memory().usage(t).peak_resident, p.memory().usage(t).capacity) << "seed " << seed;
  }
}

TEST(StoreProperty, BudgetsHoldAndBytesRoundTripThroughAnySequenceOfMoves) {
  Coverage coverage;
  for (std::uint64_t seed = 1; seed <= 400; ++seed) {
    run(seed, coverage);
    if (::testing::Test::HasFatalFailure()) return;
  }
  // The sequences did exercise what they claim to.
  for (std::size_t n : coverage.per_policy) EXPECT_GT(n, 50u);
  EXPECT_GT(coverage.acquires, 8000u);
  EXPECT_GT(coverage.moves, 5000u);
  EXPECT_GT(coverage.failures_caught, 100u);
}

}  // namespace
}  // namespace asteria::runtime::testing

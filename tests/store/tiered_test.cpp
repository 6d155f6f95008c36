// The tiered policy: the blocks needed soonest stay on the device, the one needed last is
// evicted (Belady on the use order), the host spills to NVMe, and prefetching ahead of use
// hides the copies from acquire().
#include "tests/store/store_test_support.hpp"

namespace asteria::runtime::testing {
namespace {

constexpr std::size_t kFloats = 100;  // 400-byte blocks
constexpr std::size_t kBlock = 400;

// Acquires, "updates" (new pattern, `compute` seconds on the fake clock) and releases `id`;
// returns the acquire wait. Checks the bytes arrived intact.
Seconds update(FakePlatform& p, StateStore& store, TestBlock& block, BlockId id, std::uint64_t seed,
               Seconds compute = 0.0) {
  const Seconds waited = store.acquire(id);
  EXPECT_EQ(store.location(id), store.update_tier(id));
  EXPECT_TRUE(block.intact()) << "block " << id << " arrived corrupted";
  block.fill(seed);
  p.advance_to(p.now() + compute);
  store.release(id, true);
  return waited;
}

TEST(StoreTiered, EvictsTheBlockWhoseNextUseIsFarthestNotTheLeastRecentlyUsed) {
  FakePlatform p(budgets(2 * kBlock, 4096, 4096));
  Blocks blocks = make_blocks({kFloats, kFloats, kFloats, kFloats, kFloats});
  StateStore store(p, store_options(PlacementPolicy::tiered, 0));
  add_all(store, blocks);
  store.set_use_order({0, 1, 2, 3, 4});
  store.place();
  EXPECT_EQ(store.location(0), Tier::device);
  EXPECT_EQ(store.location(1), Tier::device);
  EXPECT_EQ(store.location(2), Tier::host);

  update(p, store, *blocks[0], 0, 10);
  update(p, store, *blocks[1], 1, 11);
  // Device holds 0 (next used 3 uses from now, in the next step) and 1 (4 uses away): LRU
  // would drop 0, Belady drops 1.
  update(p, store, *blocks[2], 2, 12);
  EXPECT_EQ(store.location(0), Tier::device);
  EXPECT_EQ(store.location(1), Tier::host);
  EXPECT_EQ(store.location(2), Tier::device);
  update(p, store, *blocks[3], 3, 13);  // device: 0 (2 away), 2 (4 away)
  EXPECT_EQ(store.location(0), Tier::device);
  EXPECT_EQ(store.location(2), Tier::host);
  update(p, store, *blocks[4], 4, 14);
  EXPECT_EQ(store.location(3), Tier::host);
  // Block 0, kept all along, needs no move at the start of the next step.
  const std::size_t moves_before = p.fake_memory().moves().size();
  EXPECT_EQ(update(p, store, *blocks[0], 0, 20), 0.0);
  EXPECT_EQ(p.fake_memory().moves().size(), moves_before);
  for (BlockId id : {1, 2, 3, 4}) update(p, store, *blocks[id], id, 20 + id);
}

TEST(StoreTiered, SpillsToNvmeWhenTheHostIsFull) {
  FakePlatform p(budgets(kBlock, kBlock, 4096));
  Blocks blocks = make_blocks({kFloats, kFloats, kFloats, kFloats});
  StateStore store(p, store_options(PlacementPolicy::tiered, 0));
  add_all(store, blocks);
  store.set_use_order({0, 1, 2, 3});
  store.place();
  EXPECT_EQ(store.location(1), Tier::host);
  EXPECT_EQ(store.location(2), Tier::nvme);

  update(p, store, *blocks[0], 0, 30);
  update(p, store, *blocks[1], 1, 31);  // 0 must leave the device while the host still holds 1
  EXPECT_EQ(store.location(0), Tier::nvme);
  EXPECT_FALSE(blocks[0]->state.resident());
  EXPECT_EQ(store.location(1), Tier::device);
  EXPECT_EQ(p.memory().usage(Tier::host).resident, 0u);
  update(p, store, *blocks[2], 2, 32);  // now the host has room for 1
  EXPECT_EQ(store.location(1), Tier::host);
  EXPECT_EQ(store.location(2), Tier::device);
  bool saw_device_to_nvme = false;
  for (const Move& m : store.ledger().moves())
    saw_device_to_nvme = saw_device_to_nvme || (m.from == Tier::device && m.to == Tier::nvme && m.block == 0 &&
                                                m.reason == MoveReason::eviction);
  EXPECT_TRUE(saw_device_to_nvme);
  for (int step = 0; step < 2; ++step)
    for (BlockId id = 0; id < 4; ++id) update(p, store, *blocks[id], id, 40 + 10 * step + id);
  for (Tier t : {Tier::device, Tier::host, Tier::nvme})
    EXPECT_LE(p.memory().usage(t).peak_resident, p.memory().usage(t).capacity);
}

// One step of the host policy with device-updated blocks: the copy in of the next block can
// overlap the current update only if it was started early.
std::vector<Seconds> staged_step_waits(int lookahead) {
  FakePlatform p(budgets(4096, 4096, 4096, 1000.0));  // 0.4 s per block copy
  Blocks blocks = make_blocks({kFloats, kFloats, kFloats, kFloats});
  StateStore store(p, store_options(PlacementPolicy::host, lookahead));
  add_all(store, blocks, {true, true, true, true});
  store.set_use_order({0, 1, 2, 3});
  store.place();
  std::vector<Seconds> waits;
  for (BlockId id = 0; id < 4; ++id) waits.push_back(update(p, store, *blocks[id], id, 50 + id, 1.0));
  store.drain();
  return waits;
}

TEST(StoreTiered, PrefetchAheadOfUseMeansAcquireDoesNotWait) {
  const std::vector<Seconds> prefetched = staged_step_waits(1);
  const std::vector<Seconds> on_demand = staged_step_waits(0);
  for (std::size_t i = 1; i < 4; ++i) {
    EXPECT_EQ(prefetched[i], 0.0) << "block " << i;
    EXPECT_GT(on_demand[i], 0.0) << "block " << i;
  }
  // On demand, each acquire pays the copy in (0.4 s) at least.
  EXPECT_GE(on_demand[1], 0.4 - 1e-12);
}

// Several steps of the tiered policy with the device holding half of the blocks.
std::vector<Seconds> tiered_step_waits(int lookahead, int steps) {
  FakePlatform p(budgets(3 * kBlock, 4096, 4096, 1000.0));
  Blocks blocks = make_blocks({kFloats, kFloats, kFloats, kFloats, kFloats, kFloats});
  StateStore store(p, store_options(PlacementPolicy::tiered, lookahead));
  add_all(store, blocks);
  store.set_use_order({0, 1, 2, 3, 4, 5});
  store.place();
  std::vector<Seconds> per_step;
  for (int step = 0; step < steps; ++step) {
    for (BlockId id = 0; id < 6; ++id) update(p, store, *blocks[id], id, 60 + 10 * step + id, 1.0);
    per_step.push_back(store.end_step().state_move_wait);
    EXPECT_LE(p.memory().usage(Tier::device).peak_resident, 3 * kBlock);
  }
  return per_step;
}

TEST(StoreTiered, LookaheadHidesEvictionAndLoadUnderDevicePressure) {
  const std::vector<Seconds> ahead = tiered_step_waits(2, 3);
  const std::vector<Seconds> on_demand = tiered_step_waits(0, 3);
  for (int step = 1; step < 3; ++step) {
    EXPECT_EQ(ahead[step], 0.0) << "step " << step;
    EXPECT_GT(on_demand[step], 0.0) << "step " << step;
  }
}

TEST(StoreTiered, ExplicitPrefetchNeverEvictsABlockNeededSooner) {
  FakePlatform p(budgets(2 * kBlock, 4096, 4096));
  Blocks blocks = make_blocks({kFloats, kFloats, kFloats, kFloats, kFloats});
  StateStore store(p, store_options(PlacementPolicy::tiered, 0));
  add_all(store, blocks);
  store.set_use_order({0, 1, 2, 3, 4});
  store.place();
  // 4 is needed after 0 and 1, which hold the device: no room for it.
  EXPECT_FALSE(store.prefetch(4).valid());
  p.advance_to(p.now() + 1.0);
  store.poll();
  EXPECT_EQ(store.location(0), Tier::device);
  EXPECT_EQ(store.location(1), Tier::device);
  EXPECT_EQ(store.location(4), Tier::host);
  // Once 0 is done it is needed last: prefetching 2 evicts it, and 2 arrives without acquire.
  update(p, store, *blocks[0], 0, 70);
  platform::Pending pending = store.prefetch(2);
  for (int i = 0; i < 4 && store.location(2) != Tier::device; ++i) {
    p.advance_to(p.now() + 1.0);
    store.poll();
  }
  EXPECT_EQ(store.location(2), Tier::device);
  EXPECT_EQ(store.location(1), Tier::device);
  EXPECT_EQ(store.location(0), Tier::host);
  EXPECT_TRUE(store.prefetch(2).test());  // already there: ready
  EXPECT_EQ(store.acquire(1), 0.0);
  store.release(1, false);
  EXPECT_EQ(store.acquire(2), 0.0);
  EXPECT_TRUE(blocks[2]->intact());
  store.release(2, false);
}

TEST(StoreTiered, AcquireFailsClearlyOnlyWhenNothingCanBeEvicted) {
  FakePlatform p(budgets(kBlock, 4096, 4096));
  Blocks blocks = make_blocks({kFloats, kFloats});
  StateStore store(p, store_options(PlacementPolicy::tiered, 0));
  add_all(store, blocks);
  store.set_use_order({0, 1});
  store.acquire(0);
  try {
    store.acquire(1);  // the device holds only block0, which is in use
    FAIL() << "expected no room";
  } catch (const PlacementError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("block1"), std::string::npos) << what;
    EXPECT_NE(what.find("'block0'"), std::string::npos) << what;  // the block in the way
    ASSERT_EQ(e.shortfalls().size(), 1u);
    EXPECT_EQ(e.shortfalls()[0].tier, Tier::device);
  }
  EXPECT_FALSE(store.acquired(1));
  store.release(0, false);
  EXPECT_NO_THROW(store.acquire(1));  // now block0 can make way
  EXPECT_TRUE(blocks[1]->intact());
  store.release(1, false);
}

}  // namespace
}  // namespace asteria::runtime::testing

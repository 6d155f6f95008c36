// Blocks streamed from NVMe through a small host: each is read once per step (a prefetch never
// takes the room of a block needed sooner, which would then evict it to be read again), and the
// moves that make room for the next uses are in flight together rather than one after another.
#include <map>

#include "tests/store/store_test_support.hpp"

namespace asteria::runtime::testing {
namespace {

constexpr std::size_t kFloats = 100;  // 400-byte blocks
constexpr std::size_t kBlock = 400;

std::map<BlockId, int> loads_from_nvme(StateStore& store) {
  std::map<BlockId, int> loads;
  for (const Move& m : store.take_moves())
    if (m.from == Tier::nvme && m.reason == MoveReason::load) ++loads[m.block];
  return loads;
}

TEST(StoreStreaming, APrefetchNeverTakesTheRoomOfASoonerBlockSoNoBlockIsReadTwice) {
  // Four blocks resting on NVMe, updated on a host with room for two; a copy takes 0.4 s.
  FakePlatform p(budgets(4096, 2 * kBlock, 4096, 1000.0));
  Blocks blocks = make_blocks({kFloats, kFloats, kFloats, kFloats});
  StateStore store(p, store_options(PlacementPolicy::nvme, 0));
  add_all(store, blocks);
  store.set_use_order({0, 1, 2, 3});
  store.place();
  store.take_moves();  // placement
  // The forward asks for every block in use order: 0 and 1 fit, 2 and 3 wait for room.
  for (BlockId id : {0, 1, 2}) store.prefetch(id);
  p.advance_to(p.now() + 1.0);
  // 0 is used; its write-back frees its room for 2.
  store.acquire(0);
  store.release(0, true);
  p.advance_to(p.now() + 1.0);
  // A prefetch of 3 when the room has come: it goes to 2, which is needed sooner.
  EXPECT_FALSE(store.prefetch(3).valid());
  p.advance_to(p.now() + 1.0);
  // 1 and 2 are updated together (one hook): 2 is there, nothing is evicted for it.
  EXPECT_EQ(store.acquire(1), 0.0);
  EXPECT_EQ(store.acquire(2), 0.0);
  store.release(1, true);
  store.release(2, true);
  store.acquire(3);
  EXPECT_TRUE(blocks[3]->intact());
  store.release(3, true);
  store.drain();
  const std::map<BlockId, int> loads = loads_from_nvme(store);
  for (BlockId id = 0; id < 4; ++id) EXPECT_EQ(loads.count(id) ? loads.at(id) : 0, 1) << "block " << id;
}

// Steps of the nvme policy with room for two blocks on the host, the next uses prefetched by the
// window: every block is read exactly once per step.
TEST(StoreStreaming, ASmallHostReadsEveryBlockOncePerStep) {
  for (int lookahead : {1, 2, 3}) {
    SCOPED_TRACE("lookahead " + std::to_string(lookahead));
    FakePlatform p(budgets(4096, 2 * kBlock, 8192, 1000.0));
    Blocks blocks = make_blocks({kFloats, kFloats, kFloats, kFloats, kFloats, kFloats});
    StateStore store(p, store_options(PlacementPolicy::nvme, lookahead));
    add_all(store, blocks);
    store.set_use_order({0, 1, 2, 3, 4, 5});
    store.place();
    store.take_moves();
    for (int step = 0; step < 3; ++step) {
      for (BlockId id = 0; id < 6; ++id) {
        store.acquire(id);
        EXPECT_TRUE(blocks[id]->intact());
        blocks[id]->fill(100 + 10 * step + id);
        p.advance_to(p.now() + 0.2);
        store.release(id, true);
      }
      store.drain();
      const std::map<BlockId, int> loads = loads_from_nvme(store);
      for (BlockId id = 0; id < 6; ++id) EXPECT_LE(loads.count(id) ? loads.at(id) : 0, 1) << "block " << id;
    }
  }
}

// The tiered policy on a device with room for two blocks and a host with none: every load needs
// an eviction to NVMe first. With two uses ahead in the window, both evictions start at once
// (the second block's room is made while the first waits), so more than one move is in flight.
TEST(StoreStreaming, TheWindowMakesRoomForEveryUseAheadAtOnce) {
  FakePlatform p(budgets(2 * kBlock, 0, 8192, 1000.0));
  Blocks blocks = make_blocks({kFloats, kFloats, kFloats, kFloats, kFloats, kFloats});
  StateStore store(p, store_options(PlacementPolicy::tiered, 2));
  add_all(store, blocks);
  store.set_use_order({0, 1, 2, 3, 4, 5});
  store.place();
  store.take_moves();
  for (BlockId id = 0; id < 6; ++id) {
    store.acquire(id);
    p.advance_to(p.now() + 0.1);
    store.release(id, true);
  }
  store.drain();
  // Evictions to NVMe that overlapped another eviction (issued before it ended).
  std::vector<Move> evictions;
  for (const Move& m : store.take_moves())
    if (m.reason == MoveReason::eviction) evictions.push_back(m);
  ASSERT_GE(evictions.size(), 2u);
  int overlapping = 0;
  for (std::size_t i = 1; i < evictions.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (evictions[i].start < evictions[j].end && evictions[j].start < evictions[i].end) {
        ++overlapping;
        break;
      }
  EXPECT_GT(overlapping, 0);
}

}  // namespace
}  // namespace asteria::runtime::testing

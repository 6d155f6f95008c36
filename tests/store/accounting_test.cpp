// Every move is on record, and the totals per tier pair and per step agree with the moves the
// platform itself saw.
#include "tests/store/store_test_support.hpp"

namespace asteria::runtime::testing {
namespace {

TEST(StoreAccounting, MovesTotalsAndStepFiguresAgreeWithThePlatform) {
  FakePlatform p(budgets(1200, 4096, 4096, 1000.0));
  Blocks blocks = make_blocks({100, 100, 100, 100, 100, 100});
  StateStore store(p, store_options(PlacementPolicy::tiered, 2));
  add_all(store, blocks);
  store.set_use_order({5, 4, 3, 2, 1, 0});
  store.place();
  std::vector<StoreStepStats> steps;
  Seconds waited = 0.0;
  for (int step = 0; step < 3; ++step) {
    for (BlockId id : {5, 4, 3, 2, 1, 0}) {
      waited += store.acquire(id);
      blocks[id]->fill(1000 + 10 * step + id);
      p.advance_to(p.now() + 0.5);
      store.release(id, true);
    }
    steps.push_back(store.end_step());
    const StoreStepStats& s = steps.back();
    for (Tier t : {Tier::device, Tier::host, Tier::nvme})
      EXPECT_EQ(s.store_resident[static_cast<std::size_t>(t)], s.usage[static_cast<std::size_t>(t)].resident);
    EXPECT_EQ(s.usage[0].capacity, 1200u);
    EXPECT_LE(s.usage[0].resident, 1200u);
  }
  store.drain();
  steps.push_back(store.end_step());

  // Independent oracle: the fake memory's own record of every copy.
  TierPairTotals platform_bytes;
  TierPairTotals platform_count;
  for (const auto& m : p.fake_memory().moves()) {
    platform_bytes.at(m.from, m.to) += m.bytes;
    platform_count.at(m.from, m.to) += 1;
  }
  TierPairTotals per_step_sum;
  Seconds step_waits = 0.0;
  for (const StoreStepStats& s : steps) {
    step_waits += s.state_move_wait;
    for (Tier a : {Tier::device, Tier::host, Tier::nvme})
      for (Tier b : {Tier::device, Tier::host, Tier::nvme}) per_step_sum.at(a, b) += s.bytes_moved.at(a, b);
  }
  EXPECT_GT(platform_count.total(), 6u);  // the device holds half the blocks: they must move
  for (Tier a : {Tier::device, Tier::host, Tier::nvme})
    for (Tier b : {Tier::device, Tier::host, Tier::nvme}) {
      EXPECT_EQ(store.ledger().total_bytes().at(a, b), platform_bytes.at(a, b));
      EXPECT_EQ(store.ledger().total_moves().at(a, b), platform_count.at(a, b));
      EXPECT_EQ(per_step_sum.at(a, b), platform_bytes.at(a, b));
    }
  EXPECT_DOUBLE_EQ(step_waits, waited);
  EXPECT_DOUBLE_EQ(store.ledger().total_wait(), waited);

  const std::vector<Move> moves = store.take_moves();
  ASSERT_EQ(moves.size(), p.fake_memory().moves().size());
  for (const Move& m : moves) {
    EXPECT_TRUE(m.ok);
    EXPECT_EQ(m.bytes, 400u);
    EXPECT_GE(m.end, m.start + 0.4 - 1e-12);  // 400 B at 1000 B/s at least
    EXPECT_NE(m.from, m.to);
    EXPECT_LT(m.block, 6u);
  }
  EXPECT_TRUE(store.ledger().moves().empty());
}

}  // namespace
}  // namespace asteria::runtime::testing

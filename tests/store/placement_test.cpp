// Each placement policy puts blocks where it says, and budgets that cannot hold them give a
// clear error before anything is allocated.
#include "tests/store/store_test_support.hpp"

namespace asteria::runtime::testing {
namespace {

TEST(StorePlacement, DevicePolicyPutsEveryBlockOnTheDeviceAndNeverMovesIt) {
  FakePlatform p(budgets(4096, 4096, 4096));
  Blocks blocks = make_blocks({100, 200, 50});  // 400, 800, 200 bytes
  StateStore store(p, store_options(PlacementPolicy::device, 2));
  const auto ids = add_all(store, blocks);
  store.place();
  for (BlockId id : ids) {
    EXPECT_EQ(store.location(id), Tier::device);
    EXPECT_EQ(store.update_tier(id), Tier::device);
    EXPECT_FALSE(store.has_copy_on(id, Tier::host));
    EXPECT_TRUE(blocks[id]->intact());
  }
  EXPECT_EQ(p.memory().usage(Tier::device).resident, 1400u);
  EXPECT_EQ(p.memory().usage(Tier::host).resident, 0u);
  for (BlockId id : ids) {
    EXPECT_EQ(store.acquire(id), 0.0);
    store.release(id, true);
  }
  store.drain();
  EXPECT_TRUE(p.fake_memory().moves().empty());
}

TEST(StorePlacement, DevicePolicyThatDoesNotFitListsTheShortfallAndAllocatesNothing) {
  FakePlatform p(budgets(1000, 4096, 4096));
  Blocks blocks = make_blocks({100, 200});  // 1200 bytes
  StateStore store(p, store_options(PlacementPolicy::device));
  add_all(store, blocks);
  try {
    store.place();
    FAIL() << "placement should not fit";
  } catch (const PlacementError& e) {
    ASSERT_EQ(e.shortfalls().size(), 1u);
    EXPECT_EQ(e.shortfalls()[0].tier, Tier::device);
    EXPECT_EQ(e.shortfalls()[0].needed, 1200u);
    EXPECT_EQ(e.shortfalls()[0].available, 1000u);
    EXPECT_EQ(e.shortfalls()[0].missing(), 200u);
    const std::string what = e.what();
    EXPECT_NE(what.find("device policy"), std::string::npos) << what;
    EXPECT_NE(what.find("device needs 1200 B, 1000 B free of 1000 B (short by 200 B)"), std::string::npos) << what;
  }
  EXPECT_EQ(p.memory().usage(Tier::device).resident, 0u);
  EXPECT_EQ(p.memory().usage(Tier::device).peak_resident, 0u);  // never over-committed, not even briefly
  for (const auto& b : blocks) EXPECT_TRUE(b->intact());
  // The hooks raise the same error rather than running a step over budget.
  EXPECT_THROW(store.acquire(0), PlacementError);
}

TEST(StorePlacement, TieredBlocksAcquiredTogetherMustFitTheDeviceTogether) {
  // Each block fits the device alone (800 B of 1000), but a step that holds two at once does not:
  // placement says so before anything is allocated, instead of an acquire failing mid-step.
  Blocks blocks = make_blocks({200, 200, 100});  // 800, 800, 400 bytes
  {
    FakePlatform p(budgets(1000, 4096, 4096));
    StateStore store(p, store_options(PlacementPolicy::tiered));
    const auto ids = add_all(store, blocks);
    store.set_held_together({{ids[0]}, {ids[1], ids[2]}});
    try {
      store.place();
      FAIL() << "two blocks held together should not fit";
    } catch (const PlacementError& e) {
      ASSERT_EQ(e.shortfalls().size(), 1u);
      EXPECT_EQ(e.shortfalls()[0].tier, Tier::device);
      EXPECT_GE(e.shortfalls()[0].needed, 1200u);
    }
    EXPECT_EQ(p.memory().usage(Tier::device).peak_resident, 0u);
  }
  {
    // Held one at a time, the same blocks are placed.
    FakePlatform p(budgets(1000, 4096, 4096));
    StateStore store(p, store_options(PlacementPolicy::tiered));
    const auto ids = add_all(store, blocks);
    store.set_held_together({{ids[0]}, {ids[1]}, {ids[2]}});
    EXPECT_NO_THROW(store.place());
  }
  for (const auto& b : blocks) EXPECT_TRUE(b->intact());
}

TEST(StorePlacement, HeldTogetherNamesOnlyAddedBlocks) {
  FakePlatform p(budgets(4096, 4096, 4096));
  Blocks blocks = make_blocks({10});
  StateStore store(p, store_options(PlacementPolicy::tiered));
  add_all(store, blocks);
  EXPECT_THROW(store.set_held_together({{0, 7}}), InputError);
}

TEST(StorePlacement, ShortfallIsListedForEveryTierThatFallsShort) {
  FakePlatform p(budgets(4096, 300, 1000));
  Blocks blocks = make_blocks({100, 200});  // 400 + 800: NVMe short, host cannot stage the 800-byte block
  StateStore store(p, store_options(PlacementPolicy::nvme));
  add_all(store, blocks);
  try {
    store.place();
    FAIL() << "placement should not fit";
  } catch (const PlacementError& e) {
    ASSERT_EQ(e.shortfalls().size(), 2u);
    EXPECT_EQ(e.shortfalls()[0].tier, Tier::host);
    EXPECT_EQ(e.shortfalls()[0].missing(), 500u);
    EXPECT_EQ(e.shortfalls()[1].tier, Tier::nvme);
    EXPECT_EQ(e.shortfalls()[1].missing(), 200u);
  }
  EXPECT_EQ(p.memory().usage(Tier::nvme).peak_resident, 0u);
}

// Unified memory (GB10): each tier within its own budget is not enough when device and host
// share one pool. The check before placement says so (the pool, not a tier "short by 0 B" at
// step 1), and the tiered policy spills what the pool cannot hold to NVMe.
TEST(StorePlacement, DeviceAndHostOfOneUnifiedPoolAreCheckedTogether) {
  FakeOptions unified = budgets(2000, 4000, 8192);
  unified.unified_capacity = 2400;
  {
    FakePlatform p(unified);
    Blocks blocks = make_blocks({250, 250, 250});  // 1000 B each
    StateStore store(p, store_options(PlacementPolicy::host));
    const auto ids = add_all(store, blocks);
    (void)ids;
    const platform::Region model = *p.memory().allocate(Tier::device, 1000, "the model's weights");
    try {
      store.place();
      FAIL() << "3000 B of host state beside 1000 B on the device fit a pool of 2400 B";
    } catch (const PlacementError& e) {
      ASSERT_EQ(e.shortfalls().size(), 1u) << e.what();
      EXPECT_TRUE(e.shortfalls()[0].shared_pool);
      EXPECT_EQ(e.shortfalls()[0].missing(), 1600u);
      EXPECT_NE(std::string(e.what()).find("device + host (one unified memory) needs 3000 B, 1400 B free of 2400 B"),
                std::string::npos)
          << e.what();
    }
    EXPECT_EQ(p.memory().usage(Tier::host).peak_resident, 0u) << "nothing placed before the check";
  }
  {
    FakePlatform p(unified);
    Blocks blocks = make_blocks({250, 250, 250});
    StateStore store(p, store_options(PlacementPolicy::tiered));
    add_all(store, blocks);
    store.set_use_order({0, 1, 2});
    EXPECT_NO_THROW(store.place());
    // The pool keeps room for the device to fetch the largest block into: one block rests in it,
    // the two the pool cannot hold beside that room rest on NVMe.
    EXPECT_EQ(p.memory().usage(Tier::nvme).resident, 2000u);
    EXPECT_EQ(p.memory().usage(Tier::device).resident + p.memory().usage(Tier::host).resident, 1000u);
    // Two steps of updates: every block is fetched into the pool's room, and the pool holds.
    for (int step = 0; step < 2; ++step)
      for (BlockId id = 0; id < 3; ++id) {
        (void)store.acquire(id);
        EXPECT_TRUE(blocks[id]->intact()) << "block " << id;
        blocks[id]->fill(100u * static_cast<unsigned>(step) + id);
        store.release(id, true);
        EXPECT_LE(p.memory().shared_pool()->peak_resident, 2400u);
      }
  }
}

TEST(StorePlacement, HostPolicyKeepsStateOnTheHostAndStagesFlaggedBlocksThroughTheDevice) {
  FakePlatform p(budgets(1000, 4096, 4096));
  Blocks blocks = make_blocks({100, 150});
  StateStore store(p, store_options(PlacementPolicy::host));
  const auto ids = add_all(store, blocks, {false, true});
  store.place();
  EXPECT_EQ(store.location(0), Tier::host);
  EXPECT_EQ(store.location(1), Tier::host);
  EXPECT_EQ(store.update_tier(0), Tier::host);
  EXPECT_EQ(store.update_tier(1), Tier::device);
  EXPECT_EQ(p.memory().usage(Tier::device).resident, 0u);
  EXPECT_EQ(p.memory().usage(Tier::host).resident, 1000u);

  EXPECT_EQ(store.acquire(ids[0]), 0.0);
  EXPECT_EQ(store.location(0), Tier::host);
  EXPECT_TRUE(blocks[0]->intact());
  store.release(ids[0], true);
  EXPECT_TRUE(p.fake_memory().moves().empty());  // host-updated blocks never move

  store.acquire(ids[1]);
  EXPECT_EQ(store.location(1), Tier::device);
  EXPECT_TRUE(store.has_copy_on(1, Tier::host));  // the home copy stays
  EXPECT_TRUE(blocks[1]->intact());
  blocks[1]->fill(777);  // the update
  store.release(ids[1], true);
  store.drain();
  EXPECT_EQ(store.location(1), Tier::host);
  EXPECT_FALSE(store.has_copy_on(1, Tier::device));
  EXPECT_EQ(p.memory().usage(Tier::device).resident, 0u);
  EXPECT_TRUE(blocks[1]->intact());  // written back: now read from the host copy
  const auto& moves = p.fake_memory().moves();
  ASSERT_EQ(moves.size(), 2u);
  EXPECT_EQ(moves[0].from, Tier::host);
  EXPECT_EQ(moves[0].to, Tier::device);
  EXPECT_EQ(moves[1].from, Tier::device);
  EXPECT_EQ(moves[1].to, Tier::host);

  // A clean update is not written back: the host copy is still current.
  store.acquire(ids[1]);
  store.release(ids[1], false);
  store.drain();
  EXPECT_EQ(p.fake_memory().moves().size(), 3u);
  EXPECT_EQ(store.location(1), Tier::host);
  EXPECT_TRUE(blocks[1]->intact());
}

TEST(StorePlacement, NvmePolicyStreamsBlocksInForTheUpdateAndWritesThemBack) {
  FakePlatform p(budgets(4096, 1000, 4096));
  Blocks blocks = make_blocks({100, 200});
  StateStore store(p, store_options(PlacementPolicy::nvme));
  const auto ids = add_all(store, blocks, {false, true});
  store.place();
  for (BlockId id : ids) {
    EXPECT_EQ(store.location(id), Tier::nvme);
    EXPECT_FALSE(blocks[id]->state.resident());
  }
  EXPECT_EQ(store.update_tier(0), Tier::host);
  EXPECT_EQ(store.update_tier(1), Tier::device);
  EXPECT_EQ(p.memory().usage(Tier::nvme).resident, 1200u);
  EXPECT_EQ(p.memory().usage(Tier::host).resident, 0u);  // staging released

  for (BlockId id : ids) {
    store.acquire(id);
    EXPECT_EQ(store.location(id), store.update_tier(id));
    EXPECT_TRUE(blocks[id]->intact());
    blocks[id]->fill(500 + id);
    store.release(id, true);
  }
  store.drain();
  for (BlockId id : ids) {
    EXPECT_EQ(store.location(id), Tier::nvme);
    EXPECT_FALSE(blocks[id]->state.resident());
  }
  EXPECT_EQ(p.memory().usage(Tier::host).resident + p.memory().usage(Tier::device).resident, 0u);
  for (BlockId id : ids) {
    store.acquire(id);
    EXPECT_TRUE(blocks[id]->intact()) << "block " << id << " lost its update on the way through NVMe";
    store.release(id, false);
  }
}

TEST(StorePlacement, TieredPolicyPutsTheSoonestNeededOnTheDeviceThenHostThenNvme) {
  FakePlatform p(budgets(800, 500, 4096));
  Blocks blocks = make_blocks({100, 100, 100, 100, 100});  // 400 bytes each
  StateStore store(p, store_options(PlacementPolicy::tiered));
  add_all(store, blocks);
  store.set_use_order({3, 1, 4, 0, 2});
  store.place();
  EXPECT_EQ(store.location(3), Tier::device);
  EXPECT_EQ(store.location(1), Tier::device);
  EXPECT_EQ(store.location(4), Tier::host);
  EXPECT_EQ(store.location(0), Tier::nvme);
  EXPECT_EQ(store.location(2), Tier::nvme);
  for (BlockId id : {3, 1, 4}) EXPECT_TRUE(blocks[id]->intact());
  EXPECT_FALSE(blocks[0]->state.resident());
  EXPECT_EQ(p.memory().usage(Tier::host).resident, 400u);
}

TEST(StorePlacement, UnplaceGivesEveryBlockItsBytesBackAndPlaceWorksAgain) {
  FakePlatform p(budgets(400, 400, 4096));
  Blocks blocks = make_blocks({100, 100, 100});
  StateStore store(p, store_options(PlacementPolicy::tiered));
  add_all(store, blocks);
  store.set_use_order({0, 1, 2});
  store.place();
  EXPECT_EQ(store.location(2), Tier::nvme);
  store.unplace();
  for (const auto& b : blocks) {
    EXPECT_TRUE(b->state.owns_storage());
    EXPECT_TRUE(b->intact());
  }
  for (Tier t : {Tier::device, Tier::host, Tier::nvme}) EXPECT_EQ(p.memory().usage(t).resident, 0u);
  store.place();
  EXPECT_EQ(store.location(0), Tier::device);
}

TEST(StorePlacement, DestructionLeavesNoStateInReleasedMemory) {
  FakePlatform p(budgets(400, 400, 4096));
  Blocks blocks = make_blocks({100, 100, 100});
  {
    StateStore store(p, store_options(PlacementPolicy::tiered));
    add_all(store, blocks);
    store.place();
  }
  for (const auto& b : blocks) {
    EXPECT_TRUE(b->state.owns_storage());
    EXPECT_TRUE(b->intact());
  }
}

TEST(StorePlacement, OptionsAndUseOrderAreValidated) {
  FakePlatform p;
  StoreOptions bad;
  bad.lookahead = -1;
  EXPECT_THROW(StateStore store(p, bad), InputError);
  bad = {};
  bad.nvme_update_tier = Tier::nvme;
  EXPECT_THROW(StateStore store(p, bad), InputError);
  EXPECT_EQ(parse_placement_policy("nvme", "--placement"), PlacementPolicy::nvme);
  EXPECT_THROW(parse_placement_policy("gpu", "--placement"), InputError);

  Blocks blocks = make_blocks({10, 10});
  StateStore store(p, {});
  add_all(store, blocks);
  EXPECT_THROW(store.set_use_order({0, 0}), InputError);
  EXPECT_THROW(store.set_use_order({0, 5}), InputError);
  EXPECT_THROW(store.release(0, true), std::logic_error);
}

}  // namespace
}  // namespace asteria::runtime::testing

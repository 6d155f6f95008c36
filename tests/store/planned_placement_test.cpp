// The planned policy: every block rests and is updated where its BlockOptions say (a plan of
// asteria plan), budgets are checked before anything is allocated, and a device home with a host
// update is refused.
#include "core/common/error.hpp"
#include "tests/store/store_test_support.hpp"

namespace asteria::runtime::testing {
namespace {

struct Where {
  Tier home;
  bool on_device;
};

std::vector<BlockId> add_planned(StateStore& store, Blocks& blocks, const std::vector<Where>& where) {
  std::vector<BlockId> ids;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    BlockOptions o;
    o.home = where[i].home;
    o.update_on_device = where[i].on_device;
    ids.push_back(store.add(*blocks[i]->view, "block" + std::to_string(i), o));
  }
  return ids;
}

const std::vector<Where> kMixed = {
    {Tier::device, true},  // rests and is updated on the device
    {Tier::host, true},    // streamed to the device for its update
    {Tier::host, false},   // updated on the host where it rests
    {Tier::nvme, true},    // from NVMe to the device
    {Tier::nvme, false},   // from NVMe to the host
};

TEST(StorePlanned, BlocksRestAndAreUpdatedWhereTheyAreTold) {
  FakePlatform p(budgets(4096, 4096, 4096));
  Blocks blocks = make_blocks({100, 100, 100, 100, 100});  // 400 bytes each
  StateStore store(p, store_options(PlacementPolicy::planned));
  const auto ids = add_planned(store, blocks, kMixed);
  store.place();
  for (std::size_t i = 0; i < ids.size(); ++i) {
    EXPECT_EQ(store.home_tier(ids[i]), kMixed[i].home) << i;
    EXPECT_EQ(store.location(ids[i]), kMixed[i].home) << i;
    EXPECT_EQ(store.update_tier(ids[i]), kMixed[i].on_device ? Tier::device : Tier::host) << i;
  }
  EXPECT_EQ(p.memory().usage(Tier::device).resident, 400u);
  EXPECT_EQ(p.memory().usage(Tier::host).resident, 800u);
  EXPECT_EQ(p.memory().usage(Tier::nvme).resident, 800u);
  // A step: each block is where its update runs while acquired, and comes back intact.
  for (int step = 0; step < 2; ++step)
    for (BlockId id : ids) {
      store.acquire(id);
      EXPECT_EQ(store.location(id), store.update_tier(id)) << id;
      store.release(id, true);
    }
  store.drain();
  store.unplace();
  for (const auto& b : blocks) EXPECT_TRUE(b->intact());
}

TEST(StorePlanned, StagingRoomIsCheckedWhereStreamedBlocksAreUpdated) {
  // Homes fit (400 B on the device, 400 on the host), but the host-resting block updated on the
  // device needs 400 B more there.
  FakePlatform p(budgets(700, 4096, 4096));
  Blocks blocks = make_blocks({100, 100});
  StateStore store(p, store_options(PlacementPolicy::planned));
  add_planned(store, blocks, {{Tier::device, true}, {Tier::host, true}});
  try {
    store.place();
    FAIL() << "placement should not fit";
  } catch (const PlacementError& e) {
    ASSERT_EQ(e.shortfalls().size(), 1u);
    EXPECT_EQ(e.shortfalls()[0].tier, Tier::device);
    EXPECT_EQ(e.shortfalls()[0].needed, 800u);
    EXPECT_NE(std::string(e.what()).find("planned policy"), std::string::npos) << e.what();
  }
  EXPECT_EQ(p.memory().usage(Tier::device).peak_resident, 0u);  // nothing allocated
}

TEST(StorePlanned, HomesThatDoNotFitListEveryShortTier) {
  FakePlatform p(budgets(4096, 500, 500));
  Blocks blocks = make_blocks({100, 100, 100, 100});
  StateStore store(p, store_options(PlacementPolicy::planned));
  add_planned(store, blocks, {{Tier::host, false}, {Tier::host, false}, {Tier::nvme, false}, {Tier::nvme, false}});
  try {
    store.place();
    FAIL() << "placement should not fit";
  } catch (const PlacementError& e) {
    ASSERT_EQ(e.shortfalls().size(), 2u);
    EXPECT_EQ(e.shortfalls()[0].tier, Tier::host);
    EXPECT_EQ(e.shortfalls()[1].tier, Tier::nvme);
  }
}

TEST(StorePlanned, DeviceHomeWithAHostUpdateIsRefused) {
  FakePlatform p(budgets(4096, 4096, 4096));
  Blocks blocks = make_blocks({100});
  StateStore store(p, store_options(PlacementPolicy::planned));
  BlockOptions o;
  o.home = Tier::device;
  o.update_on_device = false;
  try {
    store.add(*blocks[0]->view, "layer0.w block 0", o);
    FAIL() << "a device home with a host update should be refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("layer0.w block 0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("host or nvme home"), std::string::npos) << e.what();
  }
  EXPECT_EQ(store.block_count(), 0u);
}

TEST(StorePlanned, ParsesAndPrintsItsName) {
  EXPECT_EQ(parse_placement_policy("planned", "test"), PlacementPolicy::planned);
  EXPECT_EQ(to_string(PlacementPolicy::planned), "planned");
}

}  // namespace
}  // namespace asteria::runtime::testing

// A copy that fails (injected I/O error) raises an error naming the block and the platform's
// reason, and leaves the block's state intact where it was; the store keeps working.
#include "tests/store/store_test_support.hpp"

namespace asteria::runtime::testing {
namespace {

const Status kDiskError{StatusCode::io_error, "/scratch/asteria/nvme0.state: write failed (EIO)"};

void expect_names(const TransferError& e, const std::string& label) {
  const std::string what = e.what();
  EXPECT_EQ(e.block_label(), label);
  EXPECT_NE(what.find("'" + label + "'"), std::string::npos) << what;
  EXPECT_NE(what.find("nvme0.state: write failed (EIO)"), std::string::npos) << what;
  EXPECT_EQ(e.status().code(), StatusCode::io_error);
}

TEST(StoreFailures, FailedEvictionKeepsTheVictimResidentOnTheDevice) {
  FakePlatform p(budgets(400, 4096, 4096));
  Blocks blocks = make_blocks({100, 100});
  StateStore store(p, store_options(PlacementPolicy::tiered));
  add_all(store, blocks);
  store.set_use_order({0, 1});
  store.place();
  ASSERT_EQ(store.location(0), Tier::device);
  p.fake_memory().fail_next_copy(kDiskError);  // the eviction of block0
  try {
    store.acquire(1);
    FAIL() << "expected the eviction to fail";
  } catch (const TransferError& e) {
    expect_names(e, "block0");
  }
  EXPECT_EQ(store.location(0), Tier::device);
  EXPECT_TRUE(blocks[0]->intact());
  EXPECT_FALSE(store.has_copy_on(0, Tier::host));  // the half-written copy is gone
  EXPECT_FALSE(store.acquired(1));
  EXPECT_EQ(p.memory().usage(Tier::host).resident, 400u);  // only block1's home
  // Nothing is left half-done: the same acquire now succeeds.
  store.acquire(1);
  EXPECT_TRUE(blocks[1]->intact());
  store.release(1, false);
  store.acquire(0);
  EXPECT_TRUE(blocks[0]->intact());
  store.release(0, false);
}

TEST(StoreFailures, FailedLoadFromNvmeLeavesTheStateSavedThere) {
  FakePlatform p(budgets(4096, 4096, 4096));
  Blocks blocks = make_blocks({100});
  StateStore store(p, store_options(PlacementPolicy::nvme));
  add_all(store, blocks);
  store.place();
  p.fake_memory().fail_next_copy(kDiskError);
  try {
    store.acquire(0);
    FAIL() << "expected the load to fail";
  } catch (const TransferError& e) {
    expect_names(e, "block0");
    EXPECT_NE(std::string(e.what()).find("from nvme to host"), std::string::npos) << e.what();
  }
  EXPECT_EQ(store.location(0), Tier::nvme);
  EXPECT_EQ(p.memory().usage(Tier::host).resident, 0u);
  store.acquire(0);
  EXPECT_TRUE(blocks[0]->intact());
  store.release(0, false);
}

TEST(StoreFailures, FailedWriteBackKeepsTheUpdatedBytesResident) {
  FakePlatform p(budgets(4096, 4096, 4096));
  Blocks blocks = make_blocks({100});
  StateStore store(p, store_options(PlacementPolicy::host));
  add_all(store, blocks, {true});
  store.acquire(0);
  blocks[0]->fill(99);  // the update
  p.fake_memory().fail_next_copy(kDiskError);
  store.release(0, true);
  try {
    store.drain();
    FAIL() << "expected the write-back to fail";
  } catch (const TransferError& e) {
    expect_names(e, "block0");
  }
  EXPECT_EQ(store.location(0), Tier::device);  // the only current copy stays
  EXPECT_TRUE(blocks[0]->intact());
  store.acquire(0);
  EXPECT_TRUE(blocks[0]->intact());
  store.release(0, true);  // the write-back is retried
  store.drain();
  EXPECT_EQ(store.location(0), Tier::host);
  EXPECT_TRUE(blocks[0]->intact());
}

TEST(StoreFailures, FailedPlacementOnNvmeLeavesTheStateInItsOwnStorage) {
  FakePlatform p(budgets(4096, 4096, 4096));
  Blocks blocks = make_blocks({100});
  StateStore store(p, store_options(PlacementPolicy::nvme));
  add_all(store, blocks);
  p.fake_memory().fail_next_copy(kDiskError);
  try {
    store.place();
    FAIL() << "expected the placement to fail";
  } catch (const TransferError& e) {
    expect_names(e, "block0");
  }
  EXPECT_FALSE(store.placed(0));
  EXPECT_TRUE(blocks[0]->state.owns_storage());
  EXPECT_TRUE(blocks[0]->intact());
  for (Tier t : {Tier::device, Tier::host, Tier::nvme}) EXPECT_EQ(p.memory().usage(t).resident, 0u);
  store.place();
  EXPECT_EQ(store.location(0), Tier::nvme);
  EXPECT_EQ(store.ledger().moves().front().ok, false);  // the failure is on record
}

}  // namespace
}  // namespace asteria::runtime::testing

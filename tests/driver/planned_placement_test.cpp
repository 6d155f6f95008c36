// A planned placement (one tier and update site per block, as asteria plan writes them) changes
// where state rests and where updates run, never the numbers: it gives the device policy's
// weights and states bit for bit, and its plan puts each block's update where the plan says. A
// plan for other blocks is refused, naming the field.
#include "core/common/error.hpp"
#include "tests/driver/driver_test_support.hpp"

namespace asteria::runtime::test {
namespace {

using platform::Tier;

struct Outcome {
  Weights<float> weights;
  std::vector<std::vector<float>> states;
};

// Every allowed (tier, site) pair in turn, over the blocks of the small stack.
std::vector<BlockPlacement> mixed_plan(const std::vector<std::string>& labels) {
  const std::array<std::pair<Tier, bool>, 5> options = {
      {{Tier::device, true}, {Tier::host, false}, {Tier::host, true}, {Tier::nvme, false}, {Tier::nvme, true}}};
  std::vector<BlockPlacement> plan;
  for (std::size_t i = 0; i < labels.size(); ++i)
    plan.push_back({labels[i], options[i % options.size()].first, options[i % options.size()].second});
  return plan;
}

std::vector<std::string> block_labels(OptimizerKind kind) {
  SyntheticModel<float> model(small_stack());
  platform::fake::FakePlatform platform(fake_timing());
  StepDriver<float> driver(platform, model, kind, small_blocks(kind, 2), full_numerics(0));
  std::vector<std::string> labels;
  for (std::size_t b = 0; b < driver.block_count(); ++b) labels.push_back(driver.block_label(b));
  return labels;
}

DriverOptions planned(std::vector<BlockPlacement> blocks, int staleness = 0) {
  DriverOptions o = full_numerics(staleness);
  o.store.policy = PlacementPolicy::planned;
  o.planned_blocks = std::move(blocks);
  return o;
}

Outcome run(OptimizerKind kind, const DriverOptions& options, int steps) {
  SyntheticModel<float> model(small_stack());
  platform::fake::FakePlatform platform(fake_timing(0.5, 2));
  StepDriver<float> driver(platform, model, kind, small_blocks(kind, 2), options);
  for (int t = 0; t < steps; ++t) driver.run_step();
  driver.finish();
  Outcome out{weights_of(model), {}};
  for (std::size_t b = 0; b < driver.block_count(); ++b)
    out.states.emplace_back(driver.block_state(b).values().begin(), driver.block_state(b).values().end());
  return out;
}

TEST(PlannedPlacement, MixedTiersAndSitesGiveTheDevicePolicysNumbers) {
  for (OptimizerKind kind : {OptimizerKind::soap, OptimizerKind::shampoo, OptimizerKind::adamw}) {
    for (int staleness : {0, 1}) {
      const Outcome device = run(kind, full_numerics(staleness), 6);
      const Outcome mixed = run(kind, planned(mixed_plan(block_labels(kind)), staleness), 6);
      ASSERT_EQ(device.weights.size(), mixed.weights.size());
      for (std::size_t l = 0; l < device.weights.size(); ++l)
        EXPECT_TRUE(bitwise_equal(device.weights[l], mixed.weights[l]))
            << optim::to_string(kind) << " S=" << staleness << " layer " << l;
      ASSERT_EQ(device.states.size(), mixed.states.size());
      for (std::size_t b = 0; b < device.states.size(); ++b)
        EXPECT_TRUE(bitwise_equal(device.states[b], mixed.states[b]))
            << optim::to_string(kind) << " S=" << staleness << " block " << b;
    }
  }
}

TEST(PlannedPlacement, ThePlanUpdatesEachBlockWhereThePlanSays) {
  const OptimizerKind kind = OptimizerKind::soap;
  const std::vector<BlockPlacement> blocks = mixed_plan(block_labels(kind));
  SyntheticModel<float> model(small_stack());
  platform::fake::FakePlatform platform(fake_timing());
  StepDriver<float> driver(platform, model, kind, small_blocks(kind, 2), planned(blocks));
  ASSERT_EQ(driver.block_count(), blocks.size());
  std::vector<int> updates(blocks.size(), 0);
  for (const plan::Op& op : driver.plan().ops) {
    if (op.kind != plan::OpKind::update) continue;
    const auto b = static_cast<std::size_t>(op.block);
    ++updates[b];
    EXPECT_EQ(op.on, blocks[b].update_on_device ? plan::Resource::device : plan::Resource::host) << blocks[b].label;
  }
  for (std::size_t b = 0; b < blocks.size(); ++b) EXPECT_EQ(updates[b], 1) << blocks[b].label;
  // Host-updated blocks move their gradient down and their weights up.
  int host_transfers = 0;
  for (const plan::Op& op : driver.plan().ops)
    if (op.kind == plan::OpKind::transfer && op.block >= 0) {
      EXPECT_FALSE(blocks[static_cast<std::size_t>(op.block)].update_on_device);
      ++host_transfers;
    }
  EXPECT_EQ(host_transfers, 2 * static_cast<int>(std::count_if(blocks.begin(), blocks.end(),
                                                                [](const BlockPlacement& p) { return !p.update_on_device; })));
}

TEST(PlannedPlacement, APlanForOtherBlocksIsRefusedNamingTheField) {
  const OptimizerKind kind = OptimizerKind::soap;
  std::vector<BlockPlacement> blocks = mixed_plan(block_labels(kind));
  auto build = [&](const std::vector<BlockPlacement>& plan) {
    SyntheticModel<float> model(small_stack());
    platform::fake::FakePlatform platform(fake_timing());
    StepDriver<float> driver(platform, model, kind, small_blocks(kind, 2), planned(plan));
  };
  std::vector<BlockPlacement> renamed = blocks;
  renamed[3].label = "layer9 block 0";
  try {
    build(renamed);
    FAIL() << "a label mismatch should be refused";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "blocks[3].label");
    const std::string what = e.what();
    EXPECT_NE(what.find(blocks[3].label), std::string::npos) << what;
    EXPECT_NE(what.find("layer9 block 0"), std::string::npos) << what;
  }
  std::vector<BlockPlacement> fewer(blocks.begin(), blocks.end() - 1);
  try {
    build(fewer);
    FAIL() << "a count mismatch should be refused";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "blocks");
    EXPECT_NE(std::string(e.what()).find(std::to_string(blocks.size()) + " planned blocks"), std::string::npos) << e.what();
  }
  std::vector<BlockPlacement> invalid = blocks;
  invalid[0] = {blocks[0].label, Tier::device, false};
  EXPECT_THROW(build(invalid), InputError);
}

}  // namespace
}  // namespace asteria::runtime::test

// The step's set-up (runtime::set_up_step) is what the step driver runs: the same blocks, in the
// same order and with the same labels, the same state bytes per block (the real optimizers' with
// values, the shape blocks' data-free), and the same step plan, for every optimizer, with a
// vector layer (the AdamW fallback, or Distributed Shampoo's preconditioned vectors) and with
// blocks updated on the device or on the host.
#include "core/runtime/driver/step_setup.hpp"

#include <stdexcept>

#include "core/plan/share_groups.hpp"
#include "core/runtime/driver/shared_step_setup.hpp"

#include "core/plan/step_plan.hpp"
#include "tests/driver/driver_test_support.hpp"

namespace asteria::runtime::test {
namespace {

SyntheticModelSpec stack_with_a_vector() {
  SyntheticModelSpec spec = small_stack();
  LayerSpec norm = make_layer("norm", 1, 9, 1e8, 4);
  norm.vector = true;
  spec.layers.insert(spec.layers.begin() + 1, norm);
  return spec;
}

struct Case {
  OptimizerKind kind;
  Hyperparameters hp;
  std::string name;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  for (OptimizerKind kind : {OptimizerKind::adamw, OptimizerKind::shampoo, OptimizerKind::soap, OptimizerKind::kl_shampoo,
                             OptimizerKind::muon})
    out.push_back({kind, small_blocks(kind, 2), std::string(optim::to_string(kind))});
  Hyperparameters ds = optim::preset_hyperparameters(OptimizerKind::shampoo, optim::HyperparameterPreset::distributed_shampoo, "test");
  ds.max_precond_dim = 4;
  out.push_back({OptimizerKind::shampoo, ds, "shampoo (distributed-shampoo preset)"});
  return out;
}

TEST(StepSetup, TheDriverRunsTheBlocksAndThePlanTheSetUpDescribes) {
  const SyntheticModelSpec spec = stack_with_a_vector();
  for (const Case& c : cases())
    for (platform::Numerics numerics : {platform::Numerics::values, platform::Numerics::shapes})
      for (PlacementPolicy placement : {PlacementPolicy::device, PlacementPolicy::host}) {
        SCOPED_TRACE(c.name + ", " + std::string(platform::to_string(numerics)) + ", " +
                     std::string(to_string(placement)));
        platform::fake::FakePlatform platform(fake_timing(0.0, 2));
        SyntheticModel<float> model(spec, numerics);
        DriverOptions options = full_numerics(1);
        options.numerics = numerics;
        options.store.policy = placement;
        options.schedule.host_release_delay = 2;  // the driver's own choice depends on the store's room
        StepDriver<float> driver(platform, model, c.kind, c.hp, options);

        StepSetupOptions setup_options;
        setup_options.element_bytes = sizeof(float);
        setup_options.staleness = 1;
        setup_options.schedule = options.schedule;
        setup_options.host_workers = 2;
        const StepSetup setup = set_up_step(spec.layers, c.kind, c.hp, setup_options);

        ASSERT_EQ(driver.block_count(), setup.blocks.size());
        std::size_t vector_blocks = 0;
        for (std::size_t b = 0; b < setup.blocks.size(); ++b) {
          EXPECT_EQ(driver.block_label(b), setup.blocks[b].label);
          if (numerics == platform::Numerics::values) {
            EXPECT_EQ(driver.block_state(b).tensor_bytes(), setup.blocks[b].state_bytes) << setup.blocks[b].label;
          }
          vector_blocks += setup.blocks[b].layer == 1 ? 1 : 0;
        }
        // The norm's 9 values: one AdamW block, or pieces of max_precond_dim (4) preconditioned.
        EXPECT_EQ(vector_blocks, c.hp.precondition_vectors ? 3u : 1u);
        EXPECT_EQ(driver.state_bytes(), setup.state_bytes());
        const plan::Resource site =
            placement == PlacementPolicy::host ? plan::Resource::host : plan::Resource::device;
        const std::vector<plan::Resource> sites(setup.blocks.size(), site);
        EXPECT_EQ(plan::to_text(driver.plan()), plan::to_text(setup.plan(sites, {}, 2)));
        driver.finish();
      }
}

TEST(StepSetup, TheHostUpdatesAreSplitOverTheWorkersInPiecesOfAMillionValues) {
  const SyntheticModelSpec spec = small_stack();
  StepSetupOptions options;
  options.element_bytes = 8;
  options.host_workers = 5;
  const StepSetup split = set_up_step(spec.layers, OptimizerKind::soap, small_blocks(OptimizerKind::soap, 2), options);
  EXPECT_EQ(split.schedule.host_piece_bytes, 8e6);
  EXPECT_EQ(split.schedule.max_host_pieces, 5);
  // A schedule that names its pieces keeps them.
  options.schedule.host_piece_bytes = 100;
  options.schedule.max_host_pieces = 3;
  const StepSetup kept = set_up_step(spec.layers, OptimizerKind::soap, small_blocks(OptimizerKind::soap, 2), options);
  EXPECT_EQ(kept.schedule.host_piece_bytes, 100);
  EXPECT_EQ(kept.schedule.max_host_pieces, 3);
}

TEST(StepSetup, ReceivingJobsHoldTheResultAloneAndBlocksHeldElsewhereHoldNone) {
  const SyntheticModelSpec spec = small_stack();
  const StepSetup setup = set_up_step(spec.layers, OptimizerKind::soap, small_blocks(OptimizerKind::soap, 2), {});
  const std::size_t n = setup.blocks.size();
  std::vector<bool> receiving(n, false), held(n, true);
  receiving[0] = true;
  held[1] = false;
  const std::vector<ShadowDemand> demands = setup.shadow_demands(receiving, true, held);
  ASSERT_EQ(demands.size(), n);
  EXPECT_EQ(demands[0].job_bytes, setup.blocks[0].receiving_job_bytes);
  EXPECT_LT(demands[0].job_bytes, setup.blocks[0].job_bytes);
  EXPECT_EQ(demands[1].job_bytes, 0u);
  EXPECT_EQ(demands[1].live_jobs, 0);
  EXPECT_EQ(demands[2].job_bytes, setup.blocks[2].job_bytes);
  EXPECT_TRUE(demands[2].shared);
  EXPECT_THROW(setup.block_work(std::vector<plan::Resource>(n + 1, plan::Resource::device)), std::invalid_argument);
}

// Drivers of the same model and options share one set-up (a simulation's units): the same
// blocks and plan as their own set-up, held once; a driver of another model is refused.
TEST(StepSetup, DriversOfTheSameModelShareOneSetUpAndItsOwners) {
  const SyntheticModelSpec spec = stack_with_a_vector();
  const Hyperparameters hp = small_blocks(OptimizerKind::soap, 2);
  DriverOptions options = full_numerics(1);
  options.numerics = platform::Numerics::shapes;
  options.schedule.host_release_delay = 2;
  options.shared_setup = std::make_shared<SharedStepSetup>();
  DriverOptions alone = options;
  alone.shared_setup = nullptr;
  std::vector<std::string> plans;
  for (const DriverOptions& o : {options, options, alone}) {
    platform::fake::FakePlatform platform(fake_timing(0.0, 2));
    SyntheticModel<float> model(spec, platform::Numerics::shapes);
    StepDriver<float> driver(platform, model, OptimizerKind::soap, hp, o);
    plans.push_back(plan::to_text(driver.plan()));
    driver.finish();
  }
  EXPECT_EQ(plans[0], plans[1]);
  EXPECT_EQ(plans[0], plans[2]);
  SharedStepSetup& shared = *options.shared_setup;
  StepSetupOptions setup_options;
  setup_options.element_bytes = sizeof(float);
  setup_options.staleness = 1;
  setup_options.schedule = options.schedule;
  setup_options.host_workers = 2;
  const std::shared_ptr<const StepSetup> first = shared.get(spec.layers, OptimizerKind::soap, hp, setup_options);
  EXPECT_EQ(shared.get(spec.layers, OptimizerKind::soap, hp, setup_options), first);  // held once
  EXPECT_EQ(shared.block_owners(3), first->block_owners(3));
  EXPECT_EQ(&shared.block_owners(3), &shared.block_owners(3));
  // Another model's layers, another optimizer or other options: a programming error, refused.
  std::vector<LayerSpec> other = spec.layers;
  other.back().cols += 1;
  EXPECT_THROW(shared.get(other, OptimizerKind::soap, hp, setup_options), std::logic_error);
  EXPECT_THROW(shared.get(spec.layers, OptimizerKind::shampoo, hp, setup_options), std::logic_error);
  StepSetupOptions more_workers = setup_options;
  more_workers.host_workers = 3;
  EXPECT_THROW(shared.get(spec.layers, OptimizerKind::soap, hp, more_workers), std::logic_error);
}

}  // namespace
}  // namespace asteria::runtime::test

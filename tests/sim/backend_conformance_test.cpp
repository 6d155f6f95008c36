// One plan, two worlds: the step driver training a small stack (values, deterministic
// publication, S = 0, 1 and 5) runs the same step plan on the real backend (threads, wall clock)
// and inside the simulator with values (data-true), and both give bit-identical weights and
// optimizer state after every step. Under the deterministic policy results depend on S alone,
// never on timing — so both backends must agree.
#include <cstring>

#include "core/plan/step_plan.hpp"
#include "core/real/real_platform.hpp"
#include "sim/simulation.hpp"
#include "tests/driver/driver_test_support.hpp"
#include "tests/sim/in_child.hpp"
#include "tests/sim/tiny_profile.hpp"

namespace asteria::sim {
namespace {

using runtime::test::small_blocks;
using runtime::test::small_stack;
using runtime::test::Weights;

constexpr int kSteps = 9;

struct Trajectory {
  std::string plan;                                // the plan every step ran, as text
  std::vector<Weights<float>> weights;             // after every step
  std::vector<std::vector<float>> final_states;  // per block, after finish()
};

runtime::DriverOptions options(int staleness) {
  runtime::DriverOptions o = runtime::test::full_numerics(staleness);
  o.store.policy = runtime::PlacementPolicy::tiered;  // moves between tiers happen as well
  return o;
}

Trajectory train(platform::Platform& platform, optim::OptimizerKind kind, int staleness) {
  runtime::SyntheticModel<float> model(small_stack());
  runtime::StepDriver<float> driver(platform, model, kind, small_blocks(kind, 2), options(staleness));
  Trajectory t;
  t.plan = plan::to_text(driver.plan());
  for (int s = 0; s < kSteps; ++s) {
    driver.run_step();
    t.weights.push_back(runtime::test::weights_of(model));
  }
  driver.finish();
  for (std::size_t b = 0; b < driver.block_count(); ++b) {
    const auto values = driver.block_state(b).values();
    t.final_states.emplace_back(values.begin(), values.end());
  }
  return t;
}

void expect_identical(const Trajectory& real, const Trajectory& simulated) {
  ASSERT_EQ(real.weights.size(), simulated.weights.size());
  for (std::size_t s = 0; s < real.weights.size(); ++s)
    for (std::size_t l = 0; l < real.weights[s].size(); ++l)
      ASSERT_TRUE(runtime::test::bitwise_equal(real.weights[s][l], simulated.weights[s][l]))
          << "step " << s + 1 << ", layer " << l;
  ASSERT_EQ(real.final_states.size(), simulated.final_states.size());
  for (std::size_t b = 0; b < real.final_states.size(); ++b)
    EXPECT_TRUE(runtime::test::bitwise_equal(real.final_states[b], simulated.final_states[b])) << "block " << b;
}

class BackendConformance : public ::testing::TestWithParam<std::tuple<optim::OptimizerKind, int>> {};

TEST_P(BackendConformance, RealAndDataTrueSimulationRunTheSamePlanToBitIdenticalParameters) {
  const auto [kind, staleness] = GetParam();
  Trajectory real;
  {
    real::RealPlatformOptions o;
    o.host_threads = 2;
    o.memory.budgets.device = runtime::test::largest_layer_state_bytes<float>(small_stack(), kind,
                                                                                small_blocks(kind, 2)) + 64;
    real::RealPlatform platform(o);
    real = train(platform, kind, staleness);
  }  // the real backend's threads are joined before the fork below
  testing::run_in_child([&] {
    SimulationOptions o;
    o.profile = testing::tiny_profile();
    o.numerics = platform::Numerics::values;
    o.host_workers_per_unit = 2;
    TierBudgets budgets = budgets_from(o.profile);
    budgets.device = runtime::test::largest_layer_state_bytes<float>(small_stack(), kind, small_blocks(kind, 2)) + 64;
    o.budgets = budgets;
    Simulation simulation(o);
    Trajectory simulated;
    simulation.run([&](int, platform::Platform& platform) { simulated = train(platform, kind, staleness); });
    EXPECT_EQ(real.plan, simulated.plan);
    expect_identical(real, simulated);
    EXPECT_GT(simulation.now(), 0.0);
  });
}

INSTANTIATE_TEST_SUITE_P(Optimizers, BackendConformance,
                         ::testing::Combine(::testing::Values(optim::OptimizerKind::shampoo, optim::OptimizerKind::soap,
                                                              optim::OptimizerKind::kl_shampoo,
                                                              optim::OptimizerKind::adamw),
                                            ::testing::Values(0, 1, 5)),
                         [](const ::testing::TestParamInfo<std::tuple<optim::OptimizerKind, int>>& param_info) {
                           std::string name(optim::to_string(std::get<0>(param_info.param)));
                           std::erase(name, '-');
                           return name + "_S" + std::to_string(std::get<1>(param_info.param));
                         });

}  // namespace
}  // namespace asteria::sim

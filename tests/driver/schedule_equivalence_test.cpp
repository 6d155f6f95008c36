// The schedule changes time, not mathematics: the vertical schedule, with or without deferred
// updates and with the model's weights and gradients resting on the host, gives the weights and
// optimizer states of the horizontal schedule bit for bit, and at S = 0 those of the synchronous
// optimizer.
#include "tests/driver/driver_test_support.hpp"

namespace asteria::runtime::test {
namespace {

struct Case {
  OptimizerKind kind;
  int staleness;
};

struct Outcome {
  std::vector<Weights<float>> after_each_step;  // as the step driver returned them
  Weights<float> final_weights;                 // after finish()
  std::vector<std::vector<float>> states;
  std::vector<StepRecord> history;
};

Outcome run(const Case& c, const plan::ScheduleOptions& schedule, PlacementPolicy policy, int steps) {
  const SyntheticModelSpec spec = small_stack();
  SyntheticModel<float> model(spec);
  platform::fake::FakePlatform platform(fake_timing(0.5, 2));
  DriverOptions o = full_numerics(c.staleness);
  o.store.policy = policy;
  o.schedule = schedule;
  StepDriver<float> driver(platform, model, c.kind, small_blocks(c.kind, 2), o);
  Outcome out;
  for (int t = 0; t < steps; ++t) {
    driver.run_step();
    out.after_each_step.push_back(weights_of(model));
  }
  driver.finish();
  out.final_weights = weights_of(model);
  for (std::size_t b = 0; b < driver.block_count(); ++b)
    out.states.emplace_back(driver.block_state(b).values().begin(), driver.block_state(b).values().end());
  out.history = driver.history();
  return out;
}

void expect_same_numbers(const Outcome& a, const Outcome& b, const std::string& what) {
  ASSERT_EQ(a.final_weights.size(), b.final_weights.size());
  for (std::size_t l = 0; l < a.final_weights.size(); ++l)
    EXPECT_TRUE(bitwise_equal(a.final_weights[l], b.final_weights[l])) << what << ": layer " << l;
  ASSERT_EQ(a.states.size(), b.states.size());
  for (std::size_t s = 0; s < a.states.size(); ++s) EXPECT_TRUE(bitwise_equal(a.states[s], b.states[s])) << what << ": block " << s;
  // The service's figures land on the step they belong to, deferred or not.
  ASSERT_EQ(a.history.size(), b.history.size());
  for (std::size_t t = 0; t < a.history.size(); ++t) {
    EXPECT_EQ(a.history[t].refreshes_submitted, b.history[t].refreshes_submitted) << what << ": step " << t + 1;
    EXPECT_EQ(a.history[t].refreshes_published, b.history[t].refreshes_published) << what << ": step " << t + 1;
    EXPECT_EQ(a.history[t].max_staleness, b.history[t].max_staleness) << what << ": step " << t + 1;
  }
}

class ScheduleEquivalence : public ::testing::TestWithParam<Case> {};

TEST_P(ScheduleEquivalence, VerticalAndDeferredUpdatesGiveTheHorizontalNumbers) {
  const Case c = GetParam();
  constexpr int kSteps = 7;
  const Outcome horizontal = run(c, {.micro_batches = 3}, PlacementPolicy::host, kSteps);
  const plan::ModelStateTiers on_host{.weights = platform::Tier::host, .gradients = platform::Tier::host};
  for (PlacementPolicy policy : {PlacementPolicy::host, PlacementPolicy::device}) {
    const Outcome vertical =
        run(c, {.order = plan::ScheduleOrder::vertical, .micro_batches = 3, .tiers = on_host}, policy, kSteps);
    expect_same_numbers(horizontal, vertical, "vertical");
    // Without deferred updates the weights match after every step too.
    for (int t = 0; t < kSteps; ++t)
      for (std::size_t l = 0; l < horizontal.after_each_step[static_cast<std::size_t>(t)].size(); ++l)
        EXPECT_TRUE(bitwise_equal(horizontal.after_each_step[static_cast<std::size_t>(t)][l],
                                  vertical.after_each_step[static_cast<std::size_t>(t)][l]))
            << "step " << t + 1 << " layer " << l;
    for (double alpha : {0.3, 0.5}) {
      const Outcome deferred = run(
          c, {.order = plan::ScheduleOrder::vertical, .micro_batches = 3, .defer_fraction = alpha, .tiers = on_host},
          policy, kSteps);
      expect_same_numbers(horizontal, deferred, "deferred " + std::to_string(alpha));
    }
  }
  if (c.staleness != 0) return;
  // At S = 0: the synchronous optimizer.
  std::vector<std::vector<float>> states;
  const std::vector<Weights<float>> reference =
      synchronous_reference<float>(small_stack(), c.kind, small_blocks(c.kind, 2), kSteps, &states);
  for (std::size_t l = 0; l < reference.back().size(); ++l)
    EXPECT_TRUE(bitwise_equal(reference.back()[l], horizontal.final_weights[l])) << "layer " << l;
}

INSTANTIATE_TEST_SUITE_P(Optimizers, ScheduleEquivalence,
                         ::testing::Values(Case{OptimizerKind::soap, 0}, Case{OptimizerKind::soap, 5},
                                           Case{OptimizerKind::shampoo, 0}, Case{OptimizerKind::shampoo, 5},
                                           Case{OptimizerKind::kl_shampoo, 0}, Case{OptimizerKind::adamw, 0}));

// A deferred update is applied before its layer is next used: the weights the step driver holds
// after step t differ from the horizontal run's only in deferred blocks, and the next step's
// forward (on the fake backend: the order of ops) sees them updated.
TEST(ScheduleEquivalenceDeferred, OnlyDeferredBlocksLagUntilTheNextForward) {
  const Case c{OptimizerKind::adamw, 0};
  const Outcome horizontal = run(c, {.micro_batches = 2}, PlacementPolicy::device, 3);
  const Outcome deferred =
      run(c, {.order = plan::ScheduleOrder::vertical, .micro_batches = 2, .defer_fraction = 0.5}, PlacementPolicy::device, 3);
  // After step 1 half of the weight bytes still wait for their update.
  std::size_t differing = 0;
  std::size_t total = 0;
  for (std::size_t l = 0; l < horizontal.after_each_step[0].size(); ++l)
    for (std::size_t i = 0; i < horizontal.after_each_step[0][l].size(); ++i) {
      ++total;
      if (horizontal.after_each_step[0][l][i] != deferred.after_each_step[0][l][i]) ++differing;
    }
  EXPECT_GT(differing, total / 4);
  EXPECT_LT(differing, 3 * total / 4);
  expect_same_numbers(horizontal, deferred, "deferred");
}

}  // namespace
}  // namespace asteria::runtime::test

// Refresh numerics (an emulated device): the warm-up steps are the real optimizer's, later steps
// leave the weights alone (their device work is modelled), and the refresh schedule — real jobs
// on the host workers — is the one values follow, so refresh waits land on the same steps.
#include "core/runtime/driver/warmup.hpp"
#include "tests/driver/driver_test_support.hpp"

namespace asteria::runtime::test {
namespace {

constexpr int kSteps = 8;
constexpr int kWarmup = 3;

DriverOptions refresh_numerics(int staleness) {
  DriverOptions o = full_numerics(staleness);
  o.numerics = platform::Numerics::refresh;
  o.warmup_steps = kWarmup;
  return o;
}

struct Outcome {
  std::vector<Weights<float>> weights;  // after every step
  std::vector<StepRecord> history;
  std::int64_t published = 0;
};

Outcome run(OptimizerKind kind, DriverOptions options, platform::fake::FakeOptions f) {
  platform::fake::FakePlatform platform(std::move(f));
  SyntheticModel<float> model(small_stack());
  StepDriver<float> driver(platform, model, kind, small_blocks(kind, 2), options);
  Outcome r;
  for (int t = 0; t < kSteps; ++t) {
    driver.run_step();
    r.weights.push_back(weights_of(model));
  }
  driver.finish();
  r.history = driver.history();
  r.published = driver.service().totals().published;
  return r;
}

TEST(DriverRefreshNumerics, WarmupIsTheRealOptimizerThenWeightsStayAndTheScheduleIsUnchanged) {
  for (OptimizerKind kind : {OptimizerKind::shampoo, OptimizerKind::soap, OptimizerKind::kl_shampoo,
                             OptimizerKind::adamw, OptimizerKind::muon}) {
    SCOPED_TRACE(std::string(optim::to_string(kind)));
    const Outcome full = run(kind, full_numerics(0), fake_timing(5.0, 1));
    const Outcome modelled = run(kind, refresh_numerics(0), fake_timing(5.0, 1));
    for (int t = 0; t < kWarmup; ++t)
      for (std::size_t l = 0; l < full.weights[0].size(); ++l)
        ASSERT_TRUE(bitwise_equal(full.weights[static_cast<std::size_t>(t)][l], modelled.weights[static_cast<std::size_t>(t)][l]))
            << "warm-up step " << t + 1 << ", layer " << l;
    for (int t = kWarmup; t < kSteps; ++t)
      for (std::size_t l = 0; l < full.weights[0].size(); ++l)
        EXPECT_TRUE(bitwise_equal(modelled.weights[kWarmup - 1][l], modelled.weights[static_cast<std::size_t>(t)][l]))
            << "emulated step " << t + 1 << " wrote layer " << l;
    ASSERT_EQ(full.history.size(), modelled.history.size());
    for (std::size_t t = 0; t < full.history.size(); ++t) {
      SCOPED_TRACE("step " + std::to_string(t + 1));
      EXPECT_EQ(modelled.history[t].warmup, static_cast<int>(t) < kWarmup);
      EXPECT_EQ(modelled.history[t].refreshes_submitted, full.history[t].refreshes_submitted);
      EXPECT_EQ(modelled.history[t].refreshes_published, full.history[t].refreshes_published);
      // Same jobs, same modelled refresh time: the waits fall on the same steps and last as long,
      // up to the publications refresh numerics charge as device work (microseconds here).
      EXPECT_EQ(modelled.history[t].refresh_wait_s > 0.0, full.history[t].refresh_wait_s > 0.0);
      EXPECT_NEAR(modelled.history[t].refresh_wait_s, full.history[t].refresh_wait_s, 1e-4);
    }
    EXPECT_EQ(modelled.published, full.published);
  }
}

TEST(DriverRefreshNumerics, PublicationsAreChargedAsDeviceWork) {
  // SOAP publishes a basis each refresh (delay 1: at the next step's first hook); with refresh
  // numerics that install (copy and momentum rotation) is modelled device time of that step.
  const Outcome modelled = run(OptimizerKind::soap, refresh_numerics(0), fake_timing());
  double plain = -1.0;
  for (const StepRecord& r : modelled.history) {
    if (r.warmup) continue;
    if (r.refreshes_published == 0) {
      if (plain < 0.0) plain = r.optimizer_device_s;
      EXPECT_NEAR(r.optimizer_device_s, plain, 1e-12);
    }
  }
  ASSERT_GT(plain, 0.0);
  bool saw_publication = false;
  for (const StepRecord& r : modelled.history)
    if (!r.warmup && r.refreshes_published > 0) {
      saw_publication = true;
      EXPECT_GT(r.optimizer_device_s, plain);
    }
  EXPECT_TRUE(saw_publication);
}

TEST(DriverRefreshNumerics, FirstPublicationStepFollowsEachOptimizersSchedule) {
  // Shampoo (DS): roots first at start_preconditioning_step = f, used by that very step.
  Hyperparameters shampoo = optim::default_hyperparameters(OptimizerKind::shampoo);
  shampoo.precondition_frequency = 10;
  EXPECT_EQ(first_publication_step(OptimizerKind::shampoo, shampoo, 0), 10);
  EXPECT_EQ(first_publication_step(OptimizerKind::shampoo, shampoo, 5), 15);
  shampoo.start_preconditioning_step = 4;
  EXPECT_EQ(first_publication_step(OptimizerKind::shampoo, shampoo, 1), 5);
  // SOAP: the basis comes from the first step's statistics and serves from step 2 on.
  const Hyperparameters soap = optim::default_hyperparameters(OptimizerKind::soap);
  EXPECT_EQ(first_publication_step(OptimizerKind::soap, soap, 0), 2);
  EXPECT_EQ(first_publication_step(OptimizerKind::soap, soap, 5), 7);
  // No refresh at all.
  EXPECT_EQ(first_publication_step(OptimizerKind::adamw, optim::default_hyperparameters(OptimizerKind::adamw), 3, 50), 0);
}

}  // namespace
}  // namespace asteria::runtime::test

// A real transformer trained by the step driver under the horizontal and the vertical schedule
// (GreedySnake) with the same micro-batches: the schedule changes time, not mathematics. The
// weights after every step are bit-identical (after finish() when part of the update is deferred
// into the next forward), for AdamW, SOAP and Shampoo, at S = 0 and 5, with state on the device or
// the host and weights and gradients resting on the host.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/model/gpt_training_model.hpp"
#include "core/platform/fake/fake_platform.hpp"
#include "core/runtime/driver/step_driver.hpp"
#include "tests/model/model_test_support.hpp"

namespace asteria::model {
namespace {

using optim::OptimizerKind;
using testing::random_tokens;
using testing::small_config;

constexpr int kBatch = 4;
constexpr int kMicroBatches = 4;
constexpr int kSteps = 6;

struct Trained {
  std::vector<std::vector<float>> after_each_step;  // all parameters, concatenated per step
  std::vector<float> final_weights;
  std::vector<double> losses;
};

std::vector<float> all_parameters(const Gpt<float>& gpt) {
  std::vector<float> out;
  for (std::size_t i = 0; i < gpt.tensor_count(); ++i) {
    const std::span<const float> p = gpt.parameter(i);
    out.insert(out.end(), p.begin(), p.end());
  }
  return out;
}

Trained train(OptimizerKind kind, int staleness, runtime::PlacementPolicy placement, const plan::ScheduleOptions& schedule) {
  const workload::ModelConfig config = small_config(workload::MlpKind::swiglu, true, true);
  Gpt<float> gpt(config, 11);
  GptTrainingModel<float> model(gpt);
  platform::fake::FakeOptions timing;
  timing.host_workers = 2;
  platform::fake::FakePlatform platform(timing);
  runtime::DriverOptions o;
  o.numerics = platform::Numerics::values;
  o.service.staleness = staleness;
  o.store.policy = placement;
  o.schedule = schedule;
  optim::Hyperparameters hp = optim::default_hyperparameters(kind);
  hp.max_precond_dim = 8;
  hp.precondition_frequency = 2;
  runtime::StepDriver<float> driver(platform, model, kind, hp, o);
  Trained out;
  for (int t = 1; t <= kSteps; ++t) {
    const std::vector<TokenId> tokens =
        random_tokens(static_cast<std::size_t>(kBatch) * (config.sequence_length + 1), config.vocab, 100 + t);
    model.set_batch(tokens, kBatch, kMicroBatches);
    driver.run_step();
    out.after_each_step.push_back(all_parameters(gpt));
    out.losses.push_back(model.last_loss());
  }
  driver.finish();
  out.final_weights = all_parameters(gpt);
  return out;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

struct Case {
  OptimizerKind kind;
  int staleness;
};

class GptSchedules : public ::testing::TestWithParam<Case> {};

TEST_P(GptSchedules, VerticalTrainsTheSameBitsAsHorizontal) {
  const auto [kind, staleness] = GetParam();
  using runtime::PlacementPolicy;
  const Trained horizontal = train(kind, staleness, PlacementPolicy::device, {.micro_batches = kMicroBatches});
  const plan::ModelStateTiers on_host{.weights = platform::Tier::host, .gradients = platform::Tier::host};
  for (PlacementPolicy placement : {PlacementPolicy::device, PlacementPolicy::host}) {
    const std::string where = std::string(runtime::to_string(placement));
    const Trained vertical = train(
        kind, staleness, placement,
        {.order = plan::ScheduleOrder::vertical, .micro_batches = kMicroBatches, .tiers = on_host});
    for (int t = 0; t < kSteps; ++t) {
      EXPECT_TRUE(same_bits(horizontal.after_each_step[static_cast<std::size_t>(t)],
                            vertical.after_each_step[static_cast<std::size_t>(t)]))
          << where << ": step " << t + 1;
      EXPECT_EQ(horizontal.losses[static_cast<std::size_t>(t)], vertical.losses[static_cast<std::size_t>(t)]);
    }
    EXPECT_TRUE(same_bits(horizontal.final_weights, vertical.final_weights)) << where;
    // A quarter of the update deferred into the next forward: the forward sees the same weights
    // (equal losses), and after finish() the weights are the same.
    const Trained deferred = train(kind, staleness, placement,
                                   {.order = plan::ScheduleOrder::vertical,
                                    .micro_batches = kMicroBatches,
                                    .defer_fraction = 0.25,
                                    .tiers = on_host});
    EXPECT_EQ(horizontal.losses, deferred.losses) << where;
    EXPECT_TRUE(same_bits(horizontal.final_weights, deferred.final_weights)) << where;
    EXPECT_FALSE(same_bits(horizontal.after_each_step.front(), deferred.after_each_step.front()))
        << where << ": deferred updates lag until the next forward";
  }
}

INSTANTIATE_TEST_SUITE_P(Optimizers, GptSchedules,
                         ::testing::Values(Case{OptimizerKind::adamw, 0}, Case{OptimizerKind::soap, 0},
                                           Case{OptimizerKind::soap, 5}, Case{OptimizerKind::shampoo, 5}));

}  // namespace
}  // namespace asteria::model

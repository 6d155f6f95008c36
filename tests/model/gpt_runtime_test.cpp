// The transformer trained through the runtime (StepDriver over GptTrainingModel): at S = 0 it is
// the synchronous optimizer bit for bit, and every optimizer lowers the loss on the synthetic
// corpus within a few dozen steps.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <numeric>
#include <utility>
#include <vector>

#include "core/data/batch_loader.hpp"
#include "core/data/corpus.hpp"
#include "core/model/gpt.hpp"
#include "core/model/gpt_training_model.hpp"
#include "core/optim/tensor_optimizer.hpp"
#include "core/platform/fake/fake_platform.hpp"
#include "core/runtime/driver/step_driver.hpp"

namespace asteria::model {
namespace {

using optim::OptimizerKind;

workload::ModelConfig runtime_config() {
  workload::ModelConfig c;
  c.name = "runtime-test";
  c.layers = 1;
  c.d_model = 16;
  c.heads = 2;
  c.kv_heads = 2;
  c.mlp_hidden = 32;
  c.mlp = workload::MlpKind::gelu;
  c.vocab = 256;
  c.sequence_length = 16;
  c.micro_batch = 4;
  c.tied_embeddings = false;
  c.norm_weights = true;
  return c;
}

optim::Hyperparameters hyperparameters(OptimizerKind kind, double lr) {
  optim::Hyperparameters hp = optim::default_hyperparameters(kind);
  hp.lr = lr;
  hp.max_precond_dim = 16;  // the 256 x 16 embedding and head split into blocks
  hp.precondition_frequency = 2;
  return hp;
}

platform::fake::FakeOptions instant_platform(int workers) {
  platform::fake::FakeOptions o;
  o.host_workers = workers;
  return o;
}

runtime::DriverOptions driver_options(int staleness) {
  runtime::DriverOptions o;
  o.numerics = platform::Numerics::values;
  o.service.staleness = staleness;
  o.store.policy = runtime::PlacementPolicy::device;
  o.device_seconds = [](const platform::Cost&) { return 0.0; };
  return o;
}

std::vector<std::vector<data::TokenId>> batches(const workload::ModelConfig& c, int steps, std::uint64_t seed) {
  static const data::Corpus corpus = data::Corpus::synthetic(200'000, 3);
  data::BatchLoader loader(corpus.train(), static_cast<int>(c.micro_batch), static_cast<int>(c.sequence_length), seed);
  std::vector<std::vector<data::TokenId>> out(static_cast<std::size_t>(steps));
  for (auto& b : out) loader.next(b);
  return out;
}

bool same_bits(std::span<const float> a, std::span<const float> b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(GptRuntime, StalenessZeroIsTheSynchronousOptimizerBitForBit) {
  const workload::ModelConfig c = runtime_config();
  constexpr int kSteps = 6;
  const auto data = batches(c, kSteps, 11);
  for (OptimizerKind kind : {OptimizerKind::shampoo, OptimizerKind::soap, OptimizerKind::kl_shampoo, OptimizerKind::adamw}) {
    SCOPED_TRACE(optim::to_string(kind));
    const optim::Hyperparameters hp = hyperparameters(kind, 1e-3);

    // The synchronous reference: full backward, then TensorOptimizer::step on every tensor.
    Gpt<float> reference(c, 5);
    std::vector<std::unique_ptr<optim::TensorOptimizer<float>>> tensors;
    for (std::size_t i = 0; i < reference.tensor_count(); ++i) {
      const workload::WeightSpec& w = reference.tensor(i);
      const std::vector<linalg::index> shape =
          w.order == 1 ? std::vector<linalg::index>{w.cols} : std::vector<linalg::index>{w.rows, w.cols};
      tensors.push_back(std::make_unique<optim::TensorOptimizer<float>>(kind, hp, shape, w.name));
    }

    Gpt<float> trained(c, 5);
    GptTrainingModel<float> adapter(trained);
    platform::fake::FakePlatform platform(instant_platform(2));
    runtime::StepDriver<float> driver(platform, adapter, kind, hp, driver_options(0));

    for (int t = 1; t <= kSteps; ++t) {
      const auto& tokens = data[static_cast<std::size_t>(t - 1)];
      const double reference_loss = reference.forward_backward(tokens, static_cast<int>(c.micro_batch));
      for (std::size_t i = 0; i < tensors.size(); ++i) tensors[i]->step(reference.parameter(i), reference.gradient(i));

      adapter.set_batch(tokens, static_cast<int>(c.micro_batch));
      driver.run_step();
      EXPECT_EQ(adapter.last_loss(), reference_loss) << "step " << t;
      for (std::size_t i = 0; i < tensors.size(); ++i)
        ASSERT_TRUE(same_bits(std::as_const(reference).parameter(i), std::as_const(trained).parameter(i)))
            << reference.tensor(i).name << " differs after step " << t;
    }
    driver.finish();
    if (kind != OptimizerKind::adamw) {
      EXPECT_GT(driver.service().totals().published, 0);
    }
  }
}

// Each optimizer, with an asynchronous refresh (S = 1), learns the synthetic corpus's letter and
// word statistics: the mean loss of the last five steps ends well below the first step's (the
// initial loss is about ln 256 = 5.5 nats; a unigram model of the text reaches about 3).
TEST(GptRuntime, EveryOptimizerLowersTheLossWithinAFewDozenSteps) {
  const workload::ModelConfig c = runtime_config();
  constexpr int kSteps = 40;
  const auto data = batches(c, kSteps, 12);
  struct Case {
    OptimizerKind kind;
    double lr;
  };
  for (const Case& k : {Case{OptimizerKind::adamw, 1e-2}, Case{OptimizerKind::shampoo, 1e-2},
                        Case{OptimizerKind::soap, 1e-2}, Case{OptimizerKind::kl_shampoo, 1e-2},
                        Case{OptimizerKind::muon, 2e-2}}) {
    SCOPED_TRACE(optim::to_string(k.kind));
    Gpt<float> gpt(c, 9);
    GptTrainingModel<float> adapter(gpt);
    platform::fake::FakePlatform platform(instant_platform(1));
    runtime::StepDriver<float> driver(platform, adapter, k.kind, hyperparameters(k.kind, k.lr), driver_options(1));
    std::vector<double> losses;
    for (int t = 1; t <= kSteps; ++t) {
      adapter.set_batch(data[static_cast<std::size_t>(t - 1)], static_cast<int>(c.micro_batch));
      driver.run_step();
      losses.push_back(adapter.last_loss());
      ASSERT_TRUE(std::isfinite(losses.back())) << "step " << t;
    }
    driver.finish();
    const double last = std::accumulate(losses.end() - 5, losses.end(), 0.0) / 5.0;
    EXPECT_LT(last, losses.front() - 1.5) << "first " << losses.front() << ", last five " << last;
  }
}

}  // namespace
}  // namespace asteria::model

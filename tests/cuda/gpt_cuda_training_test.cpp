// The CUDA model trained through the step driver with the optimizer on the host tracks the CPU
// model trained the same way. Needs a CUDA device: without one the test skips and says so.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/data/batch_loader.hpp"
#include "core/data/corpus.hpp"
#include "core/model/gpt.hpp"
#include "core/model/gpt_training_model.hpp"
#include "core/platform/fake/fake_platform.hpp"
#include "core/real/cuda/device.hpp"
#include "core/real/cuda/gpt_cuda.hpp"
#include "core/real/cuda/gpt_cuda_training_model.hpp"
#include "core/runtime/driver/step_driver.hpp"

namespace asteria::real::cuda {
namespace {

workload::ModelConfig config() {
  workload::ModelConfig c;
  c.name = "cuda-training-test";
  c.layers = 2;
  c.d_model = 32;
  c.heads = 4;
  c.kv_heads = 4;
  c.mlp_hidden = 64;
  c.mlp = workload::MlpKind::swiglu;
  c.vocab = 256;
  c.sequence_length = 32;
  c.micro_batch = 4;
  return c;
}

runtime::DriverOptions options() {
  runtime::DriverOptions o;
  o.mode = runtime::NumericsMode::full;
  o.service.staleness = 1;
  o.device_seconds = [](const platform::Cost&) { return 0.0; };
  return o;
}

TEST(GptCudaTraining, TracksTheCpuModelThroughTheRuntime) {
  const DeviceInfo info = query_devices();
  if (info.count == 0) GTEST_SKIP() << "no CUDA device on this machine: " << info.reason;
  const workload::ModelConfig c = config();
  optim::Hyperparameters hp = optim::default_hyperparameters(optim::OptimizerKind::soap);
  hp.lr = 3e-3;
  hp.max_precond_dim = 64;
  hp.precondition_frequency = 2;
  const data::Corpus corpus = data::Corpus::synthetic(100'000, 2);
  data::BatchLoader loader(corpus.train(), static_cast<int>(c.micro_batch), static_cast<int>(c.sequence_length), 3);

  model::Gpt<float> cpu(c, 4);
  model::GptTrainingModel<float> cpu_adapter(cpu);
  GptCuda gpu(c, 4);
  GptCudaTrainingModel gpu_adapter(gpu);
  platform::fake::FakePlatform cpu_platform{platform::fake::FakeOptions{}};
  platform::fake::FakePlatform gpu_platform{platform::fake::FakeOptions{}};
  runtime::StepDriver<float> cpu_driver(cpu_platform, cpu_adapter, optim::OptimizerKind::soap, hp, options());
  runtime::StepDriver<float> gpu_driver(gpu_platform, gpu_adapter, optim::OptimizerKind::soap, hp, options());

  std::vector<model::TokenId> tokens;
  double first = 0.0;
  for (int t = 1; t <= 8; ++t) {
    loader.next(tokens);
    cpu_adapter.set_batch(tokens, static_cast<int>(c.micro_batch));
    gpu_adapter.set_batch(tokens, static_cast<int>(c.micro_batch));
    cpu_driver.run_step();
    gpu_driver.run_step();
    if (t == 1) first = gpu_adapter.last_loss();
    EXPECT_NEAR(gpu_adapter.last_loss(), cpu_adapter.last_loss(), 1e-3 * cpu_adapter.last_loss()) << "step " << t;
  }
  EXPECT_LT(gpu_adapter.last_loss(), first);
  cpu_driver.finish();
  gpu_driver.finish();
  // The host mirrors are the trained parameters; they track the CPU model's.
  for (std::size_t i = 0; i < cpu.tensor_count(); ++i) {
    const auto a = std::as_const(cpu).parameter(i);
    const auto b = gpu_adapter.parameters(i);
    double diff = 0.0, norm = 0.0;
    for (std::size_t k = 0; k < a.size(); ++k) {
      diff += (double(a[k]) - double(b[k])) * (double(a[k]) - double(b[k]));
      norm += double(a[k]) * double(a[k]);
    }
    EXPECT_LT(std::sqrt(diff), 1e-2 * std::sqrt(norm) + 1e-6) << cpu.tensor(i).name;
  }
}

}  // namespace
}  // namespace asteria::real::cuda

// The CUDA model trained through the step driver with the optimizer on the host tracks the CPU
// model trained the same way. Needs a CUDA device: without one the test skips and says so.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
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
  o.numerics = platform::Numerics::values;
  o.service.staleness = 1;
  o.device_seconds = [](const platform::Cost&) { return 0.0; };
  return o;
}

// Trains the same model from the same seed on the CPU and on the GPU through the runtime, for
// `steps` steps, and returns the per-step losses of both and the final relative distance of every
// parameter tensor (host mirrors against the CPU model's).
struct SideBySide {
  std::vector<double> cpu_loss, gpu_loss, parameter_distance;
  std::vector<std::string> tensor_names;
};

SideBySide train_side_by_side(optim::OptimizerKind kind, const optim::Hyperparameters& hp, int steps) {
  const workload::ModelConfig c = config();
  const data::Corpus corpus = data::Corpus::synthetic(100'000, 2);
  data::BatchLoader loader(corpus.train(), static_cast<int>(c.micro_batch), static_cast<int>(c.sequence_length), 3);
  model::Gpt<float> cpu(c, 4);
  model::GptTrainingModel<float> cpu_adapter(cpu);
  GptCuda gpu(c, 4);
  GptCudaTrainingModel gpu_adapter(gpu);
  platform::fake::FakePlatform cpu_platform{platform::fake::FakeOptions{}};
  platform::fake::FakePlatform gpu_platform{platform::fake::FakeOptions{}};
  runtime::StepDriver<float> cpu_driver(cpu_platform, cpu_adapter, kind, hp, options());
  runtime::StepDriver<float> gpu_driver(gpu_platform, gpu_adapter, kind, hp, options());
  SideBySide out;
  std::vector<model::TokenId> tokens;
  for (int t = 1; t <= steps; ++t) {
    loader.next(tokens);
    cpu_adapter.set_batch(tokens, static_cast<int>(c.micro_batch));
    gpu_adapter.set_batch(tokens, static_cast<int>(c.micro_batch));
    cpu_driver.run_step();
    gpu_driver.run_step();
    out.cpu_loss.push_back(cpu_adapter.last_loss());
    out.gpu_loss.push_back(gpu_adapter.last_loss());
  }
  cpu_driver.finish();
  gpu_driver.finish();
  for (std::size_t i = 0; i < cpu.tensor_count(); ++i) {
    const auto a = std::as_const(cpu).parameter(i);
    const auto b = gpu_adapter.parameters(i);
    double diff = 0.0, norm = 0.0;
    for (std::size_t k = 0; k < a.size(); ++k) {
      EXPECT_TRUE(std::isfinite(b[k])) << cpu.tensor(i).name;
      diff += (double(a[k]) - double(b[k])) * (double(a[k]) - double(b[k]));
      norm += double(a[k]) * double(a[k]);
    }
    out.parameter_distance.push_back(std::sqrt(diff / norm));
    out.tensor_names.push_back(cpu.tensor(i).name);
  }
  return out;
}

TEST(GptCudaTraining, AdamWThroughTheRuntimeTracksTheCpuModel) {
  // AdamW passes float rounding through without amplifying it, so the two runs stay close: this
  // checks the plumbing (gradients down, host updates, parameters up before the next step).
  const DeviceInfo info = query_devices();
  if (info.count == 0) GTEST_SKIP() << "no CUDA device on this machine: " << info.reason;
  optim::Hyperparameters hp = optim::default_hyperparameters(optim::OptimizerKind::adamw);
  hp.lr = 3e-3;
  const SideBySide run = train_side_by_side(optim::OptimizerKind::adamw, hp, 8);
  for (std::size_t t = 0; t < run.cpu_loss.size(); ++t)
    EXPECT_NEAR(run.gpu_loss[t], run.cpu_loss[t], 1e-4 * run.cpu_loss[t]) << "step " << t + 1;
  EXPECT_LT(run.gpu_loss.back(), run.gpu_loss.front());
  for (std::size_t i = 0; i < run.parameter_distance.size(); ++i)
    EXPECT_LT(run.parameter_distance[i], 1e-4) << run.tensor_names[i];
}

TEST(GptCudaTraining, SoapThroughTheRuntimeFollowsTheCpuLoss) {
  // SOAP (like Shampoo) amplifies rounding: on this model a relative perturbation of 1e-7 in
  // the CPU gradients alone moves the parameters by 10-30% (relative) within 8 steps, through
  // eigenvector choices among close eigenvalues (the embedding's rows of unseen bytes most). So
  // the GPU run is held to the CPU run's loss curve and to finite parameters, not to the CPU's
  // parameters.
  const DeviceInfo info = query_devices();
  if (info.count == 0) GTEST_SKIP() << "no CUDA device on this machine: " << info.reason;
  optim::Hyperparameters hp = optim::default_hyperparameters(optim::OptimizerKind::soap);
  hp.lr = 3e-3;
  hp.max_precond_dim = 64;
  hp.precondition_frequency = 2;
  const SideBySide run = train_side_by_side(optim::OptimizerKind::soap, hp, 12);
  for (std::size_t t = 0; t < run.cpu_loss.size(); ++t)
    EXPECT_NEAR(run.gpu_loss[t], run.cpu_loss[t], 1e-2 * run.cpu_loss[t]) << "step " << t + 1;
  EXPECT_LT(run.gpu_loss.back(), run.gpu_loss.front() - 0.1);
}

}  // namespace
}  // namespace asteria::real::cuda

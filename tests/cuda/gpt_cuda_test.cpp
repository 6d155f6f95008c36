// GptCuda against the CPU reference Gpt<float>: identical initial weights, the same loss and
// gradients to float rounding, SGD steps that track, and the same input checks. The host-side
// pieces (weights, token plan, checks, FLOP count) are checked everywhere; the rest needs a CUDA
// device and skips, saying why, without one.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <random>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/common/error.hpp"
#include "core/model/gpt.hpp"
#include "core/model/gpt_layout.hpp"
#include "core/real/cuda/device.hpp"
#include "core/real/cuda/gpt_cuda.hpp"
#include "core/real/cuda/gpt_cuda_host.hpp"

namespace asteria::real::cuda {
namespace {

using model::Gpt;
using model::TokenId;
using workload::MlpKind;
using Variant = std::tuple<MlpKind, bool, bool>;  // mlp, tied embeddings, norm weights

workload::ModelConfig small_config(MlpKind mlp, bool tied, bool norm_weights) {
  workload::ModelConfig c;
  c.name = "cuda-test-model";
  c.layers = 2;
  c.d_model = 32;
  c.heads = 4;
  c.kv_heads = 4;
  c.mlp_hidden = 64;
  c.mlp = mlp;
  c.vocab = 96;
  c.sequence_length = 16;
  c.micro_batch = 3;
  c.tied_embeddings = tied;
  c.norm_weights = norm_weights;
  return c;
}

std::string variant_name(const ::testing::TestParamInfo<Variant>& info) {
  const auto [mlp, tied, norms] = info.param;
  return std::string(workload::to_string(mlp)) + (tied ? "_tied" : "_untied") + (norms ? "_gains" : "_nogains");
}

std::vector<TokenId> random_tokens(std::size_t count, std::int64_t vocab, std::uint32_t seed) {
  std::mt19937 engine(seed);
  std::uniform_int_distribution<TokenId> pick(0, static_cast<TokenId>(vocab - 1));
  std::vector<TokenId> tokens(count);
  for (TokenId& t : tokens) t = pick(engine);
  return tokens;
}

// ‖a − b‖ / ‖b‖ (Frobenius), in double.
double relative_difference(std::span<const float> a, std::span<const float> b) {
  double diff = 0.0;
  double norm = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = static_cast<double>(a[i]) - static_cast<double>(b[i]);
    diff += d * d;
    norm += static_cast<double>(b[i]) * static_cast<double>(b[i]);
  }
  return std::sqrt(diff) / std::max(std::sqrt(norm), 1e-30);
}

std::vector<float> parameter_of(const GptCuda& gpu, std::size_t i) {
  std::vector<float> out(static_cast<std::size_t>(gpu.tensor(i).elements()));
  gpu.copy_parameter_to_host(i, out);
  return out;
}

std::vector<float> gradient_of(const GptCuda& gpu, std::size_t i) {
  std::vector<float> out(static_cast<std::size_t>(gpu.tensor(i).elements()));
  gpu.copy_gradient_to_host(i, out);
  return out;
}

// --- Host-side pieces: no device needed ---

TEST(GptCudaHost, InitialParametersEqualGptBitForBit) {
  for (MlpKind mlp : {MlpKind::swiglu, MlpKind::gelu})
    for (bool tied : {false, true})
      for (bool norms : {false, true}) {
        const workload::ModelConfig c = small_config(mlp, tied, norms);
        const Gpt<float> cpu(c, 42);
        const workload::WorkloadModel work = workload::build_workload(c);
        std::size_t total = 0;
        const std::vector<std::size_t> offsets = tensor_offsets(work.weights, &total);
        ASSERT_EQ(total, cpu.parameter_count());
        const std::vector<float> values = initial_parameters<float>(c, work.weights, 42);
        ASSERT_EQ(values.size(), total);
        for (std::size_t i = 0; i < cpu.tensor_count(); ++i) {
          const std::span<const float> expected = cpu.parameter(i);
          EXPECT_TRUE(std::equal(expected.begin(), expected.end(), values.begin() + static_cast<std::ptrdiff_t>(offsets[i])))
              << c.name << " tensor " << cpu.tensor(i).name;
        }
      }
}

TEST(GptCudaHost, SeedChangesTheWeights) {
  const workload::ModelConfig c = small_config(MlpKind::swiglu, false, true);
  const workload::WorkloadModel work = workload::build_workload(c);
  EXPECT_NE(initial_parameters<float>(c, work.weights, 1), initial_parameters<float>(c, work.weights, 2));
}

TEST(GptCudaHost, RejectsWhatGptRejectsBeforeTouchingTheDevice) {
  workload::ModelConfig gqa = small_config(MlpKind::swiglu, false, true);
  gqa.kv_heads = 2;
  workload::ModelConfig qk = small_config(MlpKind::swiglu, false, true);
  qk.qk_norm = true;
  workload::ModelConfig odd = small_config(MlpKind::swiglu, false, true);
  odd.d_model = 36;
  odd.heads = 12;  // head_dim 3
  odd.kv_heads = 12;
  const std::vector<std::pair<workload::ModelConfig, std::string>> cases = {
      {gqa, "kv_heads"}, {qk, "qk_norm"}, {odd, "heads"}};
  for (const auto& [config, field] : cases) {
    try {
      GptCuda gpu(config, 1);
      ADD_FAILURE() << "accepted a config with a bad " << field;
    } catch (const InputError& e) {
      EXPECT_EQ(e.source(), "cuda-test-model");
      EXPECT_EQ(e.field(), field);
    }
    EXPECT_THROW(Gpt<float>(config, 1), InputError) << field;  // the reference agrees
  }
}

TEST(GptCudaHost, TokenChecks) {
  const workload::ModelConfig c = small_config(MlpKind::gelu, false, true);
  const auto field_of = [&](std::vector<TokenId> tokens, int batch) -> std::string {
    try {
      check_tokens(c, tokens, batch);
    } catch (const InputError& e) {
      EXPECT_EQ(e.source(), "tokens");
      return e.field();
    }
    return "accepted";
  };
  EXPECT_EQ(field_of(std::vector<TokenId>(2 * 17, 1), 2), "accepted");
  EXPECT_EQ(check_tokens(c, std::vector<TokenId>(2 * 17, 1), 2), 16);
  EXPECT_EQ(check_tokens(c, std::vector<TokenId>(3 * 2, 1), 3), 1);
  EXPECT_EQ(field_of(std::vector<TokenId>(2 * 17, 1), 0), "batch");
  EXPECT_EQ(field_of(std::vector<TokenId>(2 * 18, 1), 2), "size");  // L 17 > sequence_length 16
  EXPECT_EQ(field_of(std::vector<TokenId>(2 * 1, 1), 2), "size");   // L 0
  EXPECT_EQ(field_of(std::vector<TokenId>(7, 1), 2), "size");       // not a multiple of batch
  std::vector<TokenId> bad(2 * 5, 3);
  bad[7] = 96;  // vocab is 96
  EXPECT_EQ(field_of(bad, 2), "id");
  bad[7] = -1;
  EXPECT_EQ(field_of(bad, 2), "id");
}

TEST(GptCudaHost, StagedTokensHoldInputsTargetsAndTheScatterPlan) {
  // Sequences [5 2 5 7] and [2 2 9 1], L = 3: inputs 5 2 5 | 2 2 9, targets 2 5 7 | 2 9 1.
  // Input ids ascending: 2 at positions 1 3 4, 5 at 0 2, 9 at 5.
  const std::vector<TokenId> tokens = {5, 2, 5, 7, 2, 2, 9, 1};
  TokenUpload upload;
  upload.values.assign(100, -7);  // stale contents are replaced
  stage_tokens(tokens, 2, 3, upload);
  EXPECT_EQ(upload.tokens, 6);
  EXPECT_EQ(upload.distinct, 3);
  const std::vector<std::int32_t> expected = {5, 2, 5, 2, 2, 9,   // inputs
                                              2, 5, 7, 2, 9, 1,   // targets
                                              2, 5, 9,            // distinct ids
                                              0, 3, 5, 6,         // starts
                                              1, 3, 4, 0, 2, 5};  // positions by id
  EXPECT_EQ(upload.values, expected);
  EXPECT_EQ(upload.targets_at(), 6u);
  EXPECT_EQ(upload.ids_at(), 12u);
  EXPECT_EQ(upload.starts_at(), 15u);
  EXPECT_EQ(upload.positions_at(), 19u);
}

TEST(GptCudaHost, StepFlopsFollowGptsConvention) {
  // By hand: 1 layer, d 4, 2 heads, GELU f 8, vocab 10, one sequence of 2 tokens.
  // Layer weights 2·16 + 2·16 + 2·8·4 = 128; per layer 2·2·128 + attention 2·1·2²·4 = 544;
  // head 2·2·10·4 = 160; forward + backward 3 · (544 + 160) = 2112.
  workload::ModelConfig c = small_config(MlpKind::gelu, true, true);
  c.layers = 1;
  c.d_model = 4;
  c.heads = 2;
  c.kv_heads = 2;
  c.mlp_hidden = 8;
  c.vocab = 10;
  EXPECT_DOUBLE_EQ(model::step_flops(c, 1, 2), 2112.0);
  for (MlpKind mlp : {MlpKind::swiglu, MlpKind::gelu}) {
    const workload::ModelConfig big = small_config(mlp, false, true);
    EXPECT_DOUBLE_EQ(model::step_flops(big, 3, 16), Gpt<float>(big, 1).step_flops(3, 16));
  }
}

TEST(GptCudaDevice, ConstructionWithoutADeviceSaysSo) {
  const DeviceInfo info = query_devices();
  if (info.count > 0) GTEST_SKIP() << "a CUDA device is present (" << info.name << ")";
  try {
    GptCuda gpu(small_config(MlpKind::swiglu, false, true), 1);
    ADD_FAILURE() << "constructed without a device";
  } catch (const InputError&) {
    ADD_FAILURE() << "a missing device is not an input error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("no usable CUDA device"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(info.reason), std::string::npos) << e.what();
  }
}

// --- On the device ---

// Why the device tests cannot run here, or empty when they can.
std::string missing_device() {
  const DeviceInfo info = query_devices();
  return info.count > 0 ? std::string() : "no CUDA device on this machine: " + info.reason;
}

// Compares every parameter (exactly or within `parameter_tolerance`), the loss and every gradient.
void expect_models_agree(Gpt<float>& cpu, GptCuda& gpu, const std::vector<TokenId>& tokens, int batch,
                         double parameter_tolerance) {
  ASSERT_EQ(gpu.tensor_count(), cpu.tensor_count());
  for (std::size_t i = 0; i < cpu.tensor_count(); ++i) {
    const std::vector<float> p = parameter_of(gpu, i);
    const std::span<const float> expected = std::as_const(cpu).parameter(i);
    if (parameter_tolerance == 0.0)
      EXPECT_TRUE(std::equal(p.begin(), p.end(), expected.begin())) << cpu.tensor(i).name;
    else
      EXPECT_LT(relative_difference(p, expected), parameter_tolerance) << cpu.tensor(i).name;
  }
  const double cpu_loss = cpu.forward_backward(tokens, batch);
  const double gpu_loss = gpu.forward_backward(tokens, batch);
  ASSERT_TRUE(std::isfinite(gpu_loss));
  EXPECT_NEAR(gpu_loss, cpu_loss, 1e-4 * cpu_loss);
  for (std::size_t i = 0; i < cpu.tensor_count(); ++i)
    EXPECT_LT(relative_difference(gradient_of(gpu, i), std::as_const(cpu).gradient(i)), 1e-3) << cpu.tensor(i).name;
}

class GptCudaMatchesCpu : public ::testing::TestWithParam<Variant> {
 protected:
  void SetUp() override {
    if (const std::string why = missing_device(); !why.empty()) GTEST_SKIP() << why;
  }
};

TEST_P(GptCudaMatchesCpu, AtInitialWeights) {
  const auto [mlp, tied, norms] = GetParam();
  const workload::ModelConfig c = small_config(mlp, tied, norms);
  Gpt<float> cpu(c, 7);
  GptCuda gpu(c, 7);
  EXPECT_EQ(gpu.parameter_count(), cpu.parameter_count());
  // Full-length sequences, then shorter ones in a larger batch (the workspace is laid out anew
  // and RoPE restarts at position 0 every L tokens).
  expect_models_agree(cpu, gpu, random_tokens(3 * 17, c.vocab, 1), 3, 0.0);
  expect_models_agree(cpu, gpu, random_tokens(5 * 10, c.vocab, 2), 5, 0.0);
}

// Weights well away from their small initial values (matrices std 0.3, gains 1 ± 0.3): sharp
// attention, saturated activations and large gradients.
TEST_P(GptCudaMatchesCpu, WithSpreadWeights) {
  const auto [mlp, tied, norms] = GetParam();
  const workload::ModelConfig c = small_config(mlp, tied, norms);
  Gpt<float> cpu(c, 3);
  GptCuda gpu(c, 3);
  std::mt19937 engine(99);
  std::normal_distribution<float> normal(0.0f, 0.3f);
  for (std::size_t i = 0; i < cpu.tensor_count(); ++i) {
    const float offset = cpu.tensor(i).order == 1 ? 1.0f : 0.0f;
    for (float& v : cpu.parameter(i)) v = offset + normal(engine);
    gpu.copy_parameter_from_host(i, cpu.parameter(i));
  }
  expect_models_agree(cpu, gpu, random_tokens(2 * 17, c.vocab, 5), 2, 0.0);
}

INSTANTIATE_TEST_SUITE_P(Variants, GptCudaMatchesCpu,
                         ::testing::Combine(::testing::Values(MlpKind::swiglu, MlpKind::gelu), ::testing::Bool(),
                                            ::testing::Bool()),
                         variant_name);

class GptCudaOnDevice : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const std::string why = missing_device(); !why.empty()) GTEST_SKIP() << why;
  }
};

// Plain SGD, w ← w − lr·g, applied through the host copies to both models: the losses and
// weights stay together, and the loss on the repeated batch falls.
TEST_F(GptCudaOnDevice, SgdStepsTrackTheCpuModel) {
  const workload::ModelConfig c = small_config(MlpKind::swiglu, false, true);
  Gpt<float> cpu(c, 11);
  GptCuda gpu(c, 11);
  const std::vector<TokenId> tokens = random_tokens(3 * 17, c.vocab, 8);
  const float lr = 0.5f;
  double first = 0.0;
  double last = 0.0;
  for (int step = 0; step < 6; ++step) {
    const double cpu_loss = cpu.forward_backward(tokens, 3);
    const double gpu_loss = gpu.forward_backward(tokens, 3);
    EXPECT_NEAR(gpu_loss, cpu_loss, 1e-4 * cpu_loss) << "step " << step;
    if (step == 0) first = gpu_loss;
    last = gpu_loss;
    for (std::size_t i = 0; i < cpu.tensor_count(); ++i) {
      std::vector<float> w = parameter_of(gpu, i);
      const std::vector<float> g = gradient_of(gpu, i);
      for (std::size_t e = 0; e < w.size(); ++e) w[e] -= lr * g[e];
      gpu.copy_parameter_from_host(i, w);
      const std::span<float> cw = cpu.parameter(i);
      const std::span<const float> cg = std::as_const(cpu).gradient(i);
      for (std::size_t e = 0; e < cw.size(); ++e) cw[e] -= lr * cg[e];
    }
  }
  EXPECT_LT(last, first - 0.05) << "six SGD steps on one batch should lower its loss";
  for (std::size_t i = 0; i < cpu.tensor_count(); ++i)
    EXPECT_LT(relative_difference(parameter_of(gpu, i), std::as_const(cpu).parameter(i)), 1e-3) << cpu.tensor(i).name;
}

TEST_F(GptCudaOnDevice, LossIsTheForwardOfForwardBackwardAndLeavesGradients) {
  const workload::ModelConfig c = small_config(MlpKind::gelu, true, true);
  GptCuda gpu(c, 5);
  const std::vector<TokenId> tokens = random_tokens(2 * 13, c.vocab, 3);
  const double trained = gpu.forward_backward(tokens, 2);
  std::vector<std::vector<float>> gradients;
  for (std::size_t i = 0; i < gpu.tensor_count(); ++i) gradients.push_back(gradient_of(gpu, i));
  EXPECT_EQ(gpu.loss(tokens, 2), trained);  // the same kernels in the same order
  gpu.loss(random_tokens(4 * 9, c.vocab, 4), 4);
  for (std::size_t i = 0; i < gpu.tensor_count(); ++i) EXPECT_EQ(gradient_of(gpu, i), gradients[i]) << gpu.tensor(i).name;
}

TEST_F(GptCudaOnDevice, GradientsAreDeterministic) {
  const workload::ModelConfig c = small_config(MlpKind::swiglu, true, true);
  GptCuda gpu(c, 5);
  // Repeated ids: the embedding's scatter-add sums several rows into one.
  std::vector<TokenId> tokens = random_tokens(3 * 17, 6, 9);
  const double loss = gpu.forward_backward(tokens, 3);
  std::vector<std::vector<float>> gradients;
  for (std::size_t i = 0; i < gpu.tensor_count(); ++i) gradients.push_back(gradient_of(gpu, i));
  EXPECT_EQ(gpu.forward_backward(tokens, 3), loss);
  for (std::size_t i = 0; i < gpu.tensor_count(); ++i) EXPECT_EQ(gradient_of(gpu, i), gradients[i]) << gpu.tensor(i).name;
}

TEST_F(GptCudaOnDevice, BadTokensAndBuffersAreInputErrors) {
  const workload::ModelConfig c = small_config(MlpKind::swiglu, false, false);
  GptCuda gpu(c, 5);
  const std::vector<TokenId> good = random_tokens(2 * 17, c.vocab, 1);
  const double before = gpu.loss(good, 2);
  std::vector<TokenId> bad = good;
  bad[20] = static_cast<TokenId>(c.vocab);
  EXPECT_THROW(gpu.forward_backward(bad, 2), InputError);
  EXPECT_THROW(gpu.loss(std::vector<TokenId>(2 * 18, 0), 2), InputError);
  EXPECT_THROW(gpu.loss(good, 0), InputError);
  EXPECT_EQ(gpu.loss(good, 2), before);  // a rejected call leaves the model as it was
  std::vector<float> wrong(3);
  EXPECT_THROW(gpu.copy_parameter_to_host(0, wrong), InputError);
  EXPECT_THROW(gpu.copy_gradient_to_host(0, wrong), InputError);
  EXPECT_THROW(gpu.copy_parameter_from_host(0, wrong), InputError);
  EXPECT_THROW(gpu.copy_parameter_to_host(gpu.tensor_count(), wrong), std::out_of_range);
}

// Throughput of a GPT-2-small-width model (4 layers, L 512, batch 8), reported for the record.
// The model-FLOP rate must lie below the device's FP32 peak (H100 SXM: 67 TFLOP/s, NVIDIA H100
// datasheet) — a rate above it would mean a timing or FLOP-count error.
TEST_F(GptCudaOnDevice, ReportsThroughput) {
  workload::ModelConfig c = small_config(MlpKind::gelu, false, true);
  c.layers = 4;
  c.d_model = 768;
  c.heads = 12;
  c.kv_heads = 12;
  c.mlp_hidden = 3072;
  c.vocab = 8192;
  c.sequence_length = 512;
  const int batch = 8;
  GptCuda gpu(c, 1);
  const std::vector<TokenId> tokens = random_tokens(static_cast<std::size_t>(batch) * 513, c.vocab, 2);
  const double initial = gpu.forward_backward(tokens, batch);  // warm-up, sizes the workspace
  // Initial logits have std about 0.02·sqrt(d) = 0.55, so the loss is near ln(vocab) + 0.55²/2.
  EXPECT_NEAR(initial, std::log(static_cast<double>(c.vocab)) + 0.15, 0.5);
  const int steps = 5;
  const auto start = std::chrono::steady_clock::now();
  for (int s = 0; s < steps; ++s) gpu.forward_backward(tokens, batch);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / steps;
  const double tflops = gpu.step_flops(batch, 512) / seconds / 1e12;
  std::cout << "[ GptCuda  ] " << gpu.device_name() << ": " << seconds * 1e3 << " ms/step, "
            << batch * 512 / seconds << " tokens/s, " << tflops << " model TFLOP/s (FP32)\n";
  RecordProperty("tflops", std::to_string(tflops));
  EXPECT_GT(tflops, 0.0);
  EXPECT_LT(tflops, 67.0);
}

}  // namespace
}  // namespace asteria::real::cuda

// Throughput of the CUDA transformer (core/real/cuda/gpt_cuda) against the cuBLAS SGEMM it is
// built on, side by side in one run on one device:
//   BM_CublasSgemmPeak         a large square FP32 SGEMM (no TF32, the model's math mode): the
//                              device's measured FP32 peak, for MFU
//   BM_GptCudaForwardBackward  the model's forward + backward at three sizes:
//                              0 gpt-mini (3.2 M parameters), 1 gpt-25m, 2 gpt-100m
// Counters: GFLOP/s (model FLOPs, the Gpt::step_flops convention; nominal 2n³ for the SGEMM),
// tokens/s and parameters. MFU = model GFLOP/s / BM_CublasSgemmPeak GFLOP/s. Every timed call
// returns after its device work has finished (GptCuda synchronizes; the SGEMM loop is timed with
// CUDA events). Without a CUDA device every benchmark reports an error and times nothing.
#include <benchmark/benchmark.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/real/cuda/device.hpp"
#include "core/real/cuda/gpt_cuda.hpp"
#include "core/real/cuda/gpt_cuda_blas.hpp"
#include "core/real/cuda/gpt_cuda_device.hpp"
#include "core/workload/model_config.hpp"

namespace {

namespace cuda = asteria::real::cuda;
using asteria::workload::ModelConfig;

bool skip_without_device(benchmark::State& state) {
  const cuda::DeviceInfo info = cuda::query_devices();
  if (info.count > 0) return false;
  state.SkipWithError(("no CUDA device: " + info.reason).c_str());
  return true;
}

// The shipped models from about 3 M to 100 M parameters (experiments/models).
constexpr const char* kModels[] = {"gpt-mini", "gpt-25m", "gpt-100m"};

ModelConfig sized_config(int size, int batch) {
  ModelConfig c = asteria::workload::find_model_config(kModels[size]);
  c.micro_batch = batch;
  return c;
}

void BM_CublasSgemmPeak(benchmark::State& state) {
  if (skip_without_device(state)) return;
  const std::int64_t n = state.range(0);
  const auto elements = static_cast<std::size_t>(n * n);
  cuda::DeviceArray<float> a(elements), b(elements), c(elements);
  std::vector<float> host(elements);
  std::mt19937 gen(3);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (float& x : host) x = dist(gen);  // random data: zeros run faster than real inputs
  cuda::check_cuda(cudaMemcpy(a.data(), host.data(), elements * sizeof(float), cudaMemcpyHostToDevice), "copy A");
  cuda::check_cuda(cudaMemcpy(b.data(), host.data(), elements * sizeof(float), cudaMemcpyHostToDevice), "copy B");
  const cuda::CudaContext context;
  cudaEvent_t start = nullptr, stop = nullptr;
  cuda::check_cuda(cudaEventCreate(&start), "event");
  cuda::check_cuda(cudaEventCreate(&stop), "event");
  auto product = [&] {
    cuda::blas::gemm(context.blas(), n, n, n, 1.0f, {a.data(), n}, {b.data(), n}, 0.0f, c.data(), n);
  };
  product();  // warm-up: handle workspace, kernel selection
  context.synchronize("warm-up");
  for (auto _ : state) {
    cuda::check_cuda(cudaEventRecord(start, context.stream()), "record");
    product();
    cuda::check_cuda(cudaEventRecord(stop, context.stream()), "record");
    cuda::check_cuda(cudaEventSynchronize(stop), "synchronize");
    float ms = 0.0f;
    cuda::check_cuda(cudaEventElapsedTime(&ms, start, stop), "elapsed");
    state.SetIterationTime(ms * 1e-3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * static_cast<double>(n) * n * n * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_CublasSgemmPeak)->Arg(8192)->Unit(benchmark::kMillisecond)->UseManualTime();

void BM_GptCudaForwardBackward(benchmark::State& state) {
  if (skip_without_device(state)) return;
  const int size = static_cast<int>(state.range(0));
  const int batch = static_cast<int>(state.range(1));
  const ModelConfig c = sized_config(size, batch);
  cuda::GptCuda gpt(c, 1);
  std::mt19937 gen(5);
  std::uniform_int_distribution<asteria::model::TokenId> byte(0, 255);
  std::vector<asteria::model::TokenId> tokens(static_cast<std::size_t>(batch * (c.sequence_length + 1)));
  for (auto& t : tokens) t = byte(gen);
  gpt.forward_backward(tokens, batch);  // sizes the workspace
  for (auto _ : state) benchmark::DoNotOptimize(gpt.forward_backward(tokens, batch));
  const int length = static_cast<int>(c.sequence_length);
  state.SetLabel(c.name);
  state.counters["GFLOP/s"] =
      benchmark::Counter(gpt.step_flops(batch, length) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["tokens/s"] =
      benchmark::Counter(static_cast<double>(batch) * length, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["parameters"] = static_cast<double>(gpt.parameter_count());
}
BENCHMARK(BM_GptCudaForwardBackward)
    ->Args({0, 8})
    ->Args({0, 64})
    ->Args({1, 16})
    ->Args({2, 8})
    ->Args({2, 32})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();

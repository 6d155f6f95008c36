// The CUDA backend of the optimizer math (core/real/cuda/cuda_device) against what bounds it, side
// by side in one run on one device:
//   BM_DeviceCopy        cudaMemcpy device to device: the measured HBM bandwidth (bytes read +
//                        written per second), the ceiling of every memory-bound operation
//   BM_Rule/<rule>       one element-wise rule (core/ops/rules.hpp) over 2^26 elements:
//                        GB/s (bytes each element reads and writes) and fraction_of_copy
//   BM_Gemm, BM_Syrk     the device's product operations and the same cuBLAS call made directly,
//                        interleaved: op_ms, cublas_ms and of_cublas = cublas_ms / op_ms
//   BM_Norm, BM_CheckFinite  the reductions, as GB/s and fraction_of_copy
//   BM_OptimizerStep     one optimizer's whole per-step math on one block (accumulate + apply,
//                        no refresh), through TensorOptimizer on the device: milliseconds
// Times come from CUDA events around many launches (manual time). Without a CUDA device every
// benchmark reports an error and times nothing.
#include <benchmark/benchmark.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "core/ops/rules.hpp"
#include "core/optim/tensor_optimizer.hpp"
#include "core/real/cuda/cuda_device.hpp"
#include "core/real/cuda/device.hpp"

namespace {

namespace cuda = asteria::real::cuda;
namespace ops = asteria::ops;
namespace linalg = asteria::linalg;
using linalg::index;

constexpr index kElements = index{1} << 26;  // 256 MiB per float operand: far beyond the L2

bool skip_without_device(benchmark::State& state) {
  const cuda::DeviceInfo info = cuda::query_devices();
  if (info.count > 0) return false;
  state.SkipWithError(("no CUDA device: " + info.reason).c_str());
  return true;
}

// Seconds per call of `body` (device work on `stream`), from events around `reps` calls.
double seconds_per_call(cudaStream_t stream, int reps, const std::function<void()>& body) {
  body();  // warm
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start, stream);
  for (int r = 0; r < reps; ++r) body();
  cudaEventRecord(stop, stream);
  cudaEventSynchronize(stop);
  float ms = 0.0f;
  cudaEventElapsedTime(&ms, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms * 1e-3 / reps;
}

cudaStream_t stream_of(cuda::CudaDevice& device) { return static_cast<cudaStream_t>(device.stream()); }

ops::Buffer filled(cuda::CudaDevice& device, index rows, index cols, float low, float high) {
  std::mt19937 gen(static_cast<unsigned>(rows * 7 + cols));
  std::uniform_real_distribution<float> dist(low, high);
  std::vector<float> host(static_cast<std::size_t>(rows * cols));
  for (float& x : host) x = dist(gen);
  ops::Buffer b = device.matrix<float>(rows, cols);
  device.upload<float>(linalg::ConstMatrixView<float>(host.data(), rows, cols), b.view<float>());
  return b;
}

void BM_DeviceCopy(benchmark::State& state, double* measured) {
  if (skip_without_device(state)) return;
  cuda::CudaDevice device;
  ops::Buffer a = filled(device, 1, kElements, 0, 1), b = device.matrix<float>(1, kElements);
  const std::size_t bytes = static_cast<std::size_t>(kElements) * sizeof(float);
  double seconds = 0;
  for (auto _ : state) {
    seconds = seconds_per_call(stream_of(device), 20, [&] {
      cudaMemcpyAsync(b.ref().data, a.ref().data, bytes, cudaMemcpyDeviceToDevice, stream_of(device));
    });
    state.SetIterationTime(seconds);
  }
  *measured = 2.0 * static_cast<double>(bytes) / seconds;
  state.counters["GBps"] = *measured / 1e9;
}

// Bytes a rule moves per element: each operand read, written, or both.
template <class Rule>
double bytes_per_element() {
  double bytes = 0;
  for (const ops::OperandSpec& s : Rule::operands) bytes += (s.access == ops::Access::read_write ? 2.0 : 1.0) * sizeof(float);
  return bytes;
}

template <class Rule, std::size_t... K>
void run_rule(cuda::CudaDevice& device, const ops::Flag& flag, const Rule& rule, std::vector<ops::Buffer>& operands,
              std::index_sequence<K...>) {
  auto view = [&](auto k) {
    if constexpr (Rule::operands[decltype(k)::value].access == ops::Access::read)
      return linalg::ConstMatrixView<float>(operands[k].template view<float>());
    else
      return operands[k].template view<float>();
  };
  if constexpr (Rule::kind == ops::RuleKind::map) device.map(rule, view(std::integral_constant<std::size_t, K>{})...);
  else if constexpr (Rule::kind == ops::RuleKind::guarded) device.update(flag, rule, view(std::integral_constant<std::size_t, K>{})...);
  else device.checked_write(flag, rule, view(std::integral_constant<std::size_t, K>{})...);
}

template <class Rule>
void BM_Rule(benchmark::State& state, Rule rule, const double* copy_bandwidth) {
  if (skip_without_device(state)) return;
  cuda::CudaDevice device;
  std::vector<ops::Buffer> operands;
  for (const ops::OperandSpec& s : Rule::operands) {
    (void)s;
    operands.push_back(filled(device, 1, kElements, 0.05f, 1.0f));  // positive: square roots stay real
  }
  const ops::Flag flag = device.flag();
  double seconds = 0;
  for (auto _ : state) {
    seconds = seconds_per_call(stream_of(device), 20, [&] {
      run_rule(device, flag, rule, operands, std::make_index_sequence<Rule::operands.size()>{});
    });
    state.SetIterationTime(seconds);
  }
  const double bandwidth = bytes_per_element<Rule>() * static_cast<double>(kElements) / seconds;
  state.counters["GBps"] = bandwidth / 1e9;
  if (*copy_bandwidth > 0) state.counters["fraction_of_copy"] = bandwidth / *copy_bandwidth;
}

cublasOperation_t op_of(linalg::Op op) { return op == linalg::Op::none ? CUBLAS_OP_N : CUBLAS_OP_T; }

// C (m x n) = op(A) op(B), k inner; args: m, n, k, op_a, op_b.
void BM_Gemm(benchmark::State& state) {
  if (skip_without_device(state)) return;
  const index m = state.range(0), n = state.range(1), k = state.range(2);
  const auto op_a = state.range(3) != 0 ? linalg::Op::transpose : linalg::Op::none;
  const auto op_b = state.range(4) != 0 ? linalg::Op::transpose : linalg::Op::none;
  cuda::CudaDevice device;
  ops::Buffer a = op_a == linalg::Op::none ? filled(device, m, k, -1, 1) : filled(device, k, m, -1, 1);
  ops::Buffer b = op_b == linalg::Op::none ? filled(device, k, n, -1, 1) : filled(device, n, k, -1, 1);
  ops::Buffer c = device.matrix<float>(m, n);
  cublasHandle_t handle;
  cublasCreate(&handle);
  cublasSetStream(handle, stream_of(device));
  const float one = 1.0f, zero = 0.0f;
  double op_s = 0, cublas_s = 0;
  for (auto _ : state) {
    op_s = seconds_per_call(stream_of(device), 10, [&] {
      device.gemm<float>(1.0f, a.view<float>(), op_a, b.view<float>(), op_b, 0.0f, c.view<float>());
    });
    cublas_s = seconds_per_call(stream_of(device), 10, [&] {
      cublasSgemm(handle, op_of(op_b), op_of(op_a), static_cast<int>(n), static_cast<int>(m), static_cast<int>(k), &one,
                  static_cast<const float*>(b.ref().data), static_cast<int>(b.ref().stride),
                  static_cast<const float*>(a.ref().data), static_cast<int>(a.ref().stride), &zero,
                  static_cast<float*>(c.ref().data), static_cast<int>(n));
    });
    state.SetIterationTime(op_s);
  }
  cublasDestroy(handle);
  state.counters["op_ms"] = op_s * 1e3;
  state.counters["cublas_ms"] = cublas_s * 1e3;
  state.counters["of_cublas"] = cublas_s / op_s;
  state.counters["TFLOPs"] = 2.0 * m * n * k / op_s / 1e12;
}

// C (n x n) = A Aᵀ (A n x k), both triangles; against cublasSsyrk alone (one triangle).
void BM_Syrk(benchmark::State& state) {
  if (skip_without_device(state)) return;
  const index n = state.range(0), k = state.range(1);
  cuda::CudaDevice device;
  ops::Buffer a = filled(device, n, k, -1, 1), c = device.matrix<float>(n, n);
  cublasHandle_t handle;
  cublasCreate(&handle);
  cublasSetStream(handle, stream_of(device));
  const float one = 1.0f, zero = 0.0f;
  double op_s = 0, cublas_s = 0;
  for (auto _ : state) {
    op_s = seconds_per_call(stream_of(device), 10, [&] {
      device.syrk<float>(1.0f, a.view<float>(), linalg::Op::none, 0.0f, c.view<float>());
    });
    cublas_s = seconds_per_call(stream_of(device), 10, [&] {
      cublasSsyrk(handle, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_T, static_cast<int>(n), static_cast<int>(k), &one,
                  static_cast<const float*>(a.ref().data), static_cast<int>(k), &zero, static_cast<float*>(c.ref().data),
                  static_cast<int>(n));
    });
    state.SetIterationTime(op_s);
  }
  cublasDestroy(handle);
  state.counters["op_ms"] = op_s * 1e3;
  state.counters["cublas_ms"] = cublas_s * 1e3;
  state.counters["of_cublas"] = cublas_s / op_s;
}

void BM_Reduction(benchmark::State& state, bool norm, const double* copy_bandwidth) {
  if (skip_without_device(state)) return;
  cuda::CudaDevice device;
  ops::Buffer x = filled(device, 1, kElements, -1, 1);
  const ops::Scalar result = device.scalar();
  const ops::Flag flag = device.flag();
  double seconds = 0;
  for (auto _ : state) {
    seconds = seconds_per_call(stream_of(device), 20, [&] {
      if (norm) device.norm<float>(x.view<float>(), result);
      else device.check_finite<float>(x.view<float>(), flag);
    });
    state.SetIterationTime(seconds);
  }
  const double bandwidth = static_cast<double>(kElements) * sizeof(float) / seconds;
  state.counters["GBps"] = bandwidth / 1e9;
  if (*copy_bandwidth > 0) state.counters["fraction_of_copy"] = bandwidth / *copy_bandwidth;
}

// One block's accumulate + apply through TensorOptimizer, state in GPU memory; args: optimizer
// (0 adamw, 1 shampoo, 2 soap, 3 kl-shampoo, 4 muon), rows, cols. Steps 1..3 (the first
// refresh among them) run before timing; timed steps do no refresh (frequency 10^6).
void BM_OptimizerStep(benchmark::State& state) {
  if (skip_without_device(state)) return;
  using asteria::optim::OptimizerKind;
  const OptimizerKind kinds[] = {OptimizerKind::adamw, OptimizerKind::shampoo, OptimizerKind::soap,
                                 OptimizerKind::kl_shampoo, OptimizerKind::muon};
  const OptimizerKind kind = kinds[state.range(0)];
  const index rows = state.range(1), cols = state.range(2);
  asteria::optim::Hyperparameters hp = asteria::optim::default_hyperparameters(kind);
  hp.precondition_frequency = 1000000;
  hp.start_preconditioning_step = 1;
  hp.max_precond_dim = 1024;
  cuda::CudaDevice device;
  asteria::optim::TensorOptimizer<float> opt(kind, hp, {rows, cols}, "bench");
  std::vector<ops::Buffer> states;
  for (auto& block : opt.blocks()) {
    auto& s = block.optimizer->state();
    const auto count = static_cast<index>(s.value_count());
    states.push_back(device.matrix<float>(1, count));
    device.upload<float>(linalg::ConstMatrixView<float>(s.values().data(), 1, count), states.back().view<float>());
    s.evict();
    s.attach(std::span<float>(states.back().view<float>().data(), static_cast<std::size_t>(count)));
  }
  ops::Buffer w = filled(device, 1, rows * cols, -1, 1), g = filled(device, 1, rows * cols, -1, 1);
  const auto n = static_cast<std::size_t>(rows * cols);
  auto step = [&] {
    opt.step(device, std::span<float>(w.view<float>().data(), n), std::span<const float>(g.view<float>().data(), n));
  };
  for (int t = 0; t < 3; ++t) step();
  for (auto _ : state) state.SetIterationTime(seconds_per_call(stream_of(device), 5, step));
  state.SetLabel(std::string(to_string(kind)));
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  double copy_bandwidth = 0.0;  // set by BM_DeviceCopy, which runs first
  benchmark::RegisterBenchmark("BM_DeviceCopy", BM_DeviceCopy, &copy_bandwidth)->UseManualTime()->Iterations(3);
#define ASTERIA_BENCH_RULE(NAME, ...) \
  benchmark::RegisterBenchmark("BM_Rule/" #NAME, BM_Rule<ops::NAME<float>>, ops::NAME<float>{__VA_ARGS__}, &copy_bandwidth) \
      ->UseManualTime()->Iterations(3)
  ASTERIA_BENCH_RULE(AdamWStep, 0.9f, 0.999f, 1e-2f, 30.0f, 1e-8f, 1e-5f);
  ASTERIA_BENCH_RULE(Assign);
  ASTERIA_BENCH_RULE(FilteredGradient, 0.9f, 1.1f);
  ASTERIA_BENCH_RULE(AdamGraftDirection, 0.999f, 0.001f, 30.0f, 1e-10f);
  ASTERIA_BENCH_RULE(ShampooDescent, 1e-2f, 1e-4f);
  ASTERIA_BENCH_RULE(SoapDirection, 0.95f, 0.95f, 1e-8f);
  ASTERIA_BENCH_RULE(SoapMoments, 0.95f, 0.95f);
  ASTERIA_BENCH_RULE(DescentThenDecay, 3e-3f, 0.99997f);
  ASTERIA_BENCH_RULE(MomentumLerp, 0.9f);
  ASTERIA_BENCH_RULE(MuonMomentum, 0.95f, true);
  ASTERIA_BENCH_RULE(MuonDescent, 0.9998f, 0.02f);
#undef ASTERIA_BENCH_RULE
  benchmark::RegisterBenchmark("BM_Norm", BM_Reduction, true, &copy_bandwidth)->UseManualTime()->Iterations(3);
  benchmark::RegisterBenchmark("BM_CheckFinite", BM_Reduction, false, &copy_bandwidth)->UseManualTime()->Iterations(3);
  // SOAP's and Shampoo's products on 1024² and 4096 x 1024 blocks (Q_Lᵀ G, G Q_R, Q D Q_Rᵀ).
  benchmark::RegisterBenchmark("BM_Gemm", BM_Gemm)
      ->ArgNames({"m", "n", "k", "ta", "tb"})
      ->Args({1024, 1024, 1024, 1, 0})
      ->Args({1024, 1024, 1024, 0, 0})
      ->Args({1024, 1024, 1024, 0, 1})
      ->Args({4096, 1024, 4096, 1, 0})
      ->Args({4096, 1024, 1024, 0, 0})
      ->Args({4096, 1024, 1024, 0, 1})
      ->UseManualTime()
      ->Iterations(3);
  benchmark::RegisterBenchmark("BM_Syrk", BM_Syrk)
      ->ArgNames({"n", "k"})
      ->Args({1024, 1024})
      ->Args({1024, 4096})
      ->Args({4096, 1024})
      ->UseManualTime()
      ->Iterations(3);
  benchmark::RegisterBenchmark("BM_OptimizerStep", BM_OptimizerStep)
      ->ArgNames({"optimizer", "rows", "cols"})
      ->ArgsProduct({{0, 1, 2, 3, 4}, {1024, 4096}, {1024}})
      ->UseManualTime()
      ->Iterations(2)
      ->Unit(benchmark::kMillisecond);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

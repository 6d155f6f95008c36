// Throughput of the CPU transformer (core/model) against the SGEMM it is built on, side by side
// in one run:
//   BM_SgemmPeak           a large square SGEMM: the machine's OpenBLAS peak, for MFU
//   BM_ModelShapedGemms    every matrix product one forward + backward of the model performs, as
//                          plain SGEMM calls (weights: forward, input gradient, weight gradient;
//                          attention: QKᵀ, PV and their four backward products per sequence and
//                          head): the step's SGEMM-bound time
//   BM_GptForwardBackward  the model's forward + backward
// Counters: GFLOP/s (model FLOPs, Gpt::step_flops, for the model; nominal 2mnk for GEMMs) and
// tokens/s. Matmul efficiency = BM_ModelShapedGemms time / BM_GptForwardBackward time (target
// >= 0.5); MFU = model GFLOP/s / peak GFLOP/s. Model: gpt-mini, batch 8 unless --benchmark_filter
// picks other arguments; threads: OPENBLAS_NUM_THREADS.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "core/linalg/blas.hpp"
#include "core/model/gpt.hpp"
#include "core/workload/model_config.hpp"

namespace {

using asteria::linalg::Matrix;
using asteria::linalg::Op;
using asteria::linalg::index;

struct GemmShape {
  index m, n, k;
  Op a = Op::none, b = Op::none;
};

asteria::workload::ModelConfig mini(int batch) {
  asteria::workload::ModelConfig c = asteria::workload::find_model_config("gpt-mini");
  c.micro_batch = batch;
  return c;
}

// The products of one forward + backward, by shape: Y = X Wᵀ, dX = dY W, dW = dYᵀ X per weight;
// per sequence and head S = Q Kᵀ, O = P V, and dP = dO Vᵀ, dV = Pᵀ dO, dQ = dS K, dK = dSᵀ Q.
std::vector<GemmShape> model_gemms(const asteria::model::Gpt<float>& gpt, int batch) {
  const auto& c = gpt.config();
  const index tokens = batch * c.sequence_length;
  std::vector<GemmShape> shapes;
  for (std::size_t i = 0; i < gpt.tensor_count(); ++i) {
    const auto& w = gpt.tensor(i);
    if (w.order != 2 || w.name == "embedding") continue;  // the embedding is a gather
    shapes.push_back({tokens, w.rows, w.cols, Op::none, Op::transpose});
    shapes.push_back({tokens, w.cols, w.rows});
    shapes.push_back({w.rows, w.cols, tokens, Op::transpose, Op::none});
  }
  if (c.tied_embeddings) {  // the head reuses the embedding: its three products
    shapes.push_back({tokens, c.vocab, c.d_model, Op::none, Op::transpose});
    shapes.push_back({tokens, c.d_model, c.vocab});
    shapes.push_back({c.vocab, c.d_model, tokens, Op::transpose, Op::none});
  }
  const index L = c.sequence_length, hd = c.head_dim();
  for (index layer = 0; layer < c.layers; ++layer)
    for (index s = 0; s < batch * c.heads; ++s) {
      shapes.push_back({L, L, hd, Op::none, Op::transpose});
      shapes.push_back({L, hd, L});
      shapes.push_back({L, L, hd, Op::none, Op::transpose});
      shapes.push_back({L, hd, L, Op::transpose, Op::none});
      shapes.push_back({L, hd, L});
      shapes.push_back({L, hd, L, Op::transpose, Op::none});
    }
  return shapes;
}

struct GemmOperands {
  Matrix<float> a, b, c;
  GemmShape shape;
};

std::vector<GemmOperands> operands(const std::vector<GemmShape>& shapes) {
  std::mt19937 gen(3);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<GemmOperands> out;
  for (const GemmShape& s : shapes) {
    GemmOperands o{s.a == Op::none ? Matrix<float>(s.m, s.k) : Matrix<float>(s.k, s.m),
                   s.b == Op::none ? Matrix<float>(s.k, s.n) : Matrix<float>(s.n, s.k), Matrix<float>(s.m, s.n), s};
    for (float& x : o.a.values()) x = dist(gen);
    for (float& x : o.b.values()) x = dist(gen);
    out.push_back(std::move(o));
  }
  return out;
}

void BM_SgemmPeak(benchmark::State& state) {
  const index n = state.range(0);
  auto ops = operands({{n, n, n}});
  for (auto _ : state) {
    asteria::linalg::gemm<float>(1.0f, ops[0].a.view(), Op::none, ops[0].b.view(), Op::none, 0.0f, ops[0].c.view());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * n * n * n * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_SgemmPeak)->Arg(2048)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ModelShapedGemms(benchmark::State& state) {
  const int batch = static_cast<int>(state.range(0));
  const asteria::model::Gpt<float> gpt(mini(batch), 1);
  auto ops = operands(model_gemms(gpt, batch));
  double flops = 0.0;
  for (const auto& o : ops) flops += 2.0 * o.shape.m * o.shape.n * o.shape.k;
  for (auto _ : state) {
    for (auto& o : ops)
      asteria::linalg::gemm<float>(1.0f, o.a.view(), o.shape.a, o.b.view(), o.shape.b, 0.0f, o.c.view());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["products"] = static_cast<double>(ops.size());
}
BENCHMARK(BM_ModelShapedGemms)->Arg(8)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_GptForwardBackward(benchmark::State& state) {
  const int batch = static_cast<int>(state.range(0));
  const asteria::workload::ModelConfig c = mini(batch);
  asteria::model::Gpt<float> gpt(c, 1);
  std::mt19937 gen(5);
  std::uniform_int_distribution<asteria::model::TokenId> byte(0, 255);
  std::vector<asteria::model::TokenId> tokens(static_cast<std::size_t>(batch * (c.sequence_length + 1)));
  for (auto& t : tokens) t = byte(gen);
  gpt.forward_backward(tokens, batch);  // sizes the workspace
  for (auto _ : state) benchmark::DoNotOptimize(gpt.forward_backward(tokens, batch));
  state.counters["GFLOP/s"] = benchmark::Counter(gpt.step_flops(batch, static_cast<int>(c.sequence_length)) * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(batch * c.sequence_length),
                                                  benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_GptForwardBackward)->Arg(8)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();

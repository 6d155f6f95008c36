// The host optimizer math at the sizes users compare it with other implementations
// (bench/compare-references.sh runs this beside torch, DeepSpeed, Distributed Shampoo and
// nikhilvyas/SOAP):
//   BM_AdamWUpdate/elements:E/threads:T   AdamW's update of E fp32 elements (one pass, core/ops),
//                                         items_per_second = elements per second
//   BM_ShampooStep, BM_SoapStep           one step without a refresh (accumulate + apply, Adam
//     /rows:R/cols:C/threads:T            grafting for Shampoo) of an R x C fp32 parameter in
//                                         blocks of at most 1024
//   BM_ShampooRefresh, BM_SoapRefresh     one refresh of every block: snapshot, the job (Shampoo:
//                                         inverse fourth roots by eigendecomposition; SOAP: the
//                                         warm power step and QR after the first full eigh) and
//                                         the publish (SOAP rotates its moments); as the runtime's
//                                         host workers do it, blocks side by side when there are
//                                         at least as many as threads
// T threads: the CPU device splits its loops over T (a fork-join pool) and OpenBLAS runs T.
// The program first makes OpenBLAS use this processor's kernels (as asteria does).
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <vector>

#include "core/linalg/blas_library.hpp"
#include "core/ops/cpu_device.hpp"
#include "core/optim/adamw.hpp"
#include "core/optim/tensor_optimizer.hpp"
#include "core/real/blas_kernel_choice.hpp"
#include "core/real/fork_join_pool.hpp"

namespace {

namespace optim = asteria::optim;
namespace ops = asteria::ops;
namespace linalg = asteria::linalg;
using linalg::index;

std::vector<float> random_floats(std::size_t n, unsigned seed, float scale) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

// A CPU device on `threads` threads, and OpenBLAS on as many.
struct Host {
  explicit Host(int threads)
      : pool(threads > 1 ? std::make_unique<asteria::real::ForkJoinPool>(threads) : nullptr), device(pool.get()) {
    openblas_set_num_threads(threads);
  }
  std::unique_ptr<asteria::real::ForkJoinPool> pool;
  ops::CpuDevice device;
};

void BM_AdamWUpdate(benchmark::State& state) {
  const index n = state.range(0);
  Host host(static_cast<int>(state.range(1)));
  optim::AdamWBlock<float> block(optim::default_hyperparameters(optim::OptimizerKind::adamw), 1, n);
  std::vector<float> w = random_floats(static_cast<std::size_t>(n), 1, 1.0f);
  const std::vector<float> g = random_floats(static_cast<std::size_t>(n), 2, 1e-2f);
  const linalg::MatrixView<float> weights(w.data(), 1, n);
  const linalg::ConstMatrixView<float> grad(g.data(), 1, n);
  optim::Step t = 0;
  if (!block.apply(host.device, weights, grad, ++t)) state.SkipWithError("non-finite update");  // touches every page
  for (auto _ : state)
    if (!block.apply(host.device, weights, grad, ++t)) state.SkipWithError("non-finite update");
  state.SetItemsProcessed(state.iterations() * n);
}

optim::Hyperparameters settings(optim::OptimizerKind kind) {
  optim::Hyperparameters hp = optim::default_hyperparameters(kind);
  hp.max_precond_dim = 1024;
  hp.precondition_frequency = 1000000;  // the timed steps refresh nothing
  hp.start_preconditioning_step = 1;     // Shampoo: roots from the first step on, as DS after its start
  return hp;
}

// A tensor optimizer past its first refresh (and, for `warm`, past a second one, so SOAP's next
// refresh is its steady warm power step).
struct Warmed {
  Warmed(optim::OptimizerKind kind, index rows, index cols, ops::Device& device)
      : opt(kind, settings(kind), {rows, cols}, "bench"),
        w(random_floats(static_cast<std::size_t>(rows * cols), 3, 1.0f)),
        g(random_floats(static_cast<std::size_t>(rows * cols), 4, 1e-2f)) {
    for (int t = 0; t < 3; ++t) step(device);
  }
  void step(ops::Device& device) { opt.step(device, w, g); }
  optim::TensorOptimizer<float> opt;
  std::vector<float> w, g;
};

void BM_Step(benchmark::State& state, optim::OptimizerKind kind) {
  Host host(static_cast<int>(state.range(2)));
  Warmed warmed(kind, state.range(0), state.range(1), host.device);
  for (auto _ : state) warmed.step(host.device);
}

void BM_Refresh(benchmark::State& state, optim::OptimizerKind kind) {
  const int threads = static_cast<int>(state.range(2));
  Host host(threads);
  Warmed warmed(kind, state.range(0), state.range(1), host.device);
  auto& blocks = warmed.opt.blocks();
  // As the runtime's host workers run them: every job's parts (its factors) are works of their
  // own; with at least as many parts as threads they run side by side, each on one BLAS thread,
  // otherwise one after another on all of them.
  std::size_t parts = 0;
  for (auto& block : blocks)
    if (auto job = block.optimizer->snapshot(host.device, 1)) parts += static_cast<std::size_t>(job->parts());
  const bool side_by_side = host.pool != nullptr && static_cast<int>(parts) >= threads;
  if (side_by_side) openblas_set_num_threads(1);
  // One refresh of every block, as the service makes it: snapshot, run (part by part), publish.
  auto refresh_all = [&](optim::Step t) {
    std::vector<std::unique_ptr<optim::RefreshJob<float>>> jobs;
    std::vector<std::pair<std::size_t, int>> work;  // (job, part)
    for (auto& block : blocks) {
      jobs.push_back(block.optimizer->snapshot(host.device, t));
      for (int p = 0; p < jobs.back()->parts(); ++p) work.emplace_back(jobs.size() - 1, p);
    }
    std::vector<int> failed(work.size(), 0);
    auto run = [&](std::int64_t w) {
      const auto [job, part] = work[static_cast<std::size_t>(w)];
      failed[static_cast<std::size_t>(w)] = jobs[job]->run_part(part).ok() ? 0 : 1;
    };
    if (side_by_side) host.pool->run(static_cast<std::int64_t>(work.size()), run);
    else
      for (std::size_t w = 0; w < work.size(); ++w) run(static_cast<std::int64_t>(w));
    for (int f : failed)
      if (f != 0) state.SkipWithError("refresh failed");
    for (std::size_t b = 0; b < jobs.size(); ++b) blocks[b].optimizer->publish(host.device, *jobs[b]);
  };
  refresh_all(4);  // SOAP: past its first (full) basis, later ones are warm
  optim::Step t = 5;
  for (auto _ : state) refresh_all(t++);
  state.SetLabel(side_by_side ? "factors side by side, 1 BLAS thread each" : "factors in turn");
}

}  // namespace

int main(int argc, char** argv) {
  asteria::real::select_blas_kernels(argv);
  benchmark::Initialize(&argc, argv);
  benchmark::AddCustomContext("blas", asteria::linalg::blas_kernels().describe());
  benchmark::AddCustomContext("cpu_vector_isa", std::string(ops::to_string(ops::detect_cpu_isa())));
  benchmark::RegisterBenchmark("BM_AdamWUpdate", BM_AdamWUpdate)
      ->ArgNames({"elements", "threads"})
      ->ArgsProduct({{10000000, 100000000}, {1, 2}})
      ->Unit(benchmark::kMillisecond)
      ->UseRealTime();
  using optim::OptimizerKind;
  const std::vector<std::vector<std::int64_t>> shapes{{1024, 4096}, {1024}, {1, 2}};
  for (auto [name, kind, refresh] : {std::tuple{"BM_ShampooStep", OptimizerKind::shampoo, false},
                                     std::tuple{"BM_SoapStep", OptimizerKind::soap, false},
                                     std::tuple{"BM_ShampooRefresh", OptimizerKind::shampoo, true},
                                     std::tuple{"BM_SoapRefresh", OptimizerKind::soap, true}}) {
    auto* b = refresh ? benchmark::RegisterBenchmark(name, BM_Refresh, kind) : benchmark::RegisterBenchmark(name, BM_Step, kind);
    b->ArgNames({"rows", "cols", "threads"})->ArgsProduct(shapes)->Unit(benchmark::kMillisecond)->UseRealTime();
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

// Data-parallel training, one plan on every backend: n ranks of the step driver (values,
// deterministic publication, S = 0, 1 and 5), each on its own data, all-reduce their gradients
// and must end as bitwise replicas — weights after every step and every block's serialized
// optimizer state — both on the real backend (ranks as threads, LocalCommWorld) and in the
// data-true simulation, and the two backends must agree bit for bit. With 2 ranks per node,
// 4 ranks make two nodes, so the hierarchical refresh exchange (share_refreshes) crosses nodes.
// Sharing refreshes changes no bit against every rank computing them all, and sharding (ZeRO-1's
// state, ZeRO-2's gradients too, FSDP's weights too) gives the unsharded weights, with each
// block's state on its owner equal to the unsharded replicas'.
//
// The controls: each rank's gradients differ before the reduce, ranks that train alone on their
// own data diverge, and at S = 0 the ranks run exactly the synchronous optimizer on the rank-order
// fp32 average of their gradients — so the replicas' equality is the reduce's doing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <exception>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "core/plan/schedule.hpp"
#include "core/plan/step_plan.hpp"
#include "core/real/local_comm.hpp"
#include "core/real/real_platform.hpp"
#include "sim/simulation.hpp"
#include "tests/driver/driver_test_support.hpp"
#include "tests/sim/in_child.hpp"
#include "tests/sim/tiny_profile.hpp"

namespace asteria::sim {
namespace {

using optim::OptimizerKind;
using runtime::test::bitwise_equal;
using runtime::test::Weights;

constexpr int kSteps = 12;
constexpr int kRanksPerNode = 2;  // the tiny profile's units per node as well

// Three layers: two matrices cut into 16 x 16 and 8 x 16 blocks, and a vector (AdamW).
runtime::SyntheticModelSpec dp_stack(int data_rank) {
  runtime::SyntheticModelSpec spec;
  runtime::LayerSpec bias = runtime::make_layer("bias", 1, 16, 1e4, 4);
  bias.vector = true;
  spec.layers = {runtime::make_layer("layer0", 24, 16, 2e6, 4), runtime::make_layer("layer1", 16, 32, 3e6, 4),
                 bias};
  spec.gradients.seed = 11;
  spec.gradients.rank = 3;
  spec.gradients.noise = 0.2;
  spec.gradients.data_rank = data_rank;
  return spec;
}

optim::Hyperparameters hyperparameters(OptimizerKind kind) {
  optim::Hyperparameters hp = optim::default_hyperparameters(kind);
  hp.max_precond_dim = 16;
  hp.precondition_frequency = 3;
  return hp;
}

struct Case {
  OptimizerKind kind = OptimizerKind::soap;
  int ranks = 2;
  int staleness = 0;
  bool share_refreshes = true;
  plan::Parallelism parallelism = plan::Parallelism::ddp;
  platform::DType reduce_dtype = platform::DType::fp32;
  bool reshard_after_use = true;  // fsdp: false keeps a unit's gathered weights until the step ends
  double bucket_bytes = 2048.0;    // see driver_options
};

std::string describe(const Case& c) {
  std::string name(optim::to_string(c.kind));
  std::erase(name, '-');
  return name + "_n" + std::to_string(c.ranks) + "_S" + std::to_string(c.staleness) +
         (plan::shards_state(c.parallelism) ? "_" + std::string(plan::to_string(c.parallelism))
          : c.share_refreshes               ? "_shared"
                                            : "_unshared");
}

runtime::DriverOptions driver_options(const Case& c) {
  runtime::DriverOptions o = runtime::test::full_numerics(c.staleness);  // deterministic publication
  o.schedule.data_parallel_ranks = c.ranks;
  // Gradient buckets of >= 2048 B in gradient order: {bias (64 B), layer1 (2048 B)}, {layer0}: a
  // reduce of two layers' gradients as one buffer, and one of a single layer.
  o.schedule.bucket_bytes = c.bucket_bytes;
  o.share_refreshes = c.share_refreshes;
  o.schedule.parallelism = c.parallelism;
  o.schedule.reduce_dtype = c.reduce_dtype;
  o.schedule.reshard_after_use = c.reshard_after_use;
  return o;
}

// What one rank ends with.
struct RankRun {
  std::string plan;
  std::vector<Weights<float>> weights;         // [step - 1][layer]
  std::vector<bool> holds;                     // [block]
  std::vector<std::vector<std::byte>> states;  // [block]: serialized after finish(); empty where not held
  std::vector<std::string> labels;             // [block]
  runtime::ServiceTotals totals;               // this rank's refreshes
};
using RankRuns = std::vector<RankRun>;  // [rank]

RankRun train(platform::Platform& platform, const Case& c, int rank) {
  runtime::SyntheticModel<float> model(dp_stack(rank));
  runtime::StepDriver<float> driver(platform, model, c.kind, hyperparameters(c.kind), driver_options(c));
  RankRun out;
  out.plan = plan::to_text(driver.plan());
  for (int t = 1; t <= kSteps; ++t) {
    driver.run_step();
    driver.gather_weights();  // fsdp: the blocks other ranks own, as their owners updated them
    out.weights.push_back(runtime::test::weights_of(model));
  }
  driver.finish();
  out.totals = driver.service().totals();
  for (std::size_t b = 0; b < driver.block_count(); ++b) {
    out.holds.push_back(driver.holds_block(b));
    out.states.push_back(driver.holds_block(b) ? driver.block_state(b).serialize() : std::vector<std::byte>{});
    out.labels.push_back(driver.block_label(b));
  }
  return out;
}

real::RealPlatformOptions real_options(platform::Comm* comm) {
  real::RealPlatformOptions o;
  o.host_threads = 1;
  o.device_model = {1e15, 0.0, 0.0};  // near-instant modelled kernels: the test stays fast
  o.comm = comm;
  return o;
}

// n ranks on the real backend: a thread each, with its own platform over the in-process world.
RankRuns run_real(const Case& c) {
  RankRuns out(static_cast<std::size_t>(c.ranks));
  std::vector<std::string> errors(static_cast<std::size_t>(c.ranks));
  {
    real::LocalCommWorld world(c.ranks, kRanksPerNode);
    std::vector<std::thread> threads;
    for (int r = 0; r < c.ranks; ++r)
      threads.emplace_back([&, r] {
        const auto i = static_cast<std::size_t>(r);
        try {
          real::RealPlatform platform(real_options(&world.rank(r)));
          out[i] = train(platform, c, r);
        } catch (const std::exception& e) {
          errors[i] = e.what();
        }
      });
    for (std::thread& t : threads) t.join();
  }  // every thread of the real backend has ended before a child is forked
  for (int r = 0; r < c.ranks; ++r)
    EXPECT_EQ(errors[static_cast<std::size_t>(r)], "") << "real rank " << r << " threw";
  return out;
}

// The same n ranks as units of a data-true simulation (call in a child process).
RankRuns run_simulated(const Case& c) {
  SimulationOptions o = testing::tiny_options(platform::Numerics::values);
  o.units = c.ranks;
  o.host_workers_per_unit = 1;
  Simulation simulation(o);
  EXPECT_EQ(simulation.nodes(), (c.ranks + kRanksPerNode - 1) / kRanksPerNode);
  RankRuns out(static_cast<std::size_t>(c.ranks));
  simulation.run([&](int unit, platform::Platform& platform) {
    out[static_cast<std::size_t>(unit)] = train(platform, c, unit);
  });
  EXPECT_GT(simulation.now(), 0.0);
  return out;
}

// The first step (1-based) after which the weights differ, and the layer; {0, 0} when they agree.
std::pair<int, std::size_t> first_difference(const std::vector<Weights<float>>& a, const std::vector<Weights<float>>& b) {
  const std::size_t steps = std::min(a.size(), b.size());
  for (std::size_t s = 0; s < steps; ++s) {
    if (a[s].size() != b[s].size()) return {static_cast<int>(s + 1), 0};
    for (std::size_t l = 0; l < a[s].size(); ++l)
      if (!bitwise_equal(a[s][l], b[s][l])) return {static_cast<int>(s + 1), l};
  }
  if (a.size() != b.size()) return {static_cast<int>(steps + 1), 0};
  return {0, 0};
}

void expect_same_weights(const RankRun& a, const RankRun& b, const std::string& what) {
  const auto [step, layer] = first_difference(a.weights, b.weights);
  EXPECT_EQ(step, 0) << what << ": the weights first differ after step " << step << ", layer " << layer;
}

// Block states are compared where both hold them (sharded: the owner only).
void expect_same_states(const RankRun& a, const RankRun& b, const std::string& what) {
  ASSERT_EQ(a.states.size(), b.states.size()) << what;
  for (std::size_t blk = 0; blk < a.states.size(); ++blk) {
    if (!a.holds[blk] || !b.holds[blk]) continue;
    EXPECT_FALSE(a.states[blk].empty()) << what << ": " << a.labels[blk];
    EXPECT_TRUE(a.states[blk] == b.states[blk]) << what << ": the state of " << a.labels[blk] << " differs";
  }
}

// Every rank of `run` is a replica of rank 0: the same weights after every step, the same plan
// shape, and (unsharded) the same state of every block.
void expect_replicas(const RankRuns& run, const std::string& backend) {
  ASSERT_FALSE(run.empty());
  for (std::size_t r = 0; r < run.size(); ++r) {
    // Refreshes were published (the preconditioners, shared or not, were in play), none failed.
    EXPECT_GT(run[r].totals.published, 0) << backend << " rank " << r;
    EXPECT_EQ(run[r].totals.failures, 0) << backend << " rank " << r;
  }
  for (std::size_t r = 1; r < run.size(); ++r) {
    const std::string what = backend + " rank " + std::to_string(r) + " vs rank 0";
    ASSERT_EQ(run[r].weights.size(), static_cast<std::size_t>(kSteps)) << what;
    expect_same_weights(run[r], run[0], what);
    expect_same_states(run[r], run[0], what);
  }
}

// Real and simulated rank by rank: the same plan, weights after every step, and block states.
void expect_same_runs(const RankRuns& real, const RankRuns& simulated) {
  ASSERT_EQ(real.size(), simulated.size());
  for (std::size_t r = 0; r < real.size(); ++r) {
    const std::string what = "rank " + std::to_string(r) + ", real vs simulated";
    EXPECT_EQ(real[r].plan, simulated[r].plan) << what;
    EXPECT_EQ(real[r].holds, simulated[r].holds) << what;
    expect_same_weights(real[r], simulated[r], what);
    expect_same_states(real[r], simulated[r], what);
  }
}

// ---------------------------------------------------------------------------------------------
// Replicas on both backends, and the backends equal.

using Param = std::tuple<OptimizerKind, int, int, bool>;  // kind, ranks, staleness, share_refreshes

class DataParallelConformance : public ::testing::TestWithParam<Param> {};

TEST_P(DataParallelConformance, RanksAreBitwiseReplicasAndRealEqualsDataTrueSimulation) {
  const auto [kind, ranks, staleness, share] = GetParam();
  const Case c{kind, ranks, staleness, share};
  const RankRuns real = run_real(c);
  ASSERT_FALSE(HasFailure());
  EXPECT_NE(real[0].plan.find("bucket 0 layers=1..2\nbucket 1 layers=0..0\n"), std::string::npos) << real[0].plan;
  expect_replicas(real, "real");
  testing::run_in_child([&] {
    const RankRuns simulated = run_simulated(c);
    expect_replicas(simulated, "simulated");
    expect_same_runs(real, simulated);
  });
}

INSTANTIATE_TEST_SUITE_P(Ranks, DataParallelConformance,
                         ::testing::Combine(::testing::Values(OptimizerKind::soap, OptimizerKind::shampoo),
                                            ::testing::Values(2, 4), ::testing::Values(0, 1, 5),
                                            ::testing::Bool()),
                         [](const ::testing::TestParamInfo<Param>& p) {
                           return describe({std::get<0>(p.param), std::get<1>(p.param),
                                            std::get<2>(p.param), std::get<3>(p.param)});
                         });

// ---------------------------------------------------------------------------------------------
// ZeRO-1, ZeRO-2, FSDP: the sharded run's weights are the unsharded run's, bit for bit, on both
// backends (gradients reduce-scattered add in the same rank order as all-reduced ones; weights
// gathered are copied); each block's state, held by its owner alone, is the unsharded replicas'
// state.

using ShardParam = std::tuple<OptimizerKind, int, int, plan::Parallelism>;  // kind, ranks, staleness, how

class DataParallelSharded : public ::testing::TestWithParam<ShardParam> {};

TEST_P(DataParallelSharded, ShardedStateGivesTheUnshardedWeightsAndOwnersHoldTheUnshardedState) {
  const auto [kind, ranks, staleness, how] = GetParam();
  const Case sharded{kind, ranks, staleness, true, how};
  const Case whole{kind, ranks, staleness, true, plan::Parallelism::ddp};
  const RankRuns real = run_real(sharded);
  const RankRuns reference = run_real(whole);
  ASSERT_FALSE(HasFailure());
  expect_replicas(reference, "real unsharded");
  // Each block is held by exactly one rank, and each rank holds some.
  for (std::size_t b = 0; b < real[0].holds.size(); ++b) {
    int holders = 0;
    for (const RankRun& r : real) holders += r.holds[b] ? 1 : 0;
    EXPECT_EQ(holders, 1) << real[0].labels[b];
  }
  for (std::size_t r = 0; r < real.size(); ++r) {
    EXPECT_NE(std::count(real[r].holds.begin(), real[r].holds.end(), true), 0) << "rank " << r << " holds no block";
    const std::string what = "real sharded rank " + std::to_string(r) + " vs unsharded";
    expect_same_weights(real[r], reference[r], what);
    expect_same_states(real[r], reference[r], what);  // where the sharded rank owns the block
  }
  expect_replicas(real, "real sharded");
  testing::run_in_child([&] {
    const RankRuns simulated = run_simulated(sharded);
    expect_replicas(simulated, "simulated sharded");
    expect_same_runs(real, simulated);
  });
}

std::string describe_sharded(const ::testing::TestParamInfo<ShardParam>& p) {
  return describe({std::get<0>(p.param), std::get<1>(p.param), std::get<2>(p.param), true, std::get<3>(p.param)});
}

INSTANTIATE_TEST_SUITE_P(Ranks, DataParallelSharded,
                         ::testing::Combine(::testing::Values(OptimizerKind::soap),
                                            ::testing::Values(2, 3, 4), ::testing::Values(1, 5),
                                            ::testing::Values(plan::Parallelism::zero1, plan::Parallelism::zero2,
                                                              plan::Parallelism::fsdp)),
                         describe_sharded);
INSTANTIATE_TEST_SUITE_P(Optimizers, DataParallelSharded,
                         ::testing::Combine(::testing::Values(OptimizerKind::shampoo, OptimizerKind::kl_shampoo),
                                            ::testing::Values(3), ::testing::Values(1),
                                            ::testing::Values(plan::Parallelism::zero2, plan::Parallelism::fsdp)),
                         describe_sharded);

// Gradients on the wire as bf16 (--reduce-dtype): every rank's bf16 values are summed in fp32 and
// rounded once, so the all-reduced (ddp), reduce-scattered (zero2) and reduce-scattered with
// gathered weights (fsdp) runs stay bitwise equal to each other, real and simulated alike; they
// differ from the fp32 run (the gradients were rounded) but stay close to it.
TEST(DataParallelReduceDtype, Bf16GradientsGiveTheSameWeightsWhateverIsSharded) {
  const Case fp32{OptimizerKind::soap, 3, 1, true};
  Case bf16 = fp32;
  bf16.reduce_dtype = platform::DType::bf16;
  const RankRuns reference = run_real(fp32);
  const RankRuns ddp = run_real(bf16);
  ASSERT_FALSE(HasFailure());
  expect_replicas(ddp, "bf16 ddp");
  EXPECT_NE(ddp[0].plan.find("reduce_dtype=bf16"), std::string::npos) << ddp[0].plan;
  const auto [step, layer] = first_difference(ddp[0].weights, reference[0].weights);
  EXPECT_EQ(step, 1) << "bf16 gradients change the first update";
  static_cast<void>(layer);
  double worst = 0.0;
  for (std::size_t l = 0; l < reference[0].weights.back().size(); ++l) {
    const auto& a = reference[0].weights.back()[l];
    const auto& b = ddp[0].weights.back()[l];
    double scale = 1e-30;
    for (float v : a) scale = std::max(scale, static_cast<double>(std::abs(v)));
    for (std::size_t k = 0; k < a.size(); ++k)
      worst = std::max(worst, std::abs(static_cast<double>(a[k]) - static_cast<double>(b[k])) / scale);
  }
  EXPECT_LT(worst, 2e-2) << "bf16 gradients after " << kSteps << " steps, relative to the largest weight";
  for (plan::Parallelism how : {plan::Parallelism::zero2, plan::Parallelism::fsdp}) {
    Case sharded = bf16;
    sharded.parallelism = how;
    const RankRuns run = run_real(sharded);
    ASSERT_FALSE(HasFailure());
    for (std::size_t r = 0; r < run.size(); ++r)
      expect_same_weights(run[r], ddp[r], std::string(plan::to_string(how)) + " bf16 rank " + std::to_string(r) + " vs ddp");
    if (how == plan::Parallelism::fsdp)
      testing::run_in_child([&] { expect_same_runs(run, run_simulated(sharded)); });
  }
}

// fsdp keeping a unit's gathered weights until the step ends (--reshard after-step): fewer
// gathers, the same weights bit for bit as the unsharded run, real and simulated.
TEST(DataParallelFsdpKept, KeptGathersGiveTheUnshardedWeights) {
  const auto gathers = [](const RankRun& run) {
    std::size_t n = 0;
    std::istringstream lines(run.plan);
    for (std::string line; std::getline(lines, line);) n += line.find(" gather ") != std::string::npos ? 1 : 0;
    return n;
  };
  // At 2 ranks and bucket 0 the units are layers {0, 1} and {2}: the forward's and the backward's
  // runs of the first are apart, gathered twice after use, once kept.
  Case per_use{OptimizerKind::soap, 2, 1, true, plan::Parallelism::fsdp};
  per_use.bucket_bytes = 0.0;
  Case kept = per_use;
  kept.reshard_after_use = false;
  const Case whole{OptimizerKind::soap, 2, 1, true, plan::Parallelism::ddp};
  const RankRuns real = run_real(kept);
  const RankRuns again = run_real(per_use);
  const RankRuns reference = run_real(whole);
  ASSERT_FALSE(HasFailure());
  EXPECT_LT(gathers(real[0]), gathers(again[0])) << real[0].plan;
  EXPECT_GT(gathers(real[0]), 0u);
  for (std::size_t r = 0; r < real.size(); ++r)
    expect_same_weights(real[r], reference[r], "fsdp after-step rank " + std::to_string(r) + " vs ddp");
  testing::run_in_child([&] { expect_same_runs(real, run_simulated(kept)); });
}

// Sharing refreshes (an owner computes, the others load its result) changes no bit against every
// rank computing every refresh.
using SharingParam = std::tuple<OptimizerKind, int, int>;  // kind, ranks, staleness

class DataParallelSharing : public ::testing::TestWithParam<SharingParam> {};

TEST_P(DataParallelSharing, SharedRefreshesChangeNoBit) {
  const auto [kind, ranks, staleness] = GetParam();
  const RankRuns shared = run_real({kind, ranks, staleness, true});
  const RankRuns unshared = run_real({kind, ranks, staleness, false});
  ASSERT_FALSE(HasFailure());
  for (std::size_t r = 0; r < shared.size(); ++r) {
    const std::string what = "rank " + std::to_string(r) + ", shared vs unshared refreshes";
    expect_same_weights(shared[r], unshared[r], what);
    expect_same_states(shared[r], unshared[r], what);
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, DataParallelSharing,
                         ::testing::Combine(::testing::Values(OptimizerKind::soap, OptimizerKind::shampoo),
                                            ::testing::Values(2, 4), ::testing::Values(0, 1, 5)),
                         [](const ::testing::TestParamInfo<SharingParam>& p) {
                           std::string name = describe({std::get<0>(p.param), std::get<1>(p.param),
                                                        std::get<2>(p.param), true});
                           return name.substr(0, name.rfind('_'));
                         });

// ---------------------------------------------------------------------------------------------
// Controls: the equality above is the reduce's doing.

TEST(DataParallelReduce, EachRanksGradientsDifferBeforeTheReduce) {
  runtime::SyntheticModel<float> rank0(dp_stack(0));
  runtime::SyntheticModel<float> rank1(dp_stack(1));
  for (std::size_t l = 0; l < rank0.layer_count(); ++l) {
    // The replicas start from the same weights...
    EXPECT_TRUE(bitwise_equal(std::vector<float>(rank0.weights(l).begin(), rank0.weights(l).end()),
                              std::vector<float>(rank1.weights(l).begin(), rank1.weights(l).end())))
        << "layer " << l;
    // ...and see different data: the gradients of step 1 differ in every layer.
    rank0.compute_gradient(l, 1);
    rank1.compute_gradient(l, 1);
    EXPECT_FALSE(bitwise_equal(std::vector<float>(rank0.gradient(l).begin(), rank0.gradient(l).end()),
                               std::vector<float>(rank1.gradient(l).begin(), rank1.gradient(l).end())))
        << "layer " << l;
  }
}

// Each rank training alone (no communicator, no reduce) on its own data: the weights part after
// the first step.
TEST(DataParallelReduce, RanksThatTrainAloneOnTheirOwnDataDiverge) {
  std::vector<RankRun> alone;
  for (int r = 0; r < 2; ++r) {
    real::RealPlatform platform(real_options(nullptr));
    alone.push_back(train(platform, {OptimizerKind::soap, 1, 0, false}, r));
  }
  const auto [step, layer] = first_difference(alone[0].weights, alone[1].weights);
  EXPECT_EQ(step, 1);
  static_cast<void>(layer);
}

// At S = 0 the ranks run the synchronous optimizer (TensorOptimizer::step per layer) on their
// gradients' average, summed in rank order in fp32 and divided by the ranks: bit for bit, weights
// after every step and the final states (where a rank holds them), with and without shared
// refreshes, and sharded (fsdp: gradients reduce-scattered, weights gathered) for every optimizer.
using ReferenceParam = std::tuple<OptimizerKind, int, bool, plan::Parallelism>;  // kind, ranks, share_refreshes, how

class DataParallelReference : public ::testing::TestWithParam<ReferenceParam> {};

TEST_P(DataParallelReference, AtStalenessZeroRanksRunTheSynchronousOptimizerOnTheAverageGradient) {
  const auto [kind, ranks, share, how] = GetParam();
  const Case c{kind, ranks, 0, share, how};
  const RankRuns run = run_real(c);
  ASSERT_FALSE(HasFailure());

  const optim::Hyperparameters hp = hyperparameters(kind);
  std::vector<std::unique_ptr<runtime::SyntheticModel<float>>> models;
  for (int r = 0; r < ranks; ++r) models.push_back(std::make_unique<runtime::SyntheticModel<float>>(dp_stack(r)));
  runtime::SyntheticModel<float>& reference = *models.front();  // its weights are the replica's
  std::vector<std::unique_ptr<optim::TensorOptimizer<float>>> tensors;
  for (std::size_t l = 0; l < reference.layer_count(); ++l) {
    const runtime::LayerSpec& spec = reference.layer(l);
    tensors.push_back(std::make_unique<optim::TensorOptimizer<float>>(
        kind, hp, runtime::tensor_shape(spec), spec.name));
  }
  std::vector<Weights<float>> expected;
  for (int t = 1; t <= kSteps; ++t) {
    for (std::size_t l = 0; l < reference.layer_count(); ++l) {
      for (auto& m : models) m->compute_gradient(l, t);
      std::vector<float> average(reference.gradient(l).size());
      for (std::size_t i = 0; i < average.size(); ++i) {
        float sum = 0.0f;
        for (const auto& m : models) sum += m->gradient(l)[i];
        average[i] = sum / static_cast<float>(ranks);
      }
      tensors[l]->step(reference.weights(l), average);
    }
    expected.push_back(runtime::test::weights_of(reference));
  }
  RankRun synchronous;
  synchronous.weights = expected;
  for (std::size_t r = 0; r < run.size(); ++r)
    expect_same_weights(run[r], synchronous, "rank " + std::to_string(r) + " vs the synchronous optimizer");

  std::vector<std::vector<std::byte>> expected_images;
  for (const auto& tensor : tensors)
    for (const auto& block : tensor->blocks()) expected_images.push_back(block.optimizer->state().serialize());
  for (std::size_t r = 0; r < run.size(); ++r) {
    ASSERT_EQ(run[r].states.size(), expected_images.size());
    for (std::size_t b = 0; b < expected_images.size(); ++b)
      EXPECT_TRUE(!run[r].holds[b] || run[r].states[b] == expected_images[b])
          << "rank " << r << ": the state of " << run[r].labels[b] << " differs from the synchronous optimizer's";
  }
}

std::string describe_reference(const ::testing::TestParamInfo<ReferenceParam>& p) {
  return describe({std::get<0>(p.param), std::get<1>(p.param), 0, std::get<2>(p.param), std::get<3>(p.param)});
}

INSTANTIATE_TEST_SUITE_P(Ranks, DataParallelReference,
                         ::testing::Combine(::testing::Values(OptimizerKind::soap, OptimizerKind::shampoo),
                                            ::testing::Values(2, 4), ::testing::Bool(),
                                            ::testing::Values(plan::Parallelism::ddp)),
                         describe_reference);
INSTANTIATE_TEST_SUITE_P(Fsdp, DataParallelReference,
                         ::testing::Combine(::testing::Values(OptimizerKind::soap, OptimizerKind::shampoo,
                                                              OptimizerKind::kl_shampoo, OptimizerKind::adamw,
                                                              OptimizerKind::muon),
                                            ::testing::Values(3), ::testing::Values(true),
                                            ::testing::Values(plan::Parallelism::fsdp)),
                         describe_reference);

}  // namespace
}  // namespace asteria::sim

#pragma once
// Shared pieces of the step-driver tests: a small synthetic stack whose layers split into full
// and remainder blocks, the synchronous reference written as a plain loop over
// TensorOptimizer::step, and platforms with simple, exact timing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/optim/hyperparameters.hpp"
#include "core/optim/tensor_optimizer.hpp"
#include "core/platform/fake/fake_platform.hpp"
#include "core/optim/shape_model.hpp"
#include "core/runtime/driver/step_driver.hpp"
#include "core/runtime/service/shadow_bound.hpp"

namespace asteria::runtime::test {

using optim::Hyperparameters;
using optim::OptimizerKind;

// Three layers, 10x7, 6x9 and 5x5; with max_precond_dim 4 they make 3x2, 2x3 and 2x2 blocks.
// Forward costs 1, 2 and 3 GFLOP (device time comes from the platform's model).
inline SyntheticModelSpec small_stack(std::uint64_t seed = 7) {
  SyntheticModelSpec spec;
  spec.layers = {make_layer("layer0", 10, 7, 1e9, 4), make_layer("layer1", 6, 9, 2e9, 4),
                 make_layer("layer2", 5, 5, 3e9, 4)};
  spec.gradients.seed = seed;
  spec.gradients.rank = 3;
  spec.gradients.noise = 0.2;
  return spec;
}

inline Hyperparameters small_blocks(OptimizerKind kind, int frequency) {
  Hyperparameters hp = optim::default_hyperparameters(kind);
  hp.max_precond_dim = 4;
  hp.precondition_frequency = frequency;
  return hp;
}

// One second per GFLOP on the device: durations the tests can add up by hand.
inline platform::Seconds one_second_per_gflop(const platform::Cost& cost) { return cost.flops * 1e-9; }

template <linalg::Real T>
using Weights = std::vector<std::vector<T>>;  // [layer]

// The synchronous optimizer: TensorOptimizer::step on every layer with the model's gradients.
// Returns the weights after every step ([step - 1][layer]).
template <linalg::Real T>
std::vector<Weights<T>> synchronous_reference(const SyntheticModelSpec& spec, OptimizerKind kind,
                                              const Hyperparameters& hp, int steps,
                                              std::vector<std::vector<T>>* final_states = nullptr) {
  SyntheticModel<T> model(spec);
  std::vector<std::unique_ptr<optim::TensorOptimizer<T>>> tensors;
  for (const LayerSpec& layer : spec.layers)
    tensors.push_back(std::make_unique<optim::TensorOptimizer<T>>(kind, hp, std::vector<linalg::index>{layer.rows, layer.cols},
                                                                  layer.name));
  std::vector<Weights<T>> after;
  for (int t = 1; t <= steps; ++t) {
    for (std::size_t l = 0; l < tensors.size(); ++l) {
      model.compute_gradient(l, t);
      tensors[l]->step(model.weights(l), model.gradient(l));
    }
    Weights<T> w;
    for (std::size_t l = 0; l < tensors.size(); ++l) w.emplace_back(model.weights(l).begin(), model.weights(l).end());
    after.push_back(std::move(w));
  }
  if (final_states != nullptr)
    for (const auto& tensor : tensors)
      for (const auto& block : tensor->blocks())
        final_states->emplace_back(block.optimizer->state().values().begin(), block.optimizer->state().values().end());
  return after;
}

// Bytes of optimizer state of the layer that has the most, counted from the optimizer's own
// blocks (what the device must hold while the driver updates that layer).
template <linalg::Real T>
std::size_t largest_layer_state_bytes(const SyntheticModelSpec& spec, OptimizerKind kind, const Hyperparameters& hp) {
  std::size_t largest = 0;
  for (const LayerSpec& layer : spec.layers) {
    const optim::TensorOptimizer<T> tensor(kind, hp, {layer.rows, layer.cols}, layer.name);
    std::size_t bytes = 0;
    for (const auto& block : tensor.blocks()) bytes += block.optimizer->state().tensor_bytes();
    largest = std::max(largest, bytes);
  }
  return largest;
}

// Host bytes the driver sets aside for the refresh jobs' buffers at their worst: per block,
// the jobs its schedule can keep alive at once under staleness S times one job's bytes.
template <linalg::Real T>
std::size_t shadow_bytes_at_worst(const SyntheticModelSpec& spec, OptimizerKind kind, const Hyperparameters& hp,
                                  int staleness) {
  std::size_t sum = 0;
  for (const LayerSpec& layer : spec.layers)
    for (const optim::BlockPlan& cut : optim::plan_blocks(kind, hp, std::vector<linalg::index>{layer.rows, layer.cols}))
      sum += static_cast<std::size_t>(max_live_refresh_jobs(cut.kind, cut.hp, staleness)) *
             optim::refresh_job_bytes(cut.kind, cut.hp, cut.region.rows, cut.region.cols, sizeof(T));
  return sum;
}

template <linalg::Real T>
Weights<T> weights_of(const SyntheticModel<T>& model) {
  Weights<T> w;
  for (std::size_t l = 0; l < model.layer_count(); ++l) w.emplace_back(model.weights(l).begin(), model.weights(l).end());
  return w;
}

template <linalg::Real T>
bool bitwise_equal(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

inline DriverOptions full_numerics(int staleness, PublishPolicy policy = PublishPolicy::deterministic) {
  DriverOptions o;
  o.numerics = platform::Numerics::values;
  o.service.staleness = staleness;
  o.service.policy = policy;
  o.store.policy = PlacementPolicy::device;
  o.device_seconds = one_second_per_gflop;
  return o;
}

inline platform::fake::FakeOptions fake_timing(double refresh_seconds = 0.0, int workers = 1) {
  platform::fake::FakeOptions o;
  o.host_workers = workers;
  o.device_duration = [](const platform::Work& w) { return platform::total_seconds(w.cost, one_second_per_gflop); };
  if (refresh_seconds > 0.0) o.host_duration = [refresh_seconds](const platform::Work&) { return refresh_seconds; };
  return o;
}

}  // namespace asteria::runtime::test

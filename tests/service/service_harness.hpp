#pragma once
// Drives the same gradient stream through the synchronous TensorOptimizer and through the
// PreconditionerService, so tests can compare the parameter trajectories bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/optim/hyperparameters.hpp"
#include "core/optim/tensor_optimizer.hpp"
#include "core/platform/fake/fake_platform.hpp"
#include "core/runtime/service/preconditioner_service.hpp"
#include "core/runtime/service/serviced_tensor.hpp"

namespace asteria::runtime::test {

using linalg::index;
using optim::Hyperparameters;
using optim::OptimizerKind;

struct Scenario {
  std::string name;
  OptimizerKind kind = OptimizerKind::adamw;
  Hyperparameters hp;
  std::vector<std::vector<index>> shapes;
  int steps = 12;
  std::uint64_t seed = 1;
  std::vector<std::pair<int, int>> nan_gradients;  // (step, tensor): a NaN in that gradient
};

// Several tensors, one of them blocked into full and remainder blocks, one 3-D, one a vector.
inline Scenario make_scenario(std::string name, OptimizerKind kind, int frequency, int steps = 12) {
  Scenario s;
  s.name = std::move(name);
  s.kind = kind;
  s.hp = optim::default_hyperparameters(kind);
  s.hp.max_precond_dim = 4;
  s.hp.precondition_frequency = frequency;
  s.shapes = {{10, 7}, {2, 3, 5}, {6}};
  s.steps = steps;
  return s;
}

inline std::vector<Scenario> every_optimizer() {
  return {make_scenario("adamw", OptimizerKind::adamw, 1),
          make_scenario("shampoo f=1", OptimizerKind::shampoo, 1),
          make_scenario("shampoo f=3", OptimizerKind::shampoo, 3),
          make_scenario("soap f=2", OptimizerKind::soap, 2),
          make_scenario("kl-shampoo f=2", OptimizerKind::kl_shampoo, 2),
          make_scenario("muon", OptimizerKind::muon, 1)};
}

inline std::vector<Scenario> refreshing_optimizers() {
  return {make_scenario("shampoo f=1", OptimizerKind::shampoo, 1),
          make_scenario("shampoo f=3", OptimizerKind::shampoo, 3),
          make_scenario("soap f=2", OptimizerKind::soap, 2),
          make_scenario("kl-shampoo f=2", OptimizerKind::kl_shampoo, 2)};
}

inline std::size_t element_count(const std::vector<index>& shape) {
  std::size_t n = 1;
  for (index d : shape) n *= static_cast<std::size_t>(d);
  return n;
}

template <linalg::Real T>
struct Data {
  std::vector<std::vector<T>> initial;                  // [tensor]
  std::vector<std::vector<std::vector<T>>> gradients;  // [step - 1][tensor]
};

template <linalg::Real T>
Data<T> make_data(const Scenario& s) {
  std::mt19937_64 rng(s.seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  Data<T> d;
  for (const auto& shape : s.shapes) {
    std::vector<T> w(element_count(shape));
    for (T& x : w) x = static_cast<T>(normal(rng));
    d.initial.push_back(std::move(w));
  }
  for (int t = 1; t <= s.steps; ++t) {
    std::vector<std::vector<T>> step;
    for (std::size_t i = 0; i < s.shapes.size(); ++i) {
      std::vector<T> g(element_count(s.shapes[i]));
      // A drifting mean keeps the statistics changing, so a stale preconditioner shows.
      for (T& x : g) x = static_cast<T>(normal(rng) + 0.3 * std::sin(0.7 * t));
      for (auto [bad_step, tensor] : s.nan_gradients)
        if (bad_step == t && static_cast<std::size_t>(tensor) == i) g[0] = std::numeric_limits<T>::quiet_NaN();
      step.push_back(std::move(g));
    }
    d.gradients.push_back(std::move(step));
  }
  return d;
}

template <linalg::Real T>
struct Trajectory {
  std::vector<std::vector<std::vector<T>>> params;  // [step - 1][tensor], after the step
  std::vector<std::vector<T>> block_values;          // [block], every tensor's blocks in order
  std::vector<std::vector<std::int64_t>> block_counters;
  std::vector<StepMetrics> metrics;
  ServiceTotals totals;
  std::int64_t failures = 0;
};

// Swaps in a wrapper around every block optimizer of a tensor (failure injection).
template <linalg::Real T>
using BlockWrapper = std::function<std::unique_ptr<optim::BlockOptimizer<T>>(std::unique_ptr<optim::BlockOptimizer<T>>)>;

template <linalg::Real T>
std::vector<std::unique_ptr<optim::TensorOptimizer<T>>> make_tensors(const Scenario& s,
                                                                      const BlockWrapper<T>& wrap = {}) {
  std::vector<std::unique_ptr<optim::TensorOptimizer<T>>> tensors;
  for (std::size_t i = 0; i < s.shapes.size(); ++i) {
    tensors.push_back(
        std::make_unique<optim::TensorOptimizer<T>>(s.kind, s.hp, s.shapes[i], "tensor" + std::to_string(i)));
    if (wrap)
      for (auto& block : tensors.back()->blocks()) block.optimizer = wrap(std::move(block.optimizer));
  }
  return tensors;
}

// State of the optimizer doing the work (a wrapper exposes its inner block as state_of).
template <linalg::Real T>
using StateOf = std::function<const optim::BlockState<T>&(const optim::BlockOptimizer<T>&)>;

template <linalg::Real T>
void collect_states(Trajectory<T>& run, const std::vector<std::unique_ptr<optim::TensorOptimizer<T>>>& tensors,
                    const StateOf<T>& state_of) {
  for (const auto& tensor : tensors)
    for (const auto& block : tensor->blocks()) {
      const optim::BlockState<T>& st = state_of ? state_of(*block.optimizer) : block.optimizer->state();
      run.block_values.emplace_back(st.values().begin(), st.values().end());
      std::vector<std::int64_t> counters;
      for (std::size_t c = 0; c < st.counter_names().size(); ++c) counters.push_back(st.counter(static_cast<int>(c)));
      run.block_counters.push_back(std::move(counters));
    }
}

template <linalg::Real T>
Trajectory<T> run_synchronous(const Scenario& s, const BlockWrapper<T>& wrap = {}, const StateOf<T>& state_of = {}) {
  const Data<T> data = make_data<T>(s);
  auto tensors = make_tensors<T>(s, wrap);
  std::vector<std::vector<T>> params = data.initial;
  Trajectory<T> run;
  for (int t = 1; t <= s.steps; ++t) {
    for (std::size_t i = 0; i < tensors.size(); ++i)
      tensors[i]->step(params[i], data.gradients[static_cast<std::size_t>(t - 1)][i]);
    run.params.push_back(params);
  }
  for (const auto& tensor : tensors) run.failures += tensor->counters().refresh_failures;
  collect_states(run, tensors, state_of);
  return run;
}

// How long things take on the fake platform, in seconds.
struct Timing {
  double backward_s = 1.0;  // before the backward hooks of a step
  double update_gap_s = 0.5;  // between the backward hooks and the updates
};

template <linalg::Real T>
Trajectory<T> run_service(platform::Platform& platform, const Scenario& s, const ServiceOptions& options,
                   const std::function<void(double)>& let_time_pass, Timing timing = {},
                   const BlockWrapper<T>& wrap = {}, const StateOf<T>& state_of = {}) {
  const Data<T> data = make_data<T>(s);
  auto tensors = make_tensors<T>(s, wrap);
  PreconditionerService<T> service(platform, options);
  std::vector<std::unique_ptr<ServicedTensor<T>>> serviced;
  for (std::size_t i = 0; i < tensors.size(); ++i)
    serviced.push_back(std::make_unique<ServicedTensor<T>>(service, *tensors[i], "tensor" + std::to_string(i)));
  std::vector<std::vector<T>> params = data.initial;
  Trajectory<T> run;
  for (int t = 1; t <= s.steps; ++t) {
    const auto& grads = data.gradients[static_cast<std::size_t>(t - 1)];
    service.on_step_begin(t);
    if (let_time_pass) let_time_pass(timing.backward_s);
    for (std::size_t i = 0; i < tensors.size(); ++i) serviced[i]->after_backward(grads[i], t);
    if (let_time_pass) let_time_pass(timing.update_gap_s);
    for (std::size_t i = 0; i < tensors.size(); ++i) serviced[i]->update(params[i], grads[i], t);
    run.metrics.push_back(service.on_step_end(t));
    run.params.push_back(params);
  }
  service.settle();
  run.totals = service.totals();
  run.failures = run.totals.failures;
  collect_states(run, tensors, state_of);
  return run;
}

// A fake platform whose refreshes take random durations drawn from `draw` (seeded).
inline platform::fake::FakeOptions random_refresh_durations(std::uint64_t seed,
                                                            std::function<double(std::mt19937_64&)> draw,
                                                            int workers = 4) {
  auto rng = std::make_shared<std::mt19937_64>(seed);
  platform::fake::FakeOptions o;
  o.host_workers = workers;
  o.host_duration = [rng, draw = std::move(draw)](const platform::Work&) { return draw(*rng); };
  return o;
}

template <linalg::Real T>
Trajectory<T> run_on_fake(const Scenario& s, const ServiceOptions& options, platform::fake::FakeOptions fake,
                   Timing timing = {}, const BlockWrapper<T>& wrap = {}, const StateOf<T>& state_of = {}) {
  platform::fake::FakePlatform platform(std::move(fake));
  return run_service<T>(
      platform, s, options, [&](double seconds) { platform.advance_to(platform.now() + seconds); }, timing, wrap,
      state_of);
}

template <linalg::Real T>
bool bitwise_equal(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

// Every step's parameters of every tensor, and (when both runs collected them) the final block
// states, bit for bit.
template <linalg::Real T>
void expect_same_trajectory(const Trajectory<T>& expected, const Trajectory<T>& actual, bool compare_states = true) {
  ASSERT_EQ(expected.params.size(), actual.params.size());
  for (std::size_t t = 0; t < expected.params.size(); ++t)
    for (std::size_t i = 0; i < expected.params[t].size(); ++i)
      ASSERT_TRUE(bitwise_equal(expected.params[t][i], actual.params[t][i]))
          << "parameters of tensor " << i << " differ after step " << t + 1;
  if (!compare_states) return;
  ASSERT_EQ(expected.block_values.size(), actual.block_values.size());
  for (std::size_t b = 0; b < expected.block_values.size(); ++b) {
    EXPECT_TRUE(bitwise_equal(expected.block_values[b], actual.block_values[b])) << "state of block " << b;
    EXPECT_EQ(expected.block_counters[b], actual.block_counters[b]) << "counters of block " << b;
  }
}

template <linalg::Real T>
bool same_final_params(const Trajectory<T>& a, const Trajectory<T>& b) {
  for (std::size_t i = 0; i < a.params.back().size(); ++i)
    if (!bitwise_equal(a.params.back()[i], b.params.back()[i])) return false;
  return true;
}

}  // namespace asteria::runtime::test

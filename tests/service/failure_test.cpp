// Failed refreshes (a snapshot of corrupted statistics, a worker that throws) keep the previous
// preconditioner and are counted; too many in a row is an error naming the block. Misuse of the
// hooks is reported.
#include <gtest/gtest.h>

#include <functional>
#include <limits>

#include "core/common/error.hpp"
#include "tests/service/service_harness.hpp"

namespace asteria::runtime::test {
namespace {

// A refresh job whose worker throws instead of computing (a bug or an exhausted resource in the
// refresh code): the executor turns the exception into a failed Status.
template <linalg::Real T>
class ThrowingJob final : public optim::RefreshJob<T> {
 public:
  explicit ThrowingJob(std::unique_ptr<optim::RefreshJob<T>> inner)
      : optim::RefreshJob<T>(inner->stats_step()), inner_(std::move(inner)) {}
  Status run() override { throw std::runtime_error("refresh worker threw"); }
  std::vector<platform::Cost> cost() const override { return inner_->cost(); }
  std::size_t bytes() const override { return inner_->bytes(); }

 private:
  std::unique_ptr<optim::RefreshJob<T>> inner_;
};

// How a selected snapshot fails: taken while a statistic holds a NaN (run() returns a failed
// Status), or its worker throws.
enum class Fault { nan_statistics, throwing_worker };

// Wraps a block optimizer; the snapshots selected by `fails` (1-based count) fail as `fault`
// says. The block's own statistics stay intact.
template <linalg::Real T>
class CorruptingBlock final : public optim::BlockOptimizer<T> {
 public:
  CorruptingBlock(std::unique_ptr<optim::BlockOptimizer<T>> inner, std::function<bool(int)> fails,
                  Fault fault = Fault::nan_statistics)
      : optim::BlockOptimizer<T>(inner->rows(), inner->cols()), inner_(std::move(inner)), fails_(std::move(fails)),
        fault_(fault) {}

  std::string_view name() const noexcept override { return inner_->name(); }
  void accumulate(ops::Device& device, linalg::ConstMatrixView<T> grad, Step t) override {
    inner_->accumulate(device, grad, t);
  }
  std::int64_t statistics_updates() const noexcept override { return inner_->statistics_updates(); }
  bool refresh_due_after(std::int64_t updates) const override { return inner_->refresh_due_after(updates); }
  void publish(ops::Device& device, optim::RefreshJob<T>& job) override { inner_->publish(device, job); }
  int activation_delay() const noexcept override { return inner_->activation_delay(); }
  bool apply(ops::Device& device, linalg::MatrixView<T> w, linalg::ConstMatrixView<T> g, Step t) override {
    return inner_->apply(device, w, g, t);
  }

  std::unique_ptr<optim::RefreshJob<T>> snapshot(ops::Device& device, Step t) const override {
    if (!fails_(++snapshots_)) return inner_->snapshot(device, t);
    if (fault_ == Fault::throwing_worker) return std::make_unique<ThrowingJob<T>>(inner_->snapshot(device, t));
    optim::BlockState<T>& state = inner_->state();
    const optim::TensorSlot* stats = nullptr;
    for (const optim::TensorSlot& slot : state.layout())
      if (slot.name == "L" || slot.name == "stats_left") stats = &slot;
    EXPECT_NE(stats, nullptr);
    T& first = state.values()[static_cast<std::size_t>(stats->offset)];
    const T saved = first;
    first = std::numeric_limits<T>::quiet_NaN();
    auto job = inner_->snapshot(device, t);
    first = saved;
    return job;
  }

  const optim::BlockState<T>& inner_state() const { return inner_->state(); }
  optim::BlockState<T>& inner_state() { return inner_->state(); }

 private:
  std::unique_ptr<optim::BlockOptimizer<T>> inner_;
  std::function<bool(int)> fails_;
  Fault fault_;
  mutable int snapshots_ = 0;
};

template <linalg::Real T>
BlockWrapper<T> corrupt(std::function<bool(int)> fails, Fault fault = Fault::nan_statistics) {
  return [fails, fault](std::unique_ptr<optim::BlockOptimizer<T>> inner) -> std::unique_ptr<optim::BlockOptimizer<T>> {
    return std::make_unique<CorruptingBlock<T>>(std::move(inner), fails, fault);
  };
}

template <linalg::Real T>
StateOf<T> inner_state() {
  return [](const optim::BlockOptimizer<T>& b) -> const optim::BlockState<T>& {
    return dynamic_cast<const CorruptingBlock<T>&>(b).inner_state();
  };
}

template <class T>
class RefreshFailures : public ::testing::Test {};
using Dtypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(RefreshFailures, Dtypes);

TYPED_TEST(RefreshFailures, StalenessZeroMatchesTensorOptimizerWhenRefreshesFail) {
  using T = TypeParam;
  const auto second_and_third = [](int n) { return n == 2 || n == 3; };
  for (const Scenario& scenario : refreshing_optimizers()) {
    SCOPED_TRACE(scenario.name);
    const Trajectory<T> expected = run_synchronous<T>(scenario, corrupt<T>(second_and_third), inner_state<T>());
    const Trajectory<T> actual = run_on_fake<T>(scenario, service_options(scenario.hp, 0),
                                         random_refresh_durations(11, [](std::mt19937_64& r) {
                                           return std::uniform_real_distribution<double>(0.0, 3.0)(r);
                                         }),
                                         {}, corrupt<T>(second_and_third), inner_state<T>());
    expect_same_trajectory(expected, actual);
    EXPECT_GT(expected.failures, 0);
    EXPECT_EQ(actual.failures, expected.failures);
  }
}

// Shampoo, one block, f = 1, S = 1: job s is due at the update of step s + 1.
struct OneShampooBlock {
  using T = double;
  explicit OneShampooBlock(std::function<bool(int)> fails, int failure_limit = 3,
                           PublishPolicy policy = PublishPolicy::deterministic, int staleness = 1,
                           Fault fault = Fault::nan_statistics)
      : scenario(make_scenario("one block", OptimizerKind::shampoo, 1, 8)) {
    scenario.shapes = {{3, 3}};
    scenario.hp.max_consecutive_refresh_failures = failure_limit;
    data = make_data<T>(scenario);
    tensors = make_tensors<T>(scenario, corrupt<T>(std::move(fails), fault));
    service = std::make_unique<PreconditionerService<T>>(fake, service_options(scenario.hp, staleness, policy));
    tensor = std::make_unique<ServicedTensor<T>>(*service, *tensors[0], "tensor0");
    params = data.initial[0];
  }
  StepMetrics step(Step t) {
    const auto& grads = data.gradients[static_cast<std::size_t>(t - 1)][0];
    service->on_step_begin(t);
    fake.advance_to(fake.now() + 1.0);
    tensor->after_backward(grads, t);
    tensor->update(params, grads, t);
    return service->on_step_end(t);
  }
  std::vector<T> roots() {
    auto& state = dynamic_cast<CorruptingBlock<T>&>(*tensors[0]->blocks()[0].optimizer).inner_state();
    std::vector<T> values;
    for (const optim::TensorSlot& slot : state.layout())
      if (slot.name == "L_root" || slot.name == "R_root") {
        auto v = state.tensor(static_cast<int>(&slot - state.layout().data()));
        for (index i = 0; i < v.rows(); ++i)
          for (index j = 0; j < v.cols(); ++j) values.push_back(v(i, j));
      }
    return values;
  }

  Scenario scenario;
  Data<T> data;
  platform::fake::FakePlatform fake;
  std::vector<std::unique_ptr<optim::TensorOptimizer<T>>> tensors;
  std::unique_ptr<PreconditionerService<T>> service;
  std::unique_ptr<ServicedTensor<T>> tensor;
  std::vector<T> params;
};

void expect_failure_kept_and_counted(Fault fault) {
  OneShampooBlock run([](int n) { return n == 2; }, 3, PublishPolicy::deterministic, 1, fault);
  const BlockId id = run.tensor->block_ids()[0];
  run.step(1);
  run.step(2);  // job 1 installed
  EXPECT_EQ(run.service->version(id).stats_step, 1);
  const auto roots_of_job_1 = run.roots();

  const StepMetrics third = run.step(3);  // job 2 failed: roots of job 1 stay
  EXPECT_EQ(third.failures, 1);
  EXPECT_EQ(third.published, 0);
  EXPECT_TRUE(bitwise_equal(roots_of_job_1, run.roots()));
  EXPECT_EQ(run.service->version(id).stats_step, 1);
  EXPECT_EQ(run.service->version(id).failures, 1);
  EXPECT_EQ(run.service->version(id).consecutive_failures, 1);

  const StepMetrics fourth = run.step(4);  // job 3 succeeds
  EXPECT_EQ(fourth.published, 1);
  EXPECT_FALSE(bitwise_equal(roots_of_job_1, run.roots()));
  EXPECT_EQ(run.service->version(id).stats_step, 3);
  EXPECT_EQ(run.service->version(id).published_step, 4);
  EXPECT_EQ(run.service->version(id).consecutive_failures, 0);
  EXPECT_EQ(run.service->totals().failures, 1);
}

TEST(RefreshFailure, AFailedJobKeepsThePreviousPreconditionerAndIsCounted) {
  for (Fault fault : {Fault::nan_statistics, Fault::throwing_worker}) {
    SCOPED_TRACE(fault == Fault::nan_statistics ? "NaN statistics" : "the worker throws");
    expect_failure_kept_and_counted(fault);
  }
}

TEST(RefreshFailure, TooManyConsecutiveFailuresAreAnErrorNamingTheBlock) {
  for (auto policy : {PublishPolicy::deterministic, PublishPolicy::opportunistic}) {
    SCOPED_TRACE(std::string(to_string(policy)));
    OneShampooBlock run([](int) { return true; }, /*failure_limit=*/2, policy);
    run.step(1);
    run.step(2);  // job 1 fails (1)
    run.step(3);  // job 2 fails (2)
    try {
      run.step(4);  // job 3 fails (3 > 2)
      FAIL() << "expected a NumericalError";
    } catch (const NumericalError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("tensor0 block 0 (rows 0:3, cols 0:3)"), std::string::npos) << what;
      EXPECT_NE(what.find("3 consecutive"), std::string::npos) << what;
      EXPECT_NE(what.find("NaN or Inf"), std::string::npos) << what;  // the job's own reason
    }
    EXPECT_EQ(run.service->totals().failures, 3);
  }
}

TEST(ServiceMisuse, HooksOutsideTheirStepAreLogicErrors) {
  platform::fake::FakePlatform fake;
  PreconditionerService<double> service(fake, {});
  Scenario scenario = make_scenario("misuse", OptimizerKind::adamw, 1);
  auto tensors = make_tensors<double>(scenario);
  const BlockId id = service.register_block(*tensors[0]->blocks()[0].optimizer, "b");
  linalg::Matrix<double> w(10, 7), g(10, 7);
  EXPECT_THROW((void)service.after_backward(id, g.view(), 1), std::logic_error);  // no step begun
  service.on_step_begin(1);
  EXPECT_THROW(service.on_step_begin(2), std::logic_error);                       // step 1 not ended
  EXPECT_THROW(service.before_update(id, 1), std::logic_error);                   // before after_backward
  EXPECT_TRUE(service.after_backward(id, g.view(), 1));
  EXPECT_THROW((void)service.after_backward(id, g.view(), 1), std::logic_error);  // twice
  service.apply(id, w.view(), g.view(), 1);
  service.on_step_end(1);
  EXPECT_THROW(service.on_step_begin(1), std::logic_error);  // steps increase
  EXPECT_THROW(service.version(5), std::out_of_range);
}

TEST(ServiceOptionsValidation, NamesTheField) {
  platform::fake::FakePlatform fake;
  ServiceOptions bad;
  bad.staleness = -1;
  try {
    PreconditionerService<float> service(fake, bad);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "staleness");
  }
  EXPECT_EQ(parse_publish_policy("opportunistic"), PublishPolicy::opportunistic);
  EXPECT_EQ(parse_publish_policy("deterministic"), PublishPolicy::deterministic);
  EXPECT_THROW(parse_publish_policy("eager"), InputError);
}

TEST(NonFinitePolicy, ErrorPolicyNamesTheBlockAndSkipPolicyHasALimit) {
  for (auto policy : {optim::NonFinitePolicy::error, optim::NonFinitePolicy::skip}) {
    platform::fake::FakePlatform fake;
    ServiceOptions options;
    options.non_finite = policy;
    options.max_consecutive_non_finite = 1;
    PreconditionerService<double> service(fake, options);
    Scenario scenario = make_scenario("nan", OptimizerKind::adamw, 1);
    auto tensors = make_tensors<double>(scenario);
    const BlockId id = service.register_block(*tensors[0]->blocks()[0].optimizer, "layer0.w");
    linalg::Matrix<double> g(10, 7);
    g(3, 4) = std::numeric_limits<double>::infinity();
    service.on_step_begin(1);
    if (policy == optim::NonFinitePolicy::error) {
      EXPECT_THROW((void)service.after_backward(id, g.view(), 1), NumericalError);
      continue;
    }
    EXPECT_FALSE(service.after_backward(id, g.view(), 1));  // 1 skip allowed
    service.on_step_end(1);
    service.on_step_begin(2);
    try {
      (void)service.after_backward(id, g.view(), 2);
      FAIL() << "expected a NumericalError";
    } catch (const NumericalError& e) {
      EXPECT_NE(std::string(e.what()).find("layer0.w"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace asteria::runtime::test

// The optimizer session over a caller's tensors (apps/python's C++ side, what asteria.torch
// drives): a step the caller's hooks drive from another thread, pass by pass, equals the step
// run after the backward bit for bit and leaves the caller's weights alone until step(); an
// abandoned step fails its waiting passes and the session refuses to go on; the declared costs
// of a parameter's passes follow its use.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "apps/python/external_model.hpp"
#include "apps/python/optimizer_session.hpp"
#include "core/common/error.hpp"

namespace asteria::python {
namespace {

const std::vector<ParameterShape> kParameters = {
    {"w0", {8, 6}, ParameterUse::matmul}, {"b0", {6}, ParameterUse::elementwise}, {"w1", {4, 3, 2}, ParameterUse::matmul}};

std::vector<std::string> settings(int micro_batches) {
  return {"--optimizer", "soap", "--lr", "0.01", "--precondition-frequency", "2", "--max-precond-dim", "8",
          "--placement", "tiered", "--staleness", "1", "--publish", "deterministic", "--host-workers", "2",
          "--micro-batches", std::to_string(micro_batches)};
}

// The caller's tensors: weights, and one gradient per step, seeded.
struct Tensors {
  std::vector<std::vector<float>> weights;
  std::vector<std::vector<std::vector<float>>> gradients;  // [step][parameter]
  Tensors(const OptimizerSession& s, int steps) {
    unsigned state = 12345;
    auto next = [&] {
      state = state * 1664525u + 1013904223u;
      return static_cast<float>(state >> 8) / static_cast<float>(1u << 24) - 0.5f;
    };
    for (std::size_t l = 0; l < s.parameter_count(); ++l) {
      weights.emplace_back(s.element_count(l));
      for (float& v : weights.back()) v = next();
    }
    gradients.resize(static_cast<std::size_t>(steps));
    for (auto& step : gradients)
      for (std::size_t l = 0; l < s.parameter_count(); ++l) {
        step.emplace_back(s.element_count(l));
        for (float& v : step.back()) v = next();
      }
  }
  std::vector<float*> weight_pointers() {
    std::vector<float*> out;
    for (auto& w : weights) out.push_back(w.data());
    return out;
  }
  std::vector<float*> gradient_pointers(int t) {
    std::vector<float*> out;
    for (auto& g : gradients[static_cast<std::size_t>(t)]) out.push_back(g.data());
    return out;
  }
};

TEST(OptimizerSession, AHookedStepEqualsTheStepAfterTheBackwardAndChangesTheWeightsInStepOnly) {
  constexpr int kSteps = 5;
  for (const int micro_batches : {1, 2}) {
    OptimizerSession plain(settings(micro_batches), kParameters);
    OptimizerSession hooked(settings(micro_batches), kParameters, 64.0, /*hooked=*/true);
    ASSERT_TRUE(hooked.hooked());
    Tensors a(plain, kSteps), b(hooked, kSteps);
    for (int t = 0; t < kSteps; ++t) {
      const std::vector<float*> gradients = b.gradient_pointers(t);
      plain.step(a.weight_pointers(), a.gradient_pointers(t));

      const std::vector<std::vector<float>> before = b.weights;
      hooked.begin_step(b.weight_pointers());
      EXPECT_TRUE(hooked.step_in_flight());
      // The caller's loop on its own thread: each micro-batch's forward in layer order, then its
      // backward in reverse, reporting each pass as its hooks would.
      std::thread loop([&] {
        for (int m = 0; m < micro_batches; ++m) {
          for (std::size_t l = 0; l < hooked.parameter_count(); ++l) {
            std::this_thread::sleep_for(std::chrono::microseconds(200));
            hooked.forward_done(l, m);
          }
          for (std::size_t l = hooked.parameter_count(); l-- > 0;) {
            std::this_thread::sleep_for(std::chrono::microseconds(200));
            hooked.backward_done(l, m, gradients[l]);
          }
        }
      });
      loop.join();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the updates may be done by now
      EXPECT_EQ(b.weights, before) << "micro-batches " << micro_batches << ", step " << t + 1
                                   << ": the weights changed before step()";
      const std::vector<float*> none(hooked.parameter_count(), nullptr);
      const runtime::StepRecord record = hooked.step(b.weight_pointers(), none);
      EXPECT_FALSE(hooked.step_in_flight());
      EXPECT_EQ(record.step, t + 1);
      EXPECT_GT(record.compute_s, 0.0);  // the loop's measured passes
      for (std::size_t l = 0; l < a.weights.size(); ++l)
        ASSERT_EQ(0, std::memcmp(a.weights[l].data(), b.weights[l].data(), a.weights[l].size() * sizeof(float)))
            << "micro-batches " << micro_batches << ", step " << t + 1 << ", parameter " << l;
    }
    EXPECT_NE(a.weights, Tensors(plain, 1).weights) << "the weights moved";
  }
}

TEST(OptimizerSession, AStepWithoutHookReportsRunsAtStep) {
  OptimizerSession plain(settings(1), kParameters);
  OptimizerSession hooked(settings(1), kParameters, 0.0, /*hooked=*/true);
  Tensors a(plain, 3), b(hooked, 3);
  for (int t = 0; t < 3; ++t) {
    plain.step(a.weight_pointers(), a.gradient_pointers(t));
    hooked.step(b.weight_pointers(), b.gradient_pointers(t));  // no pass reported: step() runs it all
  }
  EXPECT_EQ(a.weights, b.weights);
}

TEST(OptimizerSession, AnAbandonedStepFailsItsWaitingPassesAndTheSessionRefusesToGoOn) {
  OptimizerSession hooked(settings(1), kParameters, 0.0, /*hooked=*/true);
  Tensors b(hooked, 1);
  hooked.begin_step(b.weight_pointers());
  hooked.forward_done(0, 0);
  hooked.abandon_step("the loop's forward raised");
  EXPECT_FALSE(hooked.step_in_flight());
  try {
    hooked.step(b.weight_pointers(), b.gradient_pointers(0));
    FAIL() << "a step after an abandoned one ran";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("the loop's forward raised"), std::string::npos) << e.what();
  }
}

TEST(ExternalModel, DeclaredCostsFollowEachParametersUse) {
  const ExternalModel model({{"linear", {4, 8}, ParameterUse::matmul},
                             {"table", {100, 8}, ParameterUse::lookup},
                             {"scale", {8}, ParameterUse::elementwise}},
                            10.0, false, 1);
  ASSERT_EQ(model.layer(0).forward.pieces().size(), 1u);
  EXPECT_EQ(model.layer(0).forward.pieces()[0].kind, platform::WorkKind::gemm);
  EXPECT_DOUBLE_EQ(model.layer(0).forward.flops(), 2.0 * 10 * 32);   // 2 per element and token
  EXPECT_DOUBLE_EQ(model.layer(0).backward.flops(), 4.0 * 10 * 32);  // the input's and the weight's
  EXPECT_DOUBLE_EQ(model.layer(1).forward.flops(), 0.0);              // a row read per token
  EXPECT_DOUBLE_EQ(model.layer(1).forward.bytes(), 8.0 * 10 * 8);
  EXPECT_EQ(model.layer(2).forward.pieces()[0].kind, platform::WorkKind::elementwise);
  EXPECT_TRUE(model.layer(2).vector);
  const ExternalModel undeclared({{"linear", {4, 8}, ParameterUse::matmul}}, 0.0, false, 1);
  EXPECT_TRUE(undeclared.layer(0).forward.empty());
  EXPECT_EQ(undeclared.pass(), runtime::ModelPass::whole_step);
  EXPECT_EQ(ExternalModel({{"x", {2, 2}}}, 0.0, true, 2).pass(), runtime::ModelPass::per_micro_batch);
  try {
    parse_parameter_use("gather", "use of parameter 3");
    FAIL() << "an unknown use was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("use of parameter 3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ExternalModel({{"empty", {0, 3}}}, 0.0, false, 1), InputError);
  EXPECT_THROW(ExternalModel({{"x", {2}}}, -1.0, false, 1), InputError);
}

}  // namespace
}  // namespace asteria::python

// Micro-batched steps of the transformer: (unit, micro-batch) passes in any schedule order give
// gradients bit-identical across orders (folded in ascending micro-batch order), one micro-batch
// equals forward_backward bit for bit, several match it within rounding, and the driver's view
// (GptTrainingModel's forward_pass / backward_pass over tensors) agrees, updates interleaved.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/common/error.hpp"
#include "core/model/gpt.hpp"
#include "core/model/gpt_training_model.hpp"
#include "tests/model/model_test_support.hpp"

namespace asteria::model {
namespace {

using testing::random_tokens;
using testing::small_config;
using workload::MlpKind;

struct Variant {
  MlpKind mlp;
  bool tied;
  bool norms;
};
// Tied without norm gains leaves the head unit without a tensor of its own.
constexpr Variant kVariants[] = {{MlpKind::swiglu, false, true},
                                 {MlpKind::swiglu, true, true},
                                 {MlpKind::gelu, false, false},
                                 {MlpKind::gelu, true, false}};

std::string describe(const Variant& v) {
  return std::string(workload::to_string(v.mlp)) + (v.tied ? " tied" : " untied") + (v.norms ? " norms" : "");
}

// One pass of a schedule: forward or backward of (layer, micro-batch), a layer being a unit of
// Gpt or a driver layer of GptTrainingModel.
struct Pass {
  bool forward;
  int layer;
  int m;
};

enum class Order { horizontal, forwards_then_backwards, snake, shuffled };
constexpr Order kOrders[] = {Order::horizontal, Order::forwards_then_backwards, Order::snake, Order::shuffled};

// Every (layer, micro-batch) forward and backward of a step over `layers` layers, in `order`:
//   horizontal: per micro-batch, its forwards then its backwards;
//   forwards_then_backwards: every forward, then every backward with micro-batches descending;
//   snake: layer by layer, micro-batches reversing direction at each layer, forward then back;
//   shuffled: a seeded random interleaving of the micro-batches' own sequences.
std::vector<Pass> schedule(Order order, int layers, int micro_batches, unsigned seed = 7) {
  std::vector<Pass> passes;
  const auto own = [&](int m, int k) {  // micro-batch m's k-th pass
    return k < layers ? Pass{true, k, m} : Pass{false, 2 * layers - 1 - k, m};
  };
  switch (order) {
    case Order::horizontal:
      for (int m = 0; m < micro_batches; ++m)
        for (int k = 0; k < 2 * layers; ++k) passes.push_back(own(m, k));
      break;
    case Order::forwards_then_backwards:
      for (int m = 0; m < micro_batches; ++m)
        for (int l = 0; l < layers; ++l) passes.push_back({true, l, m});
      for (int m = micro_batches; m-- > 0;)
        for (int l = layers; l-- > 0;) passes.push_back({false, l, m});
      break;
    case Order::snake:
      for (int k = 0; k < 2 * layers; ++k) {
        const bool forward = k < layers;
        const int l = forward ? k : 2 * layers - 1 - k;
        for (int i = 0; i < micro_batches; ++i) passes.push_back({forward, l, k % 2 == 0 ? i : micro_batches - 1 - i});
      }
      break;
    case Order::shuffled: {
      std::mt19937 engine(seed);
      std::vector<int> next(static_cast<std::size_t>(micro_batches), 0);
      std::vector<int> open;
      for (int m = 0; m < micro_batches; ++m) open.push_back(m);
      while (!open.empty()) {
        const std::size_t pick = std::uniform_int_distribution<std::size_t>(0, open.size() - 1)(engine);
        const int m = open[pick];
        passes.push_back(own(m, next[static_cast<std::size_t>(m)]++));
        if (next[static_cast<std::size_t>(m)] == 2 * layers)
          open.erase(open.begin() + static_cast<std::ptrdiff_t>(pick));
      }
      break;
    }
  }
  return passes;
}

template <class T>
struct Result {
  double loss = 0.0;
  std::vector<std::vector<T>> gradients;
};

template <class T>
Result<T> gradients_of(const Gpt<T>& gpt, double loss) {
  Result<T> r{loss, {}};
  for (std::size_t i = 0; i < gpt.tensor_count(); ++i)
    r.gradients.emplace_back(gpt.gradient(i).begin(), gpt.gradient(i).end());
  return r;
}

template <class T>
void expect_same_bits(const Result<T>& a, const Result<T>& b, const std::string& what) {
  EXPECT_EQ(a.loss, b.loss) << what;
  ASSERT_EQ(a.gradients.size(), b.gradients.size()) << what;
  for (std::size_t i = 0; i < a.gradients.size(); ++i)
    EXPECT_TRUE(a.gradients[i].size() == b.gradients[i].size() &&
                std::memcmp(a.gradients[i].data(), b.gradients[i].data(), a.gradients[i].size() * sizeof(T)) == 0)
        << what << ": tensor " << i;
}

// A micro-batched step through Gpt's units.
template <class T>
Result<T> run_units(Gpt<T>& gpt, std::span<const TokenId> tokens, int batch, int micro_batches, Order order) {
  gpt.begin_step(tokens, batch, micro_batches);
  for (const Pass& p : schedule(order, gpt.unit_count(), micro_batches)) {
    if (p.forward)
      gpt.forward_unit(p.layer, p.m);
    else
      gpt.backward_unit(p.layer, p.m);
  }
  for (std::size_t i = 0; i < gpt.tensor_count(); ++i) EXPECT_TRUE(gpt.gradient_ready(i)) << gpt.tensor(i).name;
  return gradients_of(gpt, gpt.step_loss());
}

// A step through the driver's view; after each layer's last backward, its gradient must be
// complete, and `update(l)` runs there (as the driver's update of layer l).
template <class T, class Update>
void run_driver_step(GptTrainingModel<T>& model, const Gpt<T>& gpt, int micro_batches, Order order, runtime::Step t,
                     Update update) {
  std::vector<int> backwards(model.layer_count(), 0);
  for (const Pass& p :
       schedule(order, static_cast<int>(model.layer_count()), micro_batches, 11 + static_cast<unsigned>(t))) {
    const auto l = static_cast<std::size_t>(p.layer);
    if (p.forward) {
      model.forward_pass(l, p.m, t);
      continue;
    }
    model.backward_pass(l, p.m, t);
    if (++backwards[l] == micro_batches) {
      EXPECT_TRUE(gpt.gradient_ready(l)) << gpt.tensor(l).name << " after its last backward";
      update(l);
    }
  }
}

constexpr int kBatch = 12;  // divisible by 1, 2, 3 and 4

template <class T>
void expect_one_micro_batch_equals_forward_backward() {
  for (const Variant& v : kVariants) {
    const workload::ModelConfig c = small_config(v.mlp, v.tied, v.norms);
    const std::vector<TokenId> tokens = random_tokens(kBatch * (c.sequence_length + 1), c.vocab, 5);
    Gpt<T> whole(c, 3);
    const Result<T> expected = gradients_of(whole, whole.forward_backward(tokens, kBatch));
    Gpt<T> micro(c, 3);
    expect_same_bits(run_units(micro, tokens, kBatch, 1, Order::horizontal), expected, describe(v));
    // Shorter sequences than the config's, and again on a workspace already sized.
    const std::vector<TokenId> short_tokens = random_tokens(3 * 6, c.vocab, 9);
    const Result<T> short_expected = gradients_of(whole, whole.forward_backward(short_tokens, 3));
    expect_same_bits(run_units(micro, short_tokens, 3, 1, Order::snake), short_expected, describe(v) + " L = 5");
  }
}

TEST(GptMicroBatch, OneMicroBatchEqualsForwardBackwardFloat) {
  expect_one_micro_batch_equals_forward_backward<float>();
}
TEST(GptMicroBatch, OneMicroBatchEqualsForwardBackwardDouble) {
  expect_one_micro_batch_equals_forward_backward<double>();
}

template <class T>
void expect_orders_agree() {
  for (const Variant& v : kVariants) {
    const workload::ModelConfig c = small_config(v.mlp, v.tied, v.norms);
    const std::vector<TokenId> tokens = random_tokens(kBatch * (c.sequence_length + 1), c.vocab, 13);
    Gpt<T> gpt(c, 4);
    for (const int m : {2, 3, 4}) {
      const std::string what = describe(v) + ", " + std::to_string(m) + " micro-batches";
      const Result<T> first = run_units(gpt, tokens, kBatch, m, Order::horizontal);
      for (const Order order : kOrders)
        expect_same_bits(run_units(gpt, tokens, kBatch, m, order), first,
                         what + ", order " + std::to_string(static_cast<int>(order)));

      // The driver's view, over tensors: same bits.
      GptTrainingModel<T> model(gpt);
      model.set_batch(tokens, kBatch, m);
      EXPECT_EQ(model.pass(), runtime::ModelPass::per_micro_batch);
      runtime::Step t = 1;
      for (const Order order : kOrders) {
        run_driver_step(model, gpt, m, order, t++, [](std::size_t) {});
        EXPECT_EQ(model.last_loss(), first.loss);
        expect_same_bits(gradients_of(gpt, model.last_loss()), first,
                         what + ", driver order " + std::to_string(static_cast<int>(order)));
      }
    }
  }
}

TEST(GptMicroBatch, EveryOrderGivesTheSameBitsFloat) { expect_orders_agree<float>(); }
TEST(GptMicroBatch, EveryOrderGivesTheSameBitsDouble) { expect_orders_agree<double>(); }

TEST(GptMicroBatch, MatchesTheWholeBatchWithinRounding) {
  for (const Variant& v : kVariants) {
    const workload::ModelConfig c = small_config(v.mlp, v.tied, v.norms);
    const std::vector<TokenId> tokens = random_tokens(kBatch * (c.sequence_length + 1), c.vocab, 17);
    Gpt<double> gpt(c, 6);
    const Result<double> whole = gradients_of(gpt, gpt.forward_backward(tokens, kBatch));
    for (const int m : {2, 3, 4}) {
      const Result<double> micro = run_units(gpt, tokens, kBatch, m, Order::snake);
      const std::string what = describe(v) + ", " + std::to_string(m) + " micro-batches";
      EXPECT_NEAR(micro.loss, whole.loss, 1e-12 * std::abs(whole.loss)) << what;
      for (std::size_t i = 0; i < whole.gradients.size(); ++i) {
        double largest = 0.0, difference = 0.0;
        for (std::size_t e = 0; e < whole.gradients[i].size(); ++e) {
          largest = std::max(largest, std::abs(whole.gradients[i][e]));
          difference = std::max(difference, std::abs(micro.gradients[i][e] - whole.gradients[i][e]));
        }
        EXPECT_GT(largest, 0.0) << what << ": " << gpt.tensor(i).name;
        EXPECT_LE(difference, 1e-10 * largest) << what << ": " << gpt.tensor(i).name;
      }
    }
  }
}

// SGD through the driver's view, each layer updated right after its last backward (in the snake
// order, before earlier layers' backwards): the same weights, bit for bit, as updating after a
// horizontal step, since no backward reads a layer updated before it.
TEST(GptMicroBatch, UpdatesInterleavedWithTheSnakeBackwardMatchHorizontal) {
  for (const Variant& v : kVariants) {
    const workload::ModelConfig c = small_config(v.mlp, v.tied, v.norms);
    std::vector<std::vector<float>> weights[2];
    double losses[2] = {};
    for (const Order order : {Order::horizontal, Order::snake}) {
      const int k = order == Order::snake ? 1 : 0;
      Gpt<float> gpt(c, 8);
      GptTrainingModel<float> model(gpt);
      const auto sgd = [&](std::size_t l) {
        const std::span<float> w = gpt.parameter(l);
        const std::span<const float> g = std::as_const(gpt).gradient(l);
        for (std::size_t e = 0; e < w.size(); ++e) w[e] -= 0.5f * g[e];
      };
      for (runtime::Step t = 1; t <= 3; ++t) {
        model.set_batch(random_tokens(kBatch * (c.sequence_length + 1), c.vocab, 20 + static_cast<unsigned>(t)), kBatch,
                        3);
        run_driver_step(model, gpt, 3, order, t, sgd);
      }
      losses[k] = model.last_loss();
      for (std::size_t i = 0; i < gpt.tensor_count(); ++i)
        weights[k].emplace_back(gpt.parameter(i).begin(), gpt.parameter(i).end());
    }
    EXPECT_EQ(losses[0], losses[1]) << describe(v);
    EXPECT_TRUE(weights[0] == weights[1]) << describe(v);
  }
}

TEST(GptMicroBatch, RejectsBadInputs) {
  const workload::ModelConfig c = small_config(MlpKind::swiglu, true, true);
  Gpt<float> gpt(c, 1);
  const std::vector<TokenId> tokens = random_tokens(kBatch * (c.sequence_length + 1), c.vocab, 3);
  for (const int m : {0, 5, -1, 13}) {
    try {
      gpt.begin_step(tokens, kBatch, m);
      ADD_FAILURE() << m << " micro-batches accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.source(), "tokens");
      EXPECT_EQ(e.field(), "micro_batches");
    }
  }
  std::vector<TokenId> bad = tokens;
  bad[4] = static_cast<TokenId>(c.vocab);
  try {
    gpt.begin_step(bad, kBatch, 2);
    ADD_FAILURE() << "id out of range accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.source(), "tokens");
  }
  EXPECT_THROW(gpt.begin_step(std::span(tokens).first(tokens.size() - 1), kBatch, 2), InputError);
  EXPECT_THROW(gpt.forward_unit(0, 0), std::logic_error);  // no step begun

  GptTrainingModel<float> model(gpt);
  EXPECT_EQ(model.pass(), runtime::ModelPass::whole_step);
  try {
    model.set_batch(tokens, kBatch, 5);
    ADD_FAILURE() << "5 micro-batches of 12 accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "micro_batches");
  }
  EXPECT_EQ(model.pass(), runtime::ModelPass::whole_step);
  EXPECT_THROW(model.forward_pass(0, 0, 1), std::logic_error);  // whole_step: not called
}

TEST(GptMicroBatch, RejectsPassesOutOfOrderAndThenCompletesTheStep) {
  const workload::ModelConfig c = small_config(MlpKind::gelu, false, true);
  const std::vector<TokenId> tokens = random_tokens(kBatch * (c.sequence_length + 1), c.vocab, 23);
  Gpt<double> reference(c, 2);
  const Result<double> expected = run_units(reference, tokens, kBatch, 2, Order::horizontal);

  Gpt<double> gpt(c, 2);
  gpt.begin_step(tokens, kBatch, 2);
  const int last = gpt.unit_count() - 1;
  EXPECT_THROW(gpt.forward_unit(1, 0), std::logic_error);   // before unit 0
  EXPECT_THROW(gpt.forward_unit(0, 2), std::out_of_range);  // no micro-batch 2
  EXPECT_THROW(gpt.forward_unit(last + 1, 0), std::out_of_range);
  gpt.forward_unit(0, 0);
  EXPECT_THROW(gpt.forward_unit(0, 0), std::logic_error);      // twice
  EXPECT_THROW(gpt.backward_unit(last, 0), std::logic_error);  // before all forwards
  for (int u = 1; u <= last; ++u) gpt.forward_unit(u, 0);
  EXPECT_FALSE(gpt.step_loss_ready());
  EXPECT_THROW(static_cast<void>(gpt.step_loss()), std::logic_error);
  EXPECT_THROW(gpt.backward_unit(0, 0), std::logic_error);  // backward starts at the last unit
  gpt.backward_unit(last, 0);
  EXPECT_THROW(gpt.backward_unit(last, 0), std::logic_error);  // twice
  // The rejected calls changed nothing: the step completes with the reference's bits.
  for (int u = 0; u <= last; ++u) gpt.forward_unit(u, 1);
  for (int u = last; u >= 0; --u) gpt.backward_unit(u, 1);
  for (int u = last - 1; u >= 0; --u) gpt.backward_unit(u, 0);
  expect_same_bits(gradients_of(gpt, gpt.step_loss()), expected, "after rejected calls");

  // The driver's view checks every tensor's call, not only the ones that compute.
  GptTrainingModel<double> model(gpt);
  model.set_batch(tokens, kBatch, 2);
  EXPECT_THROW(model.compute_gradient(0, 1), std::logic_error);
  EXPECT_THROW(model.forward_pass(1, 0, 1), std::logic_error);  // layer 0 first
  model.forward_pass(0, 0, 1);
  EXPECT_THROW(model.forward_pass(0, 0, 1), std::logic_error);
  EXPECT_THROW(model.forward_pass(0, 2, 1), std::out_of_range);
  EXPECT_THROW(model.backward_pass(0, 0, 1), std::logic_error);  // before its forwards
  const std::size_t layers = model.layer_count();
  for (std::size_t l = 1; l < layers; ++l) model.forward_pass(l, 0, 1);
  EXPECT_THROW(model.backward_pass(layers - 2, 0, 1), std::logic_error);  // reverse order
  EXPECT_THROW(model.backward_pass(layers - 1, 0, 2), std::logic_error);  // another step
  model.backward_pass(layers - 1, 0, 1);
  EXPECT_THROW(model.forward_pass(0, 1, 2), std::logic_error);  // step 1 is not over
}

}  // namespace
}  // namespace asteria::model

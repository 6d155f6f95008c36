// Block states survive a byte image: a fresh optimizer restored mid-run continues bit for bit,
// and an image of another layout is rejected with InputError.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/common/error.hpp"
#include "core/optim/tensor_optimizer.hpp"
#include "tests/optim/reference_math.hpp"

namespace asteria::optim {
namespace {

Hyperparameters shampoo_mid_schedule() {
  Hyperparameters hp = default_hyperparameters(OptimizerKind::shampoo);
  hp.eps = 1e-4;
  hp.lr = 0.05;
  hp.max_precond_dim = 4;            // 6 x 5: four blocks
  hp.precondition_frequency = 2;     // refreshes at 3 (start), 4, 6, 8
  hp.start_preconditioning_step = 3;
  hp.beta2 = 0.97;
  hp.weight_decay = 0.01;
  return hp;
}

template <Real T>
std::vector<T> gradient(std::size_t n, int t) {
  const std::vector<double> g = reference::gaussian(n, 500 + static_cast<unsigned>(t));
  return {g.begin(), g.end()};
}

template <Real T>
bool bit_identical(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// Runs `before` steps, restores every block into a fresh optimizer, then runs both `after` steps.
template <Real T>
void expect_resumes_bit_identically(OptimizerKind kind, const Hyperparameters& hp, const std::vector<index>& shape,
                                    int before, int after) {
  index count = 1;
  for (index d : shape) count *= d;
  const auto n = static_cast<std::size_t>(count);
  TensorOptimizer<T> original(kind, hp, shape);
  std::vector<T> w(n, T(0.5));
  for (int t = 1; t <= before; ++t) original.step(w, gradient<T>(n, t));

  TensorOptimizer<T> restored(kind, hp, shape);
  ASSERT_EQ(restored.blocks().size(), original.blocks().size());
  for (std::size_t b = 0; b < original.blocks().size(); ++b) {
    const std::vector<std::byte> image = original.blocks()[b].optimizer->state().serialize();
    restored.blocks()[b].optimizer->state().deserialize(image, "checkpoint block " + std::to_string(b));
  }
  std::vector<T> w_restored = w;
  for (int t = before + 1; t <= before + after; ++t) {
    const std::vector<T> g = gradient<T>(n, t);
    original.step(w, g);
    restored.step(w_restored, g);
    ASSERT_TRUE(bit_identical(w, w_restored)) << to_string(kind) << " diverged at step " << t;
  }
  for (std::size_t b = 0; b < original.blocks().size(); ++b)
    EXPECT_EQ(original.blocks()[b].optimizer->state().serialize(), restored.blocks()[b].optimizer->state().serialize());
  EXPECT_EQ(restored.counters().refreshes + original.counters().refreshes > 0, kind == OptimizerKind::shampoo);
}

template <Real T>
class StateSerializationTyped : public ::testing::Test {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(StateSerializationTyped, Precisions);

TYPED_TEST(StateSerializationTyped, ShampooResumesBitIdentically) {
  // Saved after step 5: roots from step 4 are active and the next refresh is due at step 6.
  expect_resumes_bit_identically<TypeParam>(OptimizerKind::shampoo, shampoo_mid_schedule(), {6, 5}, 5, 4);
}

TYPED_TEST(StateSerializationTyped, ShampooSavedBeforeItsFirstRootResumesBitIdentically) {
  expect_resumes_bit_identically<TypeParam>(OptimizerKind::shampoo, shampoo_mid_schedule(), {6, 5}, 2, 3);
}

TYPED_TEST(StateSerializationTyped, MuonResumesBitIdentically) {
  expect_resumes_bit_identically<TypeParam>(OptimizerKind::muon, default_hyperparameters(OptimizerKind::muon), {5, 7},
                                            3, 3);
}

TYPED_TEST(StateSerializationTyped, AdamWResumesBitIdentically) {
  expect_resumes_bit_identically<TypeParam>(OptimizerKind::adamw, default_hyperparameters(OptimizerKind::adamw), {4, 3},
                                            3, 3);
}

TEST(StateSerialization, MismatchedImagesAreRejectedAndLeaveTheStateUntouched) {
  const Hyperparameters hp = shampoo_mid_schedule();
  TensorOptimizer<float> shampoo(OptimizerKind::shampoo, hp, {6, 5});
  std::vector<float> w(30, 0.5f);
  shampoo.step(w, gradient<float>(30, 1));
  BlockState<float>& block0 = shampoo.blocks()[0].optimizer->state();  // 4 x 4
  BlockState<float>& block3 = shampoo.blocks()[3].optimizer->state();  // 2 x 1
  const std::vector<std::byte> before = block0.serialize();

  // Another block's shape.
  EXPECT_THROW(block0.deserialize(block3.serialize(), "ckpt"), InputError);
  // Another optimizer's layout.
  TensorOptimizer<float> muon(OptimizerKind::muon, default_hyperparameters(OptimizerKind::muon), {4, 4});
  EXPECT_THROW(block0.deserialize(muon.blocks()[0].optimizer->state().serialize(), "ckpt"), InputError);
  // Same optimizer, other options: no graft state.
  Hyperparameters no_graft = hp;
  no_graft.grafting = false;
  TensorOptimizer<float> plain(OptimizerKind::shampoo, no_graft, {6, 5});
  EXPECT_THROW(block0.deserialize(plain.blocks()[0].optimizer->state().serialize(), "ckpt"), InputError);
  // Another precision.
  TensorOptimizer<double> wide(OptimizerKind::shampoo, hp, {6, 5});
  EXPECT_THROW(block0.deserialize(wide.blocks()[0].optimizer->state().serialize(), "ckpt"), InputError);
  // A truncated image.
  std::vector<std::byte> truncated = before;
  truncated.resize(truncated.size() - 3);
  try {
    block0.deserialize(truncated, "ckpt.bin");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.source(), "ckpt.bin");
  }
  EXPECT_EQ(block0.serialize(), before);
}

}  // namespace
}  // namespace asteria::optim

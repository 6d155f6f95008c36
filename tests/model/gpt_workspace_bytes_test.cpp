// workspace_bytes, the activation memory a step will lay out, against the arena a step sizes.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/model/gpt.hpp"
#include "core/model/gpt_state.hpp"
#include "tests/model/model_test_support.hpp"

namespace asteria::model {
namespace {

TEST(GptWorkspaceBytes, EqualsTheArenaAStepLaysOut) {
  for (const auto mlp : {workload::MlpKind::swiglu, workload::MlpKind::gelu})
    for (const int batch : {1, 3}) {
      const workload::ModelConfig c = testing::small_config(mlp, false, true);
      GptState<float> state;
      state.config = c;
      state.workspace.layers.resize(static_cast<std::size_t>(c.layers));
      const auto length = static_cast<linalg::index>(c.sequence_length);
      const std::vector<TokenId> tokens =
          testing::random_tokens(static_cast<std::size_t>(batch * (length + 1)), c.vocab, 7);
      prepare_workspace(state, tokens, batch);
      EXPECT_EQ(workspace_bytes(c, batch, length, sizeof(float)),
                static_cast<double>(state.workspace.arena.size() * sizeof(float)))
          << "batch " << batch;
    }
}

TEST(GptWorkspaceBytes, HugeSizesAreInfiniteNotWrapped) {
  workload::ModelConfig c = testing::small_config(workload::MlpKind::swiglu, false, true);
  c.d_model = 1LL << 40;
  EXPECT_TRUE(std::isinf(workspace_bytes(c, 1LL << 30, 1024, sizeof(float))));
  EXPECT_GT(workspace_bytes(testing::small_config(workload::MlpKind::swiglu, false, true), 100000, 8, 4), 1e8);
}

}  // namespace
}  // namespace asteria::model

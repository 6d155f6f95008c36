#pragma once
// The host-side parts of GptCuda, kept free of CUDA so that they can be checked on a machine
// without a GPU: config and token checks, the seeded initial weights, the per-step token upload
// (inputs, targets and the embedding's scatter plan) and the FLOP count. Each mirrors what
// core/model does for Gpt<T>, so the two models accept, reject and start from the same things.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/model/gpt.hpp"
#include "core/model/gpt_layout.hpp"
#include "core/workload/model_config.hpp"
#include "core/workload/workload_model.hpp"

namespace asteria::real::cuda {

// The support check, weight index, layout and initial weights are model::'s (gpt_layout.hpp).
using model::check_supported;
using model::index_weights;
using model::initial_parameters;
using model::tensor_offsets;
using model::WeightIndex;

// Checks tokens as Gpt does (InputError, source "tokens") and returns L, the input length.
std::int64_t check_tokens(const workload::ModelConfig& config, std::span<const model::TokenId> tokens, int batch);

// One step's integer upload, laid out as one array so it travels in one copy:
//   [0, n)                       input ids (positions [0, L) of each sequence), n = batch · L
//   [n, 2n)                      target ids (positions [1, L + 1))
//   [2n, 2n + u)                 the u distinct input ids, ascending
//   [2n + u, 2n + 2u + 1)        start of each distinct id's run in `positions` (u + 1 entries)
//   [2n + 2u + 1, 3n + 2u + 1)   token positions grouped by id, ascending within an id
// The scatter plan lets the embedding gradient add each id's rows in token order, each entry by
// one thread and no atomics, so the sum is deterministic and in Gpt's order.
struct TokenUpload {
  std::int64_t tokens = 0;    // n
  std::int64_t distinct = 0;  // u
  std::vector<std::int32_t> values;

  std::size_t inputs_at() const noexcept { return 0; }
  std::size_t targets_at() const noexcept { return static_cast<std::size_t>(tokens); }
  std::size_t ids_at() const noexcept { return static_cast<std::size_t>(2 * tokens); }
  std::size_t starts_at() const noexcept { return static_cast<std::size_t>(2 * tokens + distinct); }
  std::size_t positions_at() const noexcept { return static_cast<std::size_t>(2 * tokens + 2 * distinct + 1); }
};
// Fills `upload` (reusing its storage) from checked tokens.
void stage_tokens(std::span<const model::TokenId> tokens, int batch, std::int64_t length, TokenUpload& upload);

}  // namespace asteria::real::cuda

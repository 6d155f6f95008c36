// Token checks and the activation layout of one step.
#include <string>

#include "core/common/error.hpp"
#include "core/model/gpt_state.hpp"

namespace asteria::model {

using linalg::index;

namespace {

// Returns L, the length of each sequence's inputs.
index check_tokens(const workload::ModelConfig& c, std::span<const TokenId> tokens, int batch) {
  if (batch < 1) throw InputError("tokens", "batch", "expected at least 1 sequence, found " + std::to_string(batch));
  const auto size = static_cast<index>(tokens.size());
  const index per_sequence = size / batch;
  const index length = per_sequence - 1;
  if (size % batch != 0 || length < 1 || length > c.sequence_length)
    throw InputError("tokens", "size",
                     "expected batch (" + std::to_string(batch) + ") x (L + 1) ids with 1 <= L <= sequence_length (" +
                         std::to_string(c.sequence_length) + "), found " + std::to_string(size) + " ids");
  for (std::size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] < 0 || tokens[i] >= c.vocab)
      throw InputError("tokens", "id",
                       "expected ids in [0, " + std::to_string(c.vocab) + "), found " + std::to_string(tokens[i]) +
                           " at position " + std::to_string(i));
  return length;
}

// Points every buffer of the workspace at consecutive ranges handed out by take(elements).
template <linalg::Real T, class Take>
void lay_out(Workspace<T>& ws, const workload::ModelConfig& c, index batch, index length, Take take) {
  const index n = batch * length;
  const index d = c.d_model;
  const index f = c.mlp_hidden;
  const bool swiglu = c.mlp == workload::MlpKind::swiglu;
  for (LayerActivations<T>& a : ws.layers) {
    a.input = take(n * d);
    a.attn_in = take(n * d);
    a.attn_inv_rms = take(n);
    a.q = take(n * d);
    a.k = take(n * d);
    a.v = take(n * d);
    a.probs = take(batch * c.heads * length * length);
    a.attn_out = take(n * d);
    a.middle = take(n * d);
    a.mlp_in = take(n * d);
    a.mlp_inv_rms = take(n);
    a.hidden_in = take(n * f);
    a.hidden_up = swiglu ? take(n * f) : nullptr;
    a.hidden_act = take(n * f);
  }
  ws.final_in = take(n * d);
  ws.final_out = take(n * d);
  ws.final_inv_rms = take(n);
  ws.logits = take(n * c.vocab);
  ws.log_sum_exp = take(n);
  ws.d_residual = take(n * d);
  ws.d_norm = take(n * d);
  ws.d_attn_out = take(n * d);
  ws.dq = take(n * d);
  ws.dk = take(n * d);
  ws.dv = take(n * d);
  ws.d_hidden_in = take(n * f);
  ws.d_hidden_up = swiglu ? take(n * f) : nullptr;
  ws.d_probs = take(length * length);
}

}  // namespace

template <linalg::Real T>
void prepare_workspace(GptState<T>& state, std::span<const TokenId> tokens, int batch) {
  const workload::ModelConfig& c = state.config;
  const index length = check_tokens(c, tokens, batch);
  Workspace<T>& ws = state.workspace;
  const index n = batch * length;

  ws.inputs.resize(static_cast<std::size_t>(n));
  ws.targets.resize(static_cast<std::size_t>(n));
  for (index b = 0; b < batch; ++b)
    for (index i = 0; i < length; ++i) {
      ws.inputs[static_cast<std::size_t>(b * length + i)] = tokens[static_cast<std::size_t>(b * (length + 1) + i)];
      ws.targets[static_cast<std::size_t>(b * length + i)] = tokens[static_cast<std::size_t>(b * (length + 1) + i + 1)];
    }
  if (ws.batch == batch && ws.length == length) return;  // same layout as the last step

  std::size_t needed = 0;
  lay_out(ws, c, batch, length, [&](index elements) -> T* {
    needed += static_cast<std::size_t>(elements);
    return nullptr;
  });
  if (ws.arena.size() < needed) ws.arena.resize(needed);
  std::size_t used = 0;
  lay_out(ws, c, batch, length, [&](index elements) -> T* {
    T* at = ws.arena.data() + used;
    used += static_cast<std::size_t>(elements);
    return at;
  });
  ws.batch = batch;
  ws.length = length;
  ws.tokens = n;
}

template void prepare_workspace<float>(GptState<float>&, std::span<const TokenId>, int);
template void prepare_workspace<double>(GptState<double>&, std::span<const TokenId>, int);

}  // namespace asteria::model

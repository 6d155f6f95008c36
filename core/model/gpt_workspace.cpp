// Token checks and the activation layout of one step (a whole batch, or its micro-batches).
#include <algorithm>
#include <limits>
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

// Splits `batch` sequences of L + 1 ids into the inputs and targets of ws.
template <linalg::Real T>
void copy_tokens(Workspace<T>& ws, std::span<const TokenId> tokens, index batch, index length) {
  const index n = batch * length;
  ws.inputs.resize(static_cast<std::size_t>(n));
  ws.targets.resize(static_cast<std::size_t>(n));
  for (index b = 0; b < batch; ++b)
    for (index i = 0; i < length; ++i) {
      ws.inputs[static_cast<std::size_t>(b * length + i)] = tokens[static_cast<std::size_t>(b * (length + 1) + i)];
      ws.targets[static_cast<std::size_t>(b * length + i)] = tokens[static_cast<std::size_t>(b * (length + 1) + i + 1)];
    }
}

// Points the buffers that live across units (activations, d_residual) at consecutive ranges
// handed out by take(elements).
template <linalg::Real T, class Take>
void lay_out_activations(Workspace<T>& ws, const workload::ModelConfig& c, index batch, index length, Take take) {
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
}

// The backward scratch, used within one unit.
template <linalg::Real T, class Take>
void lay_out_scratch(Workspace<T>& ws, const workload::ModelConfig& c, index batch, index length, Take take) {
  const index n = batch * length;
  const index d = c.d_model;
  const index f = c.mlp_hidden;
  ws.d_norm = take(n * d);
  ws.d_attn_out = take(n * d);
  ws.dq = take(n * d);
  ws.dk = take(n * d);
  ws.dv = take(n * d);
  ws.d_hidden_in = take(n * f);
  ws.d_hidden_up = c.mlp == workload::MlpKind::swiglu ? take(n * f) : nullptr;
  ws.d_probs = take(length * length);
}

template <linalg::Real T>
void share_scratch(const Workspace<T>& from, Workspace<T>& to) {
  to.d_norm = from.d_norm;
  to.d_attn_out = from.d_attn_out;
  to.dq = from.dq;
  to.dk = from.dk;
  to.dv = from.dv;
  to.d_hidden_in = from.d_hidden_in;
  to.d_hidden_up = from.d_hidden_up;
  to.d_probs = from.d_probs;
}

// Runs lay_out(take) twice: once to count the elements (growing the arena if needed), once to
// hand out consecutive ranges of the arena.
template <linalg::Real T, class LayOut>
void place(std::vector<T>& arena, LayOut lay_out) {
  std::size_t needed = 0;
  lay_out([&](index elements) -> T* {
    needed += static_cast<std::size_t>(elements);
    return nullptr;
  });
  if (arena.size() < needed) arena.resize(needed);
  std::size_t used = 0;
  lay_out([&](index elements) -> T* {
    T* at = arena.data() + used;
    used += static_cast<std::size_t>(elements);
    return at;
  });
}

}  // namespace

template <linalg::Real T>
void prepare_workspace(GptState<T>& state, std::span<const TokenId> tokens, int batch) {
  const workload::ModelConfig& c = state.config;
  const index length = check_tokens(c, tokens, batch);
  Workspace<T>& ws = state.workspace;
  copy_tokens(ws, tokens, batch, length);
  if (ws.batch == batch && ws.length == length) return;  // same layout as the last step

  place(ws.arena, [&](auto take) {
    lay_out_activations(ws, c, batch, length, take);
    lay_out_scratch(ws, c, batch, length, take);
  });
  ws.batch = batch;
  ws.length = length;
  ws.tokens = batch * length;
}

template <linalg::Real T>
void prepare_micro_batches(const workload::ModelConfig& c, MicroBatchWorkspaces<T>& micro,
                           std::span<const TokenId> tokens, int batch, int micro_batches) {
  const index length = check_tokens(c, tokens, batch);
  if (micro_batches < 1 || batch % micro_batches != 0)
    throw InputError("tokens", "micro_batches",
                     "expected a count >= 1 that divides the batch (" + std::to_string(batch) + " sequences), found " +
                         std::to_string(micro_batches));
  const index per_micro = batch / micro_batches;
  const auto count = static_cast<std::size_t>(micro_batches);
  if (micro.slices.size() < count) micro.slices.resize(count);
  for (std::size_t m = 0; m < count; ++m) {
    Workspace<T>& ws = micro.slices[m];
    ws.layers.resize(static_cast<std::size_t>(c.layers));
    const auto ids = static_cast<std::size_t>(per_micro * (length + 1));
    copy_tokens(ws, tokens.subspan(m * ids, ids), per_micro, length);
  }
  if (micro.count == micro_batches && micro.batch == per_micro && micro.length == length) return;

  place(micro.arena, [&](auto take) {
    lay_out_scratch(micro.slices[0], c, per_micro, length, take);
    for (std::size_t m = 0; m < count; ++m) lay_out_activations(micro.slices[m], c, per_micro, length, take);
  });
  for (std::size_t m = 0; m < count; ++m) {
    Workspace<T>& ws = micro.slices[m];
    share_scratch(micro.slices[0], ws);
    ws.batch = per_micro;
    ws.length = length;
    ws.tokens = per_micro * length;
  }
  micro.count = micro_batches;
  micro.batch = per_micro;
  micro.length = length;
}

double workspace_bytes(const workload::ModelConfig& config, index batch, index length, std::size_t element_bytes) {
  // The layouts multiply sizes in 64-bit integers: beyond 2^62 elements nothing fits anyway.
  const double n = static_cast<double>(batch) * static_cast<double>(length);
  const double widest = static_cast<double>(std::max({config.d_model, config.mlp_hidden, config.vocab}));
  const double scores = static_cast<double>(batch) * static_cast<double>(config.heads) * static_cast<double>(length) *
                        static_cast<double>(length);
  if (std::max(n * widest, scores) * static_cast<double>(std::max<index>(config.layers, 1)) > 0x1p62)
    return std::numeric_limits<double>::infinity();
  // Every decoder layer lays out the same: count the rest (no layer), then one layer.
  double elements = 0.0;
  auto count = [&elements](index e) -> float* {
    elements += static_cast<double>(e);
    return nullptr;
  };
  Workspace<float> ws;
  lay_out_activations(ws, config, batch, length, count);
  lay_out_scratch(ws, config, batch, length, count);
  const double rest = elements;  // the head's activations and the scratch
  ws.layers.resize(1);
  lay_out_activations(ws, config, batch, length, count);
  lay_out_scratch(ws, config, batch, length, count);
  const double layer = elements - 2.0 * rest;  // the second count adds rest once more
  return (rest + layer * static_cast<double>(config.layers)) * static_cast<double>(element_bytes);
}

template void prepare_workspace<float>(GptState<float>&, std::span<const TokenId>, int);
template void prepare_workspace<double>(GptState<double>&, std::span<const TokenId>, int);
template void prepare_micro_batches<float>(const workload::ModelConfig&, MicroBatchWorkspaces<float>&,
                                           std::span<const TokenId>, int, int);
template void prepare_micro_batches<double>(const workload::ModelConfig&, MicroBatchWorkspaces<double>&,
                                            std::span<const TokenId>, int, int);

}  // namespace asteria::model

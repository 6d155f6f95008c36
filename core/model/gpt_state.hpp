#pragma once
// Internal state of Gpt<T>: weights, gradients, the index of each layer's weights, and the
// activation workspace; the forward and backward passes are free functions over it, each in
// its own file.
#include <cstddef>
#include <span>
#include <vector>

#include "core/linalg/matrix.hpp"
#include "core/model/cross_entropy.hpp"
#include "core/model/gpt_layout.hpp"
#include "core/model/rope.hpp"
#include "core/workload/workload_model.hpp"

namespace asteria::model {

// What one decoder layer keeps from forward for backward; pointers into Workspace::arena.
// Widths: d = d_model, f = mlp_hidden, per token row.
template <linalg::Real T>
struct LayerActivations {
  T* input = nullptr;         // residual stream entering the layer (d)
  T* attn_in = nullptr;       // attention norm output (d)
  T* attn_inv_rms = nullptr;  // one per token
  T* q = nullptr;             // after RoPE (d)
  T* k = nullptr;             // after RoPE (d)
  T* v = nullptr;             // (d)
  T* probs = nullptr;         // attention probabilities, batch · heads · L x L
  T* attn_out = nullptr;      // heads concatenated, before the output projection (d)
  T* middle = nullptr;        // residual stream after attention (d)
  T* mlp_in = nullptr;        // MLP norm output (d)
  T* mlp_inv_rms = nullptr;   // one per token
  T* hidden_in = nullptr;     // gate (SwiGLU) or fc1 output (GELU) (f)
  T* hidden_up = nullptr;     // up (SwiGLU only) (f)
  T* hidden_act = nullptr;    // silu(gate) ⊙ up or gelu(fc1 output) (f)
};

// Activations and backward scratch for the current (batch, L). The arena only grows, so a step
// no larger than one already seen allocates nothing. A micro-batch's workspace lives in its
// MicroBatchWorkspaces' arena instead (its own arena stays empty).
template <linalg::Real T>
struct Workspace {
  linalg::index batch = 0;
  linalg::index length = 0;
  linalg::index tokens = 0;  // batch · length
  std::vector<T> arena;
  std::vector<TokenId> inputs;   // tokens ids, positions [0, L) of each sequence
  std::vector<TokenId> targets;  // positions [1, L + 1)
  std::vector<LayerActivations<T>> layers;
  T* final_in = nullptr;        // residual stream after the last layer (d)
  T* final_out = nullptr;       // final norm output (d)
  T* final_inv_rms = nullptr;   // one per token
  T* logits = nullptr;          // (vocab); becomes the logits gradient in backward
  T* log_sum_exp = nullptr;     // one per token
  T* d_residual = nullptr;      // gradient of the residual stream (d), kept between backward units
  // Backward scratch, used within one unit's backward only (shared by micro-batches).
  T* d_norm = nullptr;      // gradient of a norm output (d)
  T* d_attn_out = nullptr;  // (d)
  T* dq = nullptr;
  T* dk = nullptr;
  T* dv = nullptr;
  T* d_hidden_in = nullptr;  // (f)
  T* d_hidden_up = nullptr;  // (f, SwiGLU only)
  T* d_probs = nullptr;      // L x L, one (sequence, head) at a time
};

template <linalg::Real T>
struct GptState {
  workload::ModelConfig config;
  std::vector<workload::WeightSpec> specs;
  std::vector<std::size_t> offsets;  // of each tensor in values and gradients
  std::vector<T> values;
  std::vector<T> gradients;
  WeightIndex index;
  RotaryTable<T> rope;
  Workspace<T> workspace;
  std::vector<T*> targets;  // of a whole-batch backward: each tensor's gradient (one per tensor)

  linalg::MatrixView<T> weight(std::size_t i) {
    return {values.data() + offsets[i], specs[i].rows, specs[i].cols};
  }
  linalg::MatrixView<T> gradient(std::size_t i) {
    return {gradients.data() + offsets[i], specs[i].rows, specs[i].cols};
  }
  // A norm gain, or an empty span when the norm has none.
  std::span<const T> gain(std::size_t i) const {
    if (i == kNoWeight) return {};
    return {values.data() + offsets[i], static_cast<std::size_t>(specs[i].elements())};
  }
  std::span<T> gain_gradient(std::size_t i) {
    if (i == kNoWeight) return {};
    return {gradients.data() + offsets[i], static_cast<std::size_t>(specs[i].elements())};
  }
};

// A tokens x width view of a workspace buffer.
template <linalg::Real T>
linalg::MatrixView<T> rows_of(T* data, linalg::index tokens, linalg::index width) {
  return {data, tokens, width};
}

// The first `elements` values of a workspace buffer.
template <linalg::Real T>
std::span<T> flat(T* data, linalg::index elements) {
  return {data, static_cast<std::size_t>(elements)};
}

// Checks `tokens` (batch sequences of L + 1 ids, 1 <= L <= sequence_length, ids in [0, vocab))
// and sizes the workspace for them; throws InputError (source "tokens").
template <linalg::Real T>
void prepare_workspace(GptState<T>& state, std::span<const TokenId> tokens, int batch);

// One workspace per micro-batch of a step (consecutive equal slices of the batch's sequences),
// all in one arena that only grows; the backward scratch is shared by all of them.
template <linalg::Real T>
struct MicroBatchWorkspaces {
  std::vector<T> arena;
  std::vector<Workspace<T>> slices;  // the first `count` are this step's
  int count = 0;
  linalg::index batch = 0;   // sequences per micro-batch
  linalg::index length = 0;
};

// Checks `tokens` as prepare_workspace does, and that micro_batches divides batch (InputError
// naming source "tokens", field "micro_batches"); then sizes `micro` for them and copies each
// slice's inputs and targets. Nothing changes when a check fails.
template <linalg::Real T>
void prepare_micro_batches(const workload::ModelConfig& config, MicroBatchWorkspaces<T>& micro,
                           std::span<const TokenId> tokens, int batch, int micro_batches);

// The compute units of a pass, each over one workspace (a whole batch or a micro-batch): the
// embedding, each decoder layer, and the final norm + head + loss. forward and backward run them
// all in order on state.workspace.
template <linalg::Real T>
void embedding_forward(GptState<T>& state, Workspace<T>& ws);
template <linalg::Real T>
void decoder_forward(GptState<T>& state, std::size_t layer, Workspace<T>& ws);
// Returns the summed (not mean) loss of the workspace's tokens.
template <linalg::Real T>
double head_forward(GptState<T>& state, Workspace<T>& ws);

// Backward units: each overwrites the gradient of the tensors it owns at targets[i] (a tied
// embedding: head_backward overwrites it, embedding_backward adds to it), and passes the
// residual gradient on in ws.d_residual (head_backward starts it). `scale` multiplies the loss
// gradient: 1 / (tokens the loss is averaged over).
template <linalg::Real T>
void head_backward(GptState<T>& state, const Workspace<T>& ws, T scale, std::span<T* const> targets);
template <linalg::Real T>
void decoder_backward(GptState<T>& state, std::size_t layer, const Workspace<T>& ws, std::span<T* const> targets);
template <linalg::Real T>
void embedding_backward(GptState<T>& state, const Workspace<T>& ws, std::span<T* const> targets);

// Runs the forward pass on the prepared workspace; returns the mean loss.
template <linalg::Real T>
double forward(GptState<T>& state);

// Overwrites every gradient from the activations the last forward kept.
template <linalg::Real T>
void backward(GptState<T>& state);

}  // namespace asteria::model

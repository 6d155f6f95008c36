// The backward pass, unit by unit: from the loss back to the embedding. Each unit reads one
// workspace's activations and writes each tensor's gradient where `targets` points (the step's
// gradients, or a micro-batch's partial), overwriting it. d_residual carries the gradient of the
// residual stream down through the units; each norm's backward adds its input gradient into it.
#include <algorithm>

#include "core/linalg/blas.hpp"
#include "core/model/activations.hpp"
#include "core/model/attention.hpp"
#include "core/model/gpt_state.hpp"
#include "core/model/rmsnorm.hpp"

namespace asteria::model {

using linalg::gemm;
using linalg::index;
using linalg::Op;

namespace {

// For y = x Wᵀ: dW = dyᵀ x (overwritten).
template <linalg::Real T>
void weight_gradient(linalg::ConstMatrixView<T> dy, linalg::ConstMatrixView<T> x, linalg::MatrixView<T> d_weight) {
  gemm<T>(T(1), dy, Op::transpose, x, Op::none, T(0), d_weight);
}

// For y = x Wᵀ: dx = dy W (beta 1 adds to what dx holds).
template <linalg::Real T>
void input_gradient(linalg::ConstMatrixView<T> dy, linalg::ConstMatrixView<T> weight, linalg::MatrixView<T> dx,
                    T beta = T(0)) {
  gemm<T>(T(1), dy, Op::none, weight, Op::none, beta, dx);
}

// Where tensor i's gradient goes: rows x cols at targets[i].
template <linalg::Real T>
linalg::MatrixView<T> target(const GptState<T>& s, std::span<T* const> targets, std::size_t i) {
  return {targets[i], s.specs[i].rows, s.specs[i].cols};
}

// A norm gain's gradient target, or an empty span when the norm has no gain.
template <linalg::Real T>
std::span<T> gain_target(const GptState<T>& s, std::span<T* const> targets, std::size_t i) {
  if (i == kNoWeight) return {};
  return {targets[i], static_cast<std::size_t>(s.specs[i].elements())};
}

}  // namespace

template <linalg::Real T>
void head_backward(GptState<T>& s, const Workspace<T>& ws, T scale, std::span<T* const> targets) {
  const workload::ModelConfig& c = s.config;
  const index n = ws.tokens;
  const index d = c.d_model;
  const linalg::MatrixView<T> logits = rows_of(ws.logits, n, c.vocab);

  // Loss and head: the logits become their gradient in place.
  cross_entropy_backward<T>(logits, flat(ws.log_sum_exp, n), ws.targets, scale, logits);
  // The head's gradient is the embedding's when tied.
  weight_gradient<T>(logits, rows_of(ws.final_out, n, d), target(s, targets, s.index.head));
  input_gradient<T>(logits, s.weight(s.index.head), rows_of(ws.d_norm, n, d));
  std::fill_n(ws.d_residual, n * d, T(0));
  rmsnorm_backward<T>(rows_of(ws.final_in, n, d), s.gain(s.index.final_norm), flat(ws.final_inv_rms, n),
                      rows_of(ws.d_norm, n, d), rows_of(ws.d_residual, n, d),
                      gain_target(s, targets, s.index.final_norm));
}

template <linalg::Real T>
void decoder_backward(GptState<T>& s, std::size_t layer, const Workspace<T>& ws, std::span<T* const> targets) {
  const workload::ModelConfig& c = s.config;
  const LayerWeightIndex& w = s.index.layers[layer];
  const LayerActivations<T>& a = ws.layers[layer];
  const index n = ws.tokens;
  const index d = c.d_model;
  const index f = c.mlp_hidden;
  const auto rows = [n](T* data, index width) { return rows_of(data, n, width); };
  const auto grad = [&](std::size_t i) { return target(s, targets, i); };
  const linalg::MatrixView<T> d_residual = rows(ws.d_residual, d);
  const linalg::MatrixView<T> d_norm = rows(ws.d_norm, d);

  // MLP (output = middle + act W_downᵀ): d_residual is d(output), and passes straight to middle.
  weight_gradient<T>(d_residual, rows(a.hidden_act, f), grad(w.down));
  input_gradient<T>(d_residual, s.weight(w.down), rows(ws.d_hidden_in, f));  // d(act)
  if (c.mlp == workload::MlpKind::swiglu) {
    swiglu_backward<T>(flat(a.hidden_in, n * f), flat(a.hidden_up, n * f), flat(ws.d_hidden_in, n * f),
                       flat(ws.d_hidden_in, n * f), flat(ws.d_hidden_up, n * f));
    weight_gradient<T>(rows(ws.d_hidden_in, f), rows(a.mlp_in, d), grad(w.in));
    weight_gradient<T>(rows(ws.d_hidden_up, f), rows(a.mlp_in, d), grad(w.up));
    input_gradient<T>(rows(ws.d_hidden_in, f), s.weight(w.in), d_norm);
    input_gradient<T>(rows(ws.d_hidden_up, f), s.weight(w.up), d_norm, T(1));
  } else {
    gelu_backward<T>(flat(a.hidden_in, n * f), flat(ws.d_hidden_in, n * f), flat(ws.d_hidden_in, n * f));
    weight_gradient<T>(rows(ws.d_hidden_in, f), rows(a.mlp_in, d), grad(w.in));
    input_gradient<T>(rows(ws.d_hidden_in, f), s.weight(w.in), d_norm);
  }
  rmsnorm_backward<T>(rows(a.middle, d), s.gain(w.mlp_norm), flat(a.mlp_inv_rms, n), d_norm, d_residual,
                      gain_target(s, targets, w.mlp_norm));

  // Attention (middle = input + attn_out W_oᵀ): d_residual is now d(middle).
  weight_gradient<T>(d_residual, rows(a.attn_out, d), grad(w.o));
  input_gradient<T>(d_residual, s.weight(w.o), rows(ws.d_attn_out, d));
  const AttentionShape shape{ws.batch, ws.length, c.heads, c.head_dim()};
  causal_attention_backward<T>(shape, rows(a.q, d), rows(a.k, d), rows(a.v, d),
                               rows_of(a.probs, ws.batch * c.heads * ws.length, ws.length), rows(ws.d_attn_out, d),
                               rows(ws.dq, d), rows(ws.dk, d), rows(ws.dv, d),
                               rows_of(ws.d_probs, ws.length, ws.length));
  rope_backward<T>(rows(ws.dq, d), ws.length, c.heads, s.rope);
  rope_backward<T>(rows(ws.dk, d), ws.length, c.heads, s.rope);
  weight_gradient<T>(rows(ws.dq, d), rows(a.attn_in, d), grad(w.q));
  weight_gradient<T>(rows(ws.dk, d), rows(a.attn_in, d), grad(w.k));
  weight_gradient<T>(rows(ws.dv, d), rows(a.attn_in, d), grad(w.v));
  input_gradient<T>(rows(ws.dq, d), s.weight(w.q), d_norm);
  input_gradient<T>(rows(ws.dk, d), s.weight(w.k), d_norm, T(1));
  input_gradient<T>(rows(ws.dv, d), s.weight(w.v), d_norm, T(1));
  rmsnorm_backward<T>(rows(a.input, d), s.gain(w.attn_norm), flat(a.attn_inv_rms, n), d_norm, d_residual,
                      gain_target(s, targets, w.attn_norm));
}

template <linalg::Real T>
void embedding_backward(GptState<T>& s, const Workspace<T>& ws, std::span<T* const> targets) {
  const index d = s.config.d_model;
  // Scatter-add; a tied embedding's target already holds the head's gradient.
  const linalg::MatrixView<T> d_embedding = target(s, targets, s.index.embedding);
  if (s.index.head != s.index.embedding) linalg::fill(d_embedding, T(0));
  for (index t = 0; t < ws.tokens; ++t) {
    const std::span<T> row = d_embedding.row(ws.inputs[static_cast<std::size_t>(t)]);
    const T* from = ws.d_residual + t * d;
    for (index j = 0; j < d; ++j) row[static_cast<std::size_t>(j)] += from[j];
  }
}

template <linalg::Real T>
void backward(GptState<T>& s) {
  const Workspace<T>& ws = s.workspace;
  for (std::size_t i = 0; i < s.specs.size(); ++i) s.targets[i] = s.gradients.data() + s.offsets[i];
  head_backward<T>(s, ws, T(1) / static_cast<T>(ws.tokens), s.targets);
  for (std::size_t l = ws.layers.size(); l-- > 0;) decoder_backward<T>(s, l, ws, s.targets);
  embedding_backward<T>(s, ws, s.targets);
}

template void head_backward<float>(GptState<float>&, const Workspace<float>&, float, std::span<float* const>);
template void decoder_backward<float>(GptState<float>&, std::size_t, const Workspace<float>&,
                                      std::span<float* const>);
template void embedding_backward<float>(GptState<float>&, const Workspace<float>&, std::span<float* const>);
template void backward<float>(GptState<float>&);
template void head_backward<double>(GptState<double>&, const Workspace<double>&, double, std::span<double* const>);
template void decoder_backward<double>(GptState<double>&, std::size_t, const Workspace<double>&,
                                       std::span<double* const>);
template void embedding_backward<double>(GptState<double>&, const Workspace<double>&, std::span<double* const>);
template void backward<double>(GptState<double>&);

}  // namespace asteria::model

// The forward pass, unit by unit: embedding gather, decoder layers, final norm + head + loss.
// Each unit reads and writes one workspace (the whole batch, or one micro-batch).
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

// y = x Wᵀ for a weight stored out_features x in_features.
template <linalg::Real T>
void project(linalg::ConstMatrixView<T> x, linalg::ConstMatrixView<T> weight, linalg::MatrixView<T> y, T beta = T(0)) {
  gemm<T>(T(1), x, Op::none, weight, Op::transpose, beta, y);
}

}  // namespace

template <linalg::Real T>
void embedding_forward(GptState<T>& s, Workspace<T>& ws) {
  const index d = s.config.d_model;
  // Into the first layer's input (or the final norm's, with no layers).
  T* stream = ws.layers.empty() ? ws.final_in : ws.layers.front().input;
  const linalg::MatrixView<T> embedding = s.weight(s.index.embedding);
  for (index t = 0; t < ws.tokens; ++t)
    std::ranges::copy(embedding.row(ws.inputs[static_cast<std::size_t>(t)]), stream + t * d);
}

template <linalg::Real T>
void decoder_forward(GptState<T>& s, std::size_t layer, Workspace<T>& ws) {
  const workload::ModelConfig& c = s.config;
  const LayerWeightIndex& w = s.index.layers[layer];
  const LayerActivations<T>& a = ws.layers[layer];
  T* output = layer + 1 < ws.layers.size() ? ws.layers[layer + 1].input : ws.final_in;
  const index n = ws.tokens;
  const index d = c.d_model;
  const index f = c.mlp_hidden;
  const auto rows = [n](T* data, index width) { return rows_of(data, n, width); };

  // Attention: norm, projections, RoPE on q and k, causal attention, output projection + residual.
  rmsnorm_forward<T>(rows(a.input, d), s.gain(w.attn_norm), rows(a.attn_in, d), flat(a.attn_inv_rms, n));
  project<T>(rows(a.attn_in, d), s.weight(w.q), rows(a.q, d));
  project<T>(rows(a.attn_in, d), s.weight(w.k), rows(a.k, d));
  project<T>(rows(a.attn_in, d), s.weight(w.v), rows(a.v, d));
  rope_forward<T>(rows(a.q, d), ws.length, c.heads, s.rope);
  rope_forward<T>(rows(a.k, d), ws.length, c.heads, s.rope);
  const AttentionShape shape{ws.batch, ws.length, c.heads, c.head_dim()};
  causal_attention_forward<T>(shape, rows(a.q, d), rows(a.k, d), rows(a.v, d),
                              rows_of(a.probs, ws.batch * c.heads * ws.length, ws.length), rows(a.attn_out, d));
  std::copy_n(a.input, n * d, a.middle);
  project<T>(rows(a.attn_out, d), s.weight(w.o), rows(a.middle, d), T(1));

  // MLP: norm, hidden projections and activation, down projection + residual.
  rmsnorm_forward<T>(rows(a.middle, d), s.gain(w.mlp_norm), rows(a.mlp_in, d), flat(a.mlp_inv_rms, n));
  project<T>(rows(a.mlp_in, d), s.weight(w.in), rows(a.hidden_in, f));
  if (c.mlp == workload::MlpKind::swiglu) {
    project<T>(rows(a.mlp_in, d), s.weight(w.up), rows(a.hidden_up, f));
    swiglu_forward<T>(flat(a.hidden_in, n * f), flat(a.hidden_up, n * f), flat(a.hidden_act, n * f));
  } else {
    gelu_forward<T>(flat(a.hidden_in, n * f), flat(a.hidden_act, n * f));
  }
  std::copy_n(a.middle, n * d, output);
  project<T>(rows(a.hidden_act, f), s.weight(w.down), rows(output, d), T(1));
}

template <linalg::Real T>
double head_forward(GptState<T>& s, Workspace<T>& ws) {
  const workload::ModelConfig& c = s.config;
  const index n = ws.tokens;
  const index d = c.d_model;
  rmsnorm_forward<T>(rows_of(ws.final_in, n, d), s.gain(s.index.final_norm), rows_of(ws.final_out, n, d),
                     flat(ws.final_inv_rms, n));
  project<T>(rows_of(ws.final_out, n, d), s.weight(s.index.head), rows_of(ws.logits, n, c.vocab));
  return cross_entropy_forward<T>(rows_of(ws.logits, n, c.vocab), ws.targets, flat(ws.log_sum_exp, n));
}

template <linalg::Real T>
double forward(GptState<T>& s) {
  Workspace<T>& ws = s.workspace;
  embedding_forward(s, ws);
  for (std::size_t l = 0; l < ws.layers.size(); ++l) decoder_forward(s, l, ws);
  return head_forward(s, ws) / static_cast<double>(ws.tokens);
}

template void embedding_forward<float>(GptState<float>&, Workspace<float>&);
template void decoder_forward<float>(GptState<float>&, std::size_t, Workspace<float>&);
template double head_forward<float>(GptState<float>&, Workspace<float>&);
template double forward<float>(GptState<float>&);
template void embedding_forward<double>(GptState<double>&, Workspace<double>&);
template void decoder_forward<double>(GptState<double>&, std::size_t, Workspace<double>&);
template double head_forward<double>(GptState<double>&, Workspace<double>&);
template double forward<double>(GptState<double>&);

}  // namespace asteria::model

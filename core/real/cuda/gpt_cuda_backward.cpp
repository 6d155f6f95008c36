// The backward pass on the device, from the loss back to the embedding, overwriting every
// gradient. Mirrors core/model/gpt_backward.cpp: d_residual carries the gradient of the residual
// stream down through the layers; each norm's backward adds its input gradient into it.
#include <cmath>

#include "core/real/cuda/gpt_cuda_blas.hpp"
#include "core/real/cuda/gpt_cuda_state.hpp"

namespace asteria::real::cuda {

namespace {

// A norm's input gradient (added into dx) and, when it has a gain, the gain's gradient.
void norm_backward(GptCudaState& s, const float* x, std::size_t gain, const float* inv_rms, const float* dy,
                   float* dx) {
  const std::int64_t n = s.workspace.tokens;
  const std::int64_t d = s.config.d_model;
  kernels::rmsnorm_backward_input(x, s.gain(gain), inv_rms, dy, n, d, dx, s.stream());
  if (gain != model::kNoWeight)
    kernels::rmsnorm_backward_gain(x, inv_rms, dy, n, d, s.workspace.gain_partials, s.gain_gradient(gain),
                                   s.stream());
}

// From d_out (head-major, in head_a) to the head-major gradients of q (head_c), k (head_a) and
// v (head_b). With dP = dO vᵀ: dV = Pᵀ dO; dS = P ⊙ (dP − rowsum(P ⊙ dP)); dQ = scale · dS k;
// dK = scale · dSᵀ q.
void attention_backward(GptCudaState& s, const CudaLayerActivations& a) {
  CudaWorkspace& ws = s.workspace;
  const kernels::AttentionDims dims = s.attention_dims();
  const std::int64_t L = dims.length;
  const std::int64_t hd = dims.head_dim;
  const std::int64_t matrices = dims.batch * dims.heads;
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(hd)));
  const cublasHandle_t blas = s.blas();
  const blas::Operand d_out{ws.head_a, hd, false, L * hd};
  blas::gemm_batched(blas, L, L, hd, 1.0f, d_out, {a.v, hd, true, L * hd}, 0.0f, ws.d_probs, L, L * L, matrices);
  blas::gemm_batched(blas, L, hd, L, 1.0f, {a.probs, L, true, L * L}, d_out, 0.0f, ws.head_b, hd, L * hd, matrices);
  kernels::causal_softmax_backward(a.probs, ws.d_probs, matrices, L, s.stream());
  blas::gemm_batched(blas, L, hd, L, scale, {ws.d_probs, L, false, L * L}, {a.k, hd, false, L * hd}, 0.0f, ws.head_c,
                     hd, L * hd, matrices);
  // d_out (head_a) is no longer needed: dK takes its place.
  blas::gemm_batched(blas, L, hd, L, scale, {ws.d_probs, L, true, L * L}, {a.q, hd, false, L * hd}, 0.0f, ws.head_a,
                     hd, L * hd, matrices);
}

void layer_backward(GptCudaState& s, const model::LayerWeightIndex& w, const CudaLayerActivations& a) {
  const workload::ModelConfig& c = s.config;
  CudaWorkspace& ws = s.workspace;
  const std::int64_t n = ws.tokens;
  const std::int64_t d = c.d_model;
  const std::int64_t f = c.mlp_hidden;
  const cudaStream_t stream = s.stream();
  const cublasHandle_t blas = s.blas();
  const kernels::AttentionDims dims = s.attention_dims();

  // MLP (output = middle + act W_downᵀ): d_residual is d(output), and passes straight to middle.
  blas::weight_gradient(blas, ws.d_residual, a.hidden_act, n, f, d, s.gradient(w.down));
  blas::input_gradient(blas, ws.d_residual, s.weight(w.down), n, f, d, ws.d_hidden_in);  // d(act)
  if (c.mlp == workload::MlpKind::swiglu) {
    kernels::swiglu_backward(a.hidden_in, a.hidden_up, ws.d_hidden_in, ws.d_hidden_in, ws.d_hidden_up, n * f, stream);
    blas::weight_gradient(blas, ws.d_hidden_in, a.mlp_in, n, d, f, s.gradient(w.in));
    blas::weight_gradient(blas, ws.d_hidden_up, a.mlp_in, n, d, f, s.gradient(w.up));
    blas::input_gradient(blas, ws.d_hidden_in, s.weight(w.in), n, d, f, ws.d_norm);
    blas::input_gradient(blas, ws.d_hidden_up, s.weight(w.up), n, d, f, ws.d_norm, 1.0f);
  } else {
    kernels::gelu_backward(a.hidden_in, ws.d_hidden_in, ws.d_hidden_in, n * f, stream);
    blas::weight_gradient(blas, ws.d_hidden_in, a.mlp_in, n, d, f, s.gradient(w.in));
    blas::input_gradient(blas, ws.d_hidden_in, s.weight(w.in), n, d, f, ws.d_norm);
  }
  norm_backward(s, a.middle, w.mlp_norm, a.mlp_inv_rms, ws.d_norm, ws.d_residual);

  // Attention (middle = input + attn_out W_oᵀ): d_residual is now d(middle).
  blas::weight_gradient(blas, ws.d_residual, a.attn_out, n, d, d, s.gradient(w.o));
  blas::input_gradient(blas, ws.d_residual, s.weight(w.o), n, d, d, ws.token_a);  // d(attn_out)
  kernels::tokens_to_heads(ws.token_a, dims, {}, ws.head_a, stream);
  attention_backward(s, a);
  kernels::heads_to_tokens(ws.head_c, dims, s.rotation(), ws.token_a, stream);  // dq, RoPE undone
  kernels::heads_to_tokens(ws.head_a, dims, s.rotation(), ws.token_b, stream);  // dk
  kernels::heads_to_tokens(ws.head_b, dims, {}, ws.token_c, stream);            // dv
  blas::weight_gradient(blas, ws.token_a, a.attn_in, n, d, d, s.gradient(w.q));
  blas::weight_gradient(blas, ws.token_b, a.attn_in, n, d, d, s.gradient(w.k));
  blas::weight_gradient(blas, ws.token_c, a.attn_in, n, d, d, s.gradient(w.v));
  blas::input_gradient(blas, ws.token_a, s.weight(w.q), n, d, d, ws.d_norm);
  blas::input_gradient(blas, ws.token_b, s.weight(w.k), n, d, d, ws.d_norm, 1.0f);
  blas::input_gradient(blas, ws.token_c, s.weight(w.v), n, d, d, ws.d_norm, 1.0f);
  norm_backward(s, a.input, w.attn_norm, a.attn_inv_rms, ws.d_norm, ws.d_residual);
}

}  // namespace

void enqueue_backward(GptCudaState& s) {
  const workload::ModelConfig& c = s.config;
  CudaWorkspace& ws = s.workspace;
  const std::int64_t n = ws.tokens;
  const std::int64_t d = c.d_model;
  const cudaStream_t stream = s.stream();
  const std::int32_t* targets = ws.ids.data() + ws.upload.targets_at();

  // Loss and head: the logits become their gradient in place.
  kernels::cross_entropy_backward(ws.logits, ws.log_sum_exp, targets, n, c.vocab, 1.0f / static_cast<float>(n),
                                  stream);
  blas::weight_gradient(s.blas(), ws.logits, ws.final_out, n, d, c.vocab, s.gradient(s.index.head));  // tied: the embedding's
  blas::input_gradient(s.blas(), ws.logits, s.weight(s.index.head), n, d, c.vocab, ws.d_norm);
  check_cuda(cudaMemsetAsync(ws.d_residual, 0, static_cast<std::size_t>(n * d) * sizeof(float), stream),
             "clear the residual gradient");
  norm_backward(s, ws.final_in, s.index.final_norm, ws.final_inv_rms, ws.d_norm, ws.d_residual);

  for (std::size_t l = ws.layers.size(); l-- > 0;) layer_backward(s, s.index.layers[l], ws.layers[l]);

  // Embedding scatter-add; a tied embedding already holds the head's gradient.
  float* d_embedding = s.gradient(s.index.embedding);
  if (s.index.head != s.index.embedding)
    check_cuda(cudaMemsetAsync(d_embedding, 0, static_cast<std::size_t>(c.vocab * d) * sizeof(float), stream),
               "clear the embedding gradient");
  const std::int32_t* ids = ws.ids.data();
  kernels::embedding_scatter_add(ws.d_residual, ids + ws.upload.ids_at(), ids + ws.upload.starts_at(),
                                 ids + ws.upload.positions_at(), ws.upload.distinct, d, d_embedding, stream);
}

}  // namespace asteria::real::cuda

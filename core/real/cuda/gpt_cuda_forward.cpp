// The forward pass on the device: embedding gather, decoder layers, final norm, head, loss.
// Mirrors core/model/gpt_forward.cpp step by step.
#include <cmath>

#include "core/real/cuda/gpt_cuda_blas.hpp"
#include "core/real/cuda/gpt_cuda_state.hpp"

namespace asteria::real::cuda {

namespace {

// Causal attention of one layer on head-major q, k, v: per (sequence, head) matrix,
// P = softmax(mask(q kᵀ · scale)) kept in a.probs, then P v into head_out (head-major).
void attention_forward(GptCudaState& s, const CudaLayerActivations& a, float* head_out) {
  const kernels::AttentionDims dims = s.attention_dims();
  const std::int64_t L = dims.length;
  const std::int64_t hd = dims.head_dim;
  const std::int64_t matrices = dims.batch * dims.heads;
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(hd)));
  blas::gemm_batched(s.blas(), L, L, hd, scale, {a.q, hd, false, L * hd}, {a.k, hd, true, L * hd}, 0.0f, a.probs, L,
                     L * L, matrices);
  kernels::causal_softmax_forward(a.probs, matrices, L, s.stream());
  blas::gemm_batched(s.blas(), L, hd, L, 1.0f, {a.probs, L, false, L * L}, {a.v, hd, false, L * hd}, 0.0f, head_out,
                     hd, L * hd, matrices);
}

void layer_forward(GptCudaState& s, const model::LayerWeightIndex& w, const CudaLayerActivations& a, float* output) {
  const workload::ModelConfig& c = s.config;
  CudaWorkspace& ws = s.workspace;
  const std::int64_t n = ws.tokens;
  const std::int64_t d = c.d_model;
  const std::int64_t f = c.mlp_hidden;
  const cudaStream_t stream = s.stream();
  const cublasHandle_t blas = s.blas();
  const kernels::AttentionDims dims = s.attention_dims();

  // Attention: norm, projections, RoPE on q and k (fused with the change to head-major),
  // causal attention, output projection + residual.
  kernels::rmsnorm_forward(a.input, s.gain(w.attn_norm), n, d, a.attn_in, a.attn_inv_rms, stream);
  blas::project(blas, a.attn_in, s.weight(w.q), n, d, d, ws.token_a);
  blas::project(blas, a.attn_in, s.weight(w.k), n, d, d, ws.token_b);
  blas::project(blas, a.attn_in, s.weight(w.v), n, d, d, ws.token_c);
  kernels::tokens_to_heads(ws.token_a, dims, s.rotation(), a.q, stream);
  kernels::tokens_to_heads(ws.token_b, dims, s.rotation(), a.k, stream);
  kernels::tokens_to_heads(ws.token_c, dims, {}, a.v, stream);
  attention_forward(s, a, ws.head_a);
  kernels::heads_to_tokens(ws.head_a, dims, {}, a.attn_out, stream);
  check_cuda(cudaMemcpyAsync(a.middle, a.input, static_cast<std::size_t>(n * d) * sizeof(float),
                             cudaMemcpyDeviceToDevice, stream),
             "residual copy");
  blas::project(blas, a.attn_out, s.weight(w.o), n, d, d, a.middle, 1.0f);

  // MLP: norm, hidden projections and activation, down projection + residual.
  kernels::rmsnorm_forward(a.middle, s.gain(w.mlp_norm), n, d, a.mlp_in, a.mlp_inv_rms, stream);
  blas::project(blas, a.mlp_in, s.weight(w.in), n, d, f, a.hidden_in);
  if (c.mlp == workload::MlpKind::swiglu) {
    blas::project(blas, a.mlp_in, s.weight(w.up), n, d, f, a.hidden_up);
    kernels::swiglu_forward(a.hidden_in, a.hidden_up, a.hidden_act, n * f, stream);
  } else {
    kernels::gelu_forward(a.hidden_in, a.hidden_act, n * f, stream);
  }
  check_cuda(cudaMemcpyAsync(output, a.middle, static_cast<std::size_t>(n * d) * sizeof(float),
                             cudaMemcpyDeviceToDevice, stream),
             "residual copy");
  blas::project(blas, a.hidden_act, s.weight(w.down), n, f, d, output, 1.0f);
}

}  // namespace

void enqueue_forward(GptCudaState& s) {
  const workload::ModelConfig& c = s.config;
  CudaWorkspace& ws = s.workspace;
  const std::int64_t n = ws.tokens;
  const std::int64_t d = c.d_model;
  const cudaStream_t stream = s.stream();
  const std::int32_t* inputs = ws.ids.data() + ws.upload.inputs_at();
  const std::int32_t* targets = ws.ids.data() + ws.upload.targets_at();

  float* stream_in = ws.layers.empty() ? ws.final_in : ws.layers.front().input;
  kernels::embedding_gather(s.weight(s.index.embedding), inputs, n, d, stream_in, stream);
  for (std::size_t l = 0; l < ws.layers.size(); ++l) {
    float* output = l + 1 < ws.layers.size() ? ws.layers[l + 1].input : ws.final_in;
    layer_forward(s, s.index.layers[l], ws.layers[l], output);
  }

  kernels::rmsnorm_forward(ws.final_in, s.gain(s.index.final_norm), n, d, ws.final_out, ws.final_inv_rms, stream);
  blas::project(s.blas(), ws.final_out, s.weight(s.index.head), n, d, c.vocab, ws.logits);
  kernels::cross_entropy_forward(ws.logits, targets, n, c.vocab, ws.log_sum_exp, ws.row_loss.data(), stream);
  kernels::sum_rows(ws.row_loss.data(), n, ws.row_loss.data() + n, stream);
}

double read_mean_loss(GptCudaState& s) {
  CudaWorkspace& ws = s.workspace;
  double total = 0.0;
  check_cuda(cudaMemcpyAsync(&total, ws.row_loss.data() + ws.tokens, sizeof(double), cudaMemcpyDeviceToHost,
                             s.stream()),
             "read the loss");
  s.context.synchronize("forward/backward");
  return total / static_cast<double>(ws.tokens);
}

}  // namespace asteria::real::cuda

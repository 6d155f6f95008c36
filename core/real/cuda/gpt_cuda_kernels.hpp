#pragma once
// The elementwise and row-wise kernels of GptCuda, as host functions that launch on `stream`
// and throw (check_launch) on a launch error. Matrices are row-major, one token per row;
// every formula is the one of the matching core/model function, in the same order of
// operations where float rounding would otherwise differ noticeably.
#include <cuda_runtime.h>

#include <cstdint>

namespace asteria::real::cuda::kernels {

// --- embedding (core/model/gpt_forward.cpp, gpt_backward.cpp) ---
// out row t = table row ids[t].
void embedding_gather(const float* table, const std::int32_t* ids, std::int64_t tokens, std::int64_t width,
                      float* out, cudaStream_t stream);
// For each of the `distinct` ids: d_table row ids[k] += rows positions[starts[k] .. starts[k+1])
// of d_rows, in that order (each entry summed by one thread: deterministic, no atomics).
void embedding_scatter_add(const float* d_rows, const std::int32_t* ids, const std::int32_t* starts,
                           const std::int32_t* positions, std::int64_t distinct, std::int64_t width, float* d_table,
                           cudaStream_t stream);

// --- RMSNorm (core/model/rmsnorm.cpp), eps model::kRmsNormEpsilon, sums of squares in double ---
// gain may be null (no learned gain).
void rmsnorm_forward(const float* x, const float* gain, std::int64_t rows, std::int64_t width, float* y,
                     float* inv_rms, cudaStream_t stream);
// dx += r·u − r³·x·mean(u ⊙ x), u = dy ⊙ gain.
void rmsnorm_backward_input(const float* x, const float* gain, const float* inv_rms, const float* dy,
                            std::int64_t rows, std::int64_t width, float* dx, cudaStream_t stream);
// d_gain[j] = Σ_r dy[r, j] · x[r, j] · inv_rms[r] (overwritten), via per-chunk partial sums in
// `partials` (gain_partial_rows() x width floats), so the sum is deterministic.
int gain_partial_rows();
void rmsnorm_backward_gain(const float* x, const float* inv_rms, const float* dy, std::int64_t rows,
                           std::int64_t width, float* partials, float* d_gain, cudaStream_t stream);

// --- attention layout and RoPE (core/model/rope.cpp, attention.cpp) ---
struct AttentionDims {
  std::int64_t batch = 0;
  std::int64_t length = 0;
  std::int64_t heads = 0;
  std::int64_t head_dim = 0;
};
// RoPE's cos and sin per (position, pair), max_length x head_dim/2 each; null: no rotation.
struct Rotation {
  const float* cos = nullptr;
  const float* sin = nullptr;
};
// From tokens x (heads · head_dim) to head-major (batch, heads, length, head_dim), turning each
// (i, i + head_dim/2) pair by +angle (RoPE forward) when `rotation` has a table.
void tokens_to_heads(const float* x, const AttentionDims& dims, Rotation rotation, float* out, cudaStream_t stream);
// The reverse layout change, turning by −angle (RoPE's gradient) when `rotation` has a table.
void heads_to_tokens(const float* x, const AttentionDims& dims, Rotation rotation, float* out, cudaStream_t stream);

// Row i of each length x length matrix keeps columns 0..i: softmax over them in place, zeros
// beyond.
void causal_softmax_forward(float* scores, std::int64_t matrices, std::int64_t length, cudaStream_t stream);
// In place on d_probs: dS_ij = P_ij (dP_ij − Σ_k P_ik dP_ik).
void causal_softmax_backward(const float* probs, float* d_probs, std::int64_t matrices, std::int64_t length,
                             cudaStream_t stream);

// --- activations (core/model/activations.cpp) ---
void gelu_forward(const float* x, float* y, std::int64_t count, cudaStream_t stream);
void gelu_backward(const float* x, const float* dy, float* dx, std::int64_t count, cudaStream_t stream);
void swiglu_forward(const float* gate, const float* up, float* y, std::int64_t count, cudaStream_t stream);
// dy may alias d_gate.
void swiglu_backward(const float* gate, const float* up, const float* dy, float* d_gate, float* d_up,
                     std::int64_t count, cudaStream_t stream);

// --- loss (core/model/cross_entropy.cpp) ---
// Per row: log_sum_exp[r] and row_loss[r] = lse − logits[r, targets[r]] (double).
void cross_entropy_forward(const float* logits, const std::int32_t* targets, std::int64_t rows, std::int64_t vocab,
                           float* log_sum_exp, double* row_loss, cudaStream_t stream);
// *total = Σ row_loss (one block, fixed order: deterministic).
void sum_rows(const double* row_loss, std::int64_t rows, double* total, cudaStream_t stream);
// In place: logits become scale · (softmax − onehot(target)).
void cross_entropy_backward(float* logits, const float* log_sum_exp, const std::int32_t* targets, std::int64_t rows,
                            std::int64_t vocab, float scale, cudaStream_t stream);

}  // namespace asteria::real::cuda::kernels

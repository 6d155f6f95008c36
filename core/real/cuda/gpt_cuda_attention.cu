// Attention's elementwise parts: the token/head-major layout change with RoPE fused in
// (core/model/rope.cpp), and the causal softmax and its gradient (core/model/attention.cpp).
#include "core/real/cuda/gpt_cuda_device.hpp"
#include "core/real/cuda/gpt_cuda_kernels.hpp"
#include "core/real/cuda/gpt_cuda_reduce.cuh"

namespace asteria::real::cuda::kernels {
namespace {

constexpr unsigned kThreads = 256;
constexpr unsigned kRowsPerBlock = kThreads / 32;  // one warp per softmax row

// One thread per (token, head, pair). to_heads: tokens -> head-major, else the reverse.
// `direction` +1 turns by +angle, −1 by −angle; sin == nullptr copies without turning.
__global__ void relayout_kernel(const float* x, AttentionDims dims, const float* cos, const float* sin,
                                float direction, bool to_heads, float* out) {
  const std::int64_t half = dims.head_dim / 2;
  const std::int64_t pairs = dims.batch * dims.length * dims.heads * half;
  const std::int64_t index = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (index >= pairs) return;
  const std::int64_t i = index % half;
  const std::int64_t rest = index / half;
  const std::int64_t h = rest % dims.heads;
  const std::int64_t token = rest / dims.heads;
  const std::int64_t b = token / dims.length;
  const std::int64_t position = token % dims.length;
  const std::int64_t token_at = token * dims.heads * dims.head_dim + h * dims.head_dim;
  const std::int64_t head_at = ((b * dims.heads + h) * dims.length + position) * dims.head_dim;
  const float* from = x + (to_heads ? token_at : head_at);
  float* to = out + (to_heads ? head_at : token_at);
  const float first = from[i];
  const float second = from[i + half];
  if (sin == nullptr) {
    to[i] = first;
    to[i + half] = second;
    return;
  }
  const float c = cos[position * half + i];
  const float s = direction * sin[position * half + i];
  to[i] = first * c - second * s;
  to[i + half] = second * c + first * s;
}

void relayout(const float* x, const AttentionDims& dims, Rotation rotation, float direction, bool to_heads, float* out,
              cudaStream_t stream) {
  const std::int64_t pairs = dims.batch * dims.length * dims.heads * (dims.head_dim / 2);
  if (pairs == 0) return;
  relayout_kernel<<<blocks_for(pairs, kThreads), kThreads, 0, stream>>>(x, dims, rotation.cos, rotation.sin,
                                                                        direction, to_heads, out);
  check_launch(to_heads ? "tokens_to_heads" : "heads_to_tokens");
}

__global__ void causal_softmax_forward_kernel(float* scores, std::int64_t rows, std::int64_t length) {
  const std::int64_t row = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  if (row >= rows) return;  // whole warps leave together: the shuffles below see full warps
  const unsigned lane = threadIdx.x & 31u;
  const std::int64_t kept = row % length + 1;
  float* r = scores + row * length;
  float max = -INFINITY;
  for (std::int64_t j = lane; j < kept; j += 32) max = fmaxf(max, r[j]);
  max = warp_max(max);
  float sum = 0.0f;
  for (std::int64_t j = lane; j < kept; j += 32) {
    const float e = expf(r[j] - max);
    r[j] = e;
    sum += e;
  }
  const float inverse = 1.0f / warp_sum(sum);
  for (std::int64_t j = lane; j < kept; j += 32) r[j] *= inverse;
  for (std::int64_t j = kept + lane; j < length; j += 32) r[j] = 0.0f;
}

__global__ void causal_softmax_backward_kernel(const float* probs, float* d_probs, std::int64_t rows,
                                               std::int64_t length) {
  const std::int64_t row = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  if (row >= rows) return;
  const unsigned lane = threadIdx.x & 31u;
  const std::int64_t kept = row % length + 1;
  const float* p = probs + row * length;
  float* d = d_probs + row * length;
  float dot = 0.0f;
  for (std::int64_t j = lane; j < kept; j += 32) dot += p[j] * d[j];
  dot = warp_sum(dot);
  for (std::int64_t j = lane; j < length; j += 32) d[j] = p[j] * (d[j] - dot);
}

unsigned softmax_blocks(std::int64_t rows) { return static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock); }

}  // namespace

void tokens_to_heads(const float* x, const AttentionDims& dims, Rotation rotation, float* out, cudaStream_t stream) {
  relayout(x, dims, rotation, 1.0f, true, out, stream);
}

void heads_to_tokens(const float* x, const AttentionDims& dims, Rotation rotation, float* out, cudaStream_t stream) {
  relayout(x, dims, rotation, -1.0f, false, out, stream);
}

void causal_softmax_forward(float* scores, std::int64_t matrices, std::int64_t length, cudaStream_t stream) {
  const std::int64_t rows = matrices * length;
  if (rows == 0) return;
  causal_softmax_forward_kernel<<<softmax_blocks(rows), kThreads, 0, stream>>>(scores, rows, length);
  check_launch("causal_softmax_forward");
}

void causal_softmax_backward(const float* probs, float* d_probs, std::int64_t matrices, std::int64_t length,
                             cudaStream_t stream) {
  const std::int64_t rows = matrices * length;
  if (rows == 0) return;
  causal_softmax_backward_kernel<<<softmax_blocks(rows), kThreads, 0, stream>>>(probs, d_probs, rows, length);
  check_launch("causal_softmax_backward");
}

}  // namespace asteria::real::cuda::kernels

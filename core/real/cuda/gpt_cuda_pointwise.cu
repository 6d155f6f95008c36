// Elementwise kernels: GELU (tanh form) and SwiGLU (core/model/activations.cpp), and the token
// embedding's gather and scatter-add (core/model/gpt_forward.cpp, gpt_backward.cpp).
#include "core/real/cuda/gpt_cuda_device.hpp"
#include "core/real/cuda/gpt_cuda_kernels.hpp"
#include "core/real/cuda/gpt_cuda_reduce.cuh"

namespace asteria::real::cuda::kernels {
namespace {

constexpr unsigned kThreads = 256;
constexpr float kGeluCubic = 0.044715f;
constexpr float kSqrtTwoOverPi = 0.7978845608028654f;  // sqrt(2/π), as the reference rounds it

__device__ inline float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

__device__ inline std::int64_t thread_index() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

// gelu(x) = x · sigmoid(2u), u = sqrt(2/π) (x + 0.044715 x³): the tanh form through exp.
__global__ void gelu_forward_kernel(const float* x, float* y, std::int64_t count) {
  const std::int64_t i = thread_index();
  if (i >= count) return;
  const float v = x[i];
  y[i] = v * sigmoid(2.0f * kSqrtTwoOverPi * (v + kGeluCubic * v * v * v));
}

__global__ void gelu_backward_kernel(const float* x, const float* dy, float* dx, std::int64_t count) {
  const std::int64_t i = thread_index();
  if (i >= count) return;
  const float v = x[i];
  const float s = sigmoid(2.0f * kSqrtTwoOverPi * (v + kGeluCubic * v * v * v));
  const float slope = s + v * 2.0f * s * (1.0f - s) * kSqrtTwoOverPi * (1.0f + 3.0f * kGeluCubic * v * v);
  dx[i] = dy[i] * slope;
}

__global__ void swiglu_forward_kernel(const float* gate, const float* up, float* y, std::int64_t count) {
  const std::int64_t i = thread_index();
  if (i >= count) return;
  y[i] = gate[i] * sigmoid(gate[i]) * up[i];
}

// silu'(g) = s (1 + g (1 − s)), s = sigmoid(g).
__global__ void swiglu_backward_kernel(const float* gate, const float* up, const float* dy, float* d_gate,
                                       float* d_up, std::int64_t count) {
  const std::int64_t i = thread_index();
  if (i >= count) return;
  const float g = gate[i];
  const float s = sigmoid(g);
  const float d = dy[i];  // read before d_gate (which may alias dy) is written
  d_up[i] = d * g * s;
  d_gate[i] = d * up[i] * s * (1.0f + g * (1.0f - s));
}

__global__ void embedding_gather_kernel(const float* table, const std::int32_t* ids, std::int64_t tokens,
                                        std::int64_t width, float* out) {
  const std::int64_t i = thread_index();
  if (i >= tokens * width) return;
  const std::int64_t t = i / width;
  out[i] = table[static_cast<std::int64_t>(ids[t]) * width + i % width];
}

// Block (k, c) owns id ids[k] and columns chunk c: adds the id's token rows in token order, as
// the reference's loop does. Chunking the columns keeps many blocks busy when one id (a space
// in byte-level text) fills a large share of the batch.
__global__ void embedding_scatter_add_kernel(const float* d_rows, const std::int32_t* ids, const std::int32_t* starts,
                                             const std::int32_t* positions, std::int64_t width, float* d_table) {
  const std::int64_t k = blockIdx.x;
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.y) * blockDim.x + threadIdx.x;
  if (j >= width) return;
  float* entry = d_table + static_cast<std::int64_t>(ids[k]) * width + j;
  const std::int32_t first = starts[k];
  const std::int32_t last = starts[k + 1];
  float sum = *entry;
  for (std::int32_t p = first; p < last; ++p) sum += d_rows[static_cast<std::int64_t>(positions[p]) * width + j];
  *entry = sum;
}

}  // namespace

void gelu_forward(const float* x, float* y, std::int64_t count, cudaStream_t stream) {
  if (count == 0) return;
  gelu_forward_kernel<<<blocks_for(count, kThreads), kThreads, 0, stream>>>(x, y, count);
  check_launch("gelu_forward");
}

void gelu_backward(const float* x, const float* dy, float* dx, std::int64_t count, cudaStream_t stream) {
  if (count == 0) return;
  gelu_backward_kernel<<<blocks_for(count, kThreads), kThreads, 0, stream>>>(x, dy, dx, count);
  check_launch("gelu_backward");
}

void swiglu_forward(const float* gate, const float* up, float* y, std::int64_t count, cudaStream_t stream) {
  if (count == 0) return;
  swiglu_forward_kernel<<<blocks_for(count, kThreads), kThreads, 0, stream>>>(gate, up, y, count);
  check_launch("swiglu_forward");
}

void swiglu_backward(const float* gate, const float* up, const float* dy, float* d_gate, float* d_up,
                     std::int64_t count, cudaStream_t stream) {
  if (count == 0) return;
  swiglu_backward_kernel<<<blocks_for(count, kThreads), kThreads, 0, stream>>>(gate, up, dy, d_gate, d_up, count);
  check_launch("swiglu_backward");
}

void embedding_gather(const float* table, const std::int32_t* ids, std::int64_t tokens, std::int64_t width,
                      float* out, cudaStream_t stream) {
  if (tokens * width == 0) return;
  embedding_gather_kernel<<<blocks_for(tokens * width, kThreads), kThreads, 0, stream>>>(table, ids, tokens, width,
                                                                                        out);
  check_launch("embedding_gather");
}

void embedding_scatter_add(const float* d_rows, const std::int32_t* ids, const std::int32_t* starts,
                           const std::int32_t* positions, std::int64_t distinct, std::int64_t width, float* d_table,
                           cudaStream_t stream) {
  if (distinct == 0) return;
  const dim3 grid(static_cast<unsigned>(distinct), blocks_for(width, kThreads));
  embedding_scatter_add_kernel<<<grid, kThreads, 0, stream>>>(d_rows, ids, starts, positions, width, d_table);
  check_launch("embedding_scatter_add");
}

}  // namespace asteria::real::cuda::kernels

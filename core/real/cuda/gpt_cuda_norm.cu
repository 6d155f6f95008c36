// RMSNorm forward and backward (core/model/rmsnorm.cpp): one block per row.
#include <algorithm>

#include "core/model/rmsnorm.hpp"
#include "core/real/cuda/gpt_cuda_device.hpp"
#include "core/real/cuda/gpt_cuda_kernels.hpp"
#include "core/real/cuda/gpt_cuda_reduce.cuh"

namespace asteria::real::cuda::kernels {
namespace {

constexpr unsigned kRowThreads = 256;
constexpr int kGainPartialRows = 64;

__global__ void rmsnorm_forward_kernel(const float* x, const float* gain, std::int64_t width, float* y,
                                       float* inv_rms, double epsilon) {
  const std::int64_t row = blockIdx.x;
  const float* in = x + row * width;
  float* out = y + row * width;
  double sum_squares = 0.0;  // double, as the reference: a float sum over wide rows drifts
  for (std::int64_t j = threadIdx.x; j < width; j += blockDim.x) {
    const double v = in[j];
    sum_squares += v * v;
  }
  sum_squares = block_sum(sum_squares);
  const float scale = static_cast<float>(1.0 / sqrt(sum_squares / static_cast<double>(width) + epsilon));
  if (threadIdx.x == 0) inv_rms[row] = scale;
  for (std::int64_t j = threadIdx.x; j < width; j += blockDim.x)
    out[j] = gain == nullptr ? in[j] * scale : in[j] * scale * gain[j];
}

__global__ void rmsnorm_backward_input_kernel(const float* x, const float* gain, const float* inv_rms,
                                              const float* dy, std::int64_t width, float* dx) {
  const std::int64_t row = blockIdx.x;
  const float* in = x + row * width;
  const float* d_out = dy + row * width;
  float* d_in = dx + row * width;
  const float scale = inv_rms[row];
  double dot = 0.0;
  for (std::int64_t j = threadIdx.x; j < width; j += blockDim.x) {
    const float u = gain == nullptr ? d_out[j] : d_out[j] * gain[j];
    dot += static_cast<double>(u) * static_cast<double>(in[j]);
  }
  dot = block_sum(dot);
  const float correction = static_cast<float>(dot / static_cast<double>(width)) * scale * scale * scale;
  for (std::int64_t j = threadIdx.x; j < width; j += blockDim.x) {
    const float u = gain == nullptr ? d_out[j] : d_out[j] * gain[j];
    d_in[j] += scale * u - correction * in[j];
  }
}

// Column j of chunk c: Σ over the chunk's rows, into partials[c · width + j].
__global__ void gain_partial_kernel(const float* x, const float* inv_rms, const float* dy, std::int64_t rows,
                                    std::int64_t width, std::int64_t rows_per_chunk, float* partials) {
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= width) return;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.y) * rows_per_chunk;
  const std::int64_t last = min(rows, first + rows_per_chunk);
  float sum = 0.0f;
  for (std::int64_t r = first; r < last; ++r) sum += dy[r * width + j] * x[r * width + j] * inv_rms[r];
  partials[static_cast<std::int64_t>(blockIdx.y) * width + j] = sum;
}

__global__ void gain_total_kernel(const float* partials, int chunks, std::int64_t width, float* d_gain) {
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= width) return;
  float sum = 0.0f;
  for (int c = 0; c < chunks; ++c) sum += partials[c * width + j];
  d_gain[j] = sum;
}

}  // namespace

void rmsnorm_forward(const float* x, const float* gain, std::int64_t rows, std::int64_t width, float* y,
                     float* inv_rms, cudaStream_t stream) {
  if (rows == 0) return;
  rmsnorm_forward_kernel<<<static_cast<unsigned>(rows), kRowThreads, 0, stream>>>(x, gain, width, y, inv_rms,
                                                                               model::kRmsNormEpsilon);
  check_launch("rmsnorm_forward");
}

void rmsnorm_backward_input(const float* x, const float* gain, const float* inv_rms, const float* dy,
                            std::int64_t rows, std::int64_t width, float* dx, cudaStream_t stream) {
  if (rows == 0) return;
  rmsnorm_backward_input_kernel<<<static_cast<unsigned>(rows), kRowThreads, 0, stream>>>(x, gain, inv_rms, dy,
                                                                                      width, dx);
  check_launch("rmsnorm_backward_input");
}

int gain_partial_rows() { return kGainPartialRows; }

void rmsnorm_backward_gain(const float* x, const float* inv_rms, const float* dy, std::int64_t rows,
                           std::int64_t width, float* partials, float* d_gain, cudaStream_t stream) {
  const std::int64_t chunks = std::max<std::int64_t>(1, std::min<std::int64_t>(rows, kGainPartialRows));
  const std::int64_t rows_per_chunk = (rows + chunks - 1) / chunks;
  const dim3 grid(blocks_for(width, kRowThreads), static_cast<unsigned>(chunks));
  gain_partial_kernel<<<grid, kRowThreads, 0, stream>>>(x, inv_rms, dy, rows, width, rows_per_chunk, partials);
  check_launch("rmsnorm_backward_gain partials");
  gain_total_kernel<<<blocks_for(width, kRowThreads), kRowThreads, 0, stream>>>(partials, static_cast<int>(chunks),
                                                                                width, d_gain);
  check_launch("rmsnorm_backward_gain total");
}

}  // namespace asteria::real::cuda::kernels

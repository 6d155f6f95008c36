// Mean next-token cross-entropy (core/model/cross_entropy.cpp): one block per row of logits;
// sums of exponentials and the loss in double, as the reference.
#include "core/real/cuda/gpt_cuda_device.hpp"
#include "core/real/cuda/gpt_cuda_kernels.hpp"
#include "core/real/cuda/gpt_cuda_reduce.cuh"

namespace asteria::real::cuda::kernels {
namespace {

constexpr unsigned kRowThreads = 256;
constexpr unsigned kSumThreads = 1024;

__global__ void cross_entropy_forward_kernel(const float* logits, const std::int32_t* targets, std::int64_t vocab,
                                             float* log_sum_exp, double* row_loss) {
  const std::int64_t row = blockIdx.x;
  const float* z = logits + row * vocab;
  float max = -INFINITY;
  for (std::int64_t j = threadIdx.x; j < vocab; j += blockDim.x) max = fmaxf(max, z[j]);
  max = block_max(max);
  double sum = 0.0;
  for (std::int64_t j = threadIdx.x; j < vocab; j += blockDim.x) sum += exp(static_cast<double>(z[j]) - max);
  sum = block_sum(sum);
  if (threadIdx.x == 0) {
    const double lse = static_cast<double>(max) + log(sum);
    log_sum_exp[row] = static_cast<float>(lse);
    row_loss[row] = lse - static_cast<double>(z[targets[row]]);
  }
}

__global__ void sum_rows_kernel(const double* row_loss, std::int64_t rows, double* total) {
  double sum = 0.0;
  for (std::int64_t r = threadIdx.x; r < rows; r += blockDim.x) sum += row_loss[r];
  sum = block_sum(sum);
  if (threadIdx.x == 0) *total = sum;
}

__global__ void cross_entropy_backward_kernel(float* logits, const float* log_sum_exp, const std::int32_t* targets,
                                              std::int64_t vocab, float scale) {
  const std::int64_t row = blockIdx.x;
  float* z = logits + row * vocab;
  const float lse = log_sum_exp[row];
  const std::int32_t target = targets[row];
  for (std::int64_t j = threadIdx.x; j < vocab; j += blockDim.x) {
    float d = scale * expf(z[j] - lse);
    if (j == target) d -= scale;
    z[j] = d;
  }
}

}  // namespace

void cross_entropy_forward(const float* logits, const std::int32_t* targets, std::int64_t rows, std::int64_t vocab,
                           float* log_sum_exp, double* row_loss, cudaStream_t stream) {
  if (rows == 0) return;
  cross_entropy_forward_kernel<<<static_cast<unsigned>(rows), kRowThreads, 0, stream>>>(logits, targets, vocab,
                                                                                      log_sum_exp, row_loss);
  check_launch("cross_entropy_forward");
}

void sum_rows(const double* row_loss, std::int64_t rows, double* total, cudaStream_t stream) {
  sum_rows_kernel<<<1, kSumThreads, 0, stream>>>(row_loss, rows, total);
  check_launch("sum_rows");
}

void cross_entropy_backward(float* logits, const float* log_sum_exp, const std::int32_t* targets, std::int64_t rows,
                            std::int64_t vocab, float scale, cudaStream_t stream) {
  if (rows == 0) return;
  cross_entropy_backward_kernel<<<static_cast<unsigned>(rows), kRowThreads, 0, stream>>>(logits, log_sum_exp, targets,
                                                                                       vocab, scale);
  check_launch("cross_entropy_backward");
}

}  // namespace asteria::real::cuda::kernels

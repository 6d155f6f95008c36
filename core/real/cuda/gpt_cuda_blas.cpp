#include "core/real/cuda/gpt_cuda_blas.hpp"

#include <limits>
#include <stdexcept>

#include "core/real/cuda/gpt_cuda_device.hpp"

namespace asteria::real::cuda::blas {

namespace {

// cuBLAS's 32-bit interface takes int sizes.
int checked_int(std::int64_t value) {
  if (value < 0 || value > std::numeric_limits<int>::max())
    throw std::runtime_error("GptCuda: matrix dimension " + std::to_string(value) + " exceeds cuBLAS's int range");
  return static_cast<int>(value);
}

cublasOperation_t op(const Operand& x) { return x.transpose ? CUBLAS_OP_T : CUBLAS_OP_N; }

}  // namespace

void gemm(cublasHandle_t handle, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, Operand a, Operand b,
          float beta, float* c, std::int64_t ldc) {
  if (m == 0 || n == 0) return;
  check_cublas(cublasSgemm(handle, op(b), op(a), checked_int(n), checked_int(m), checked_int(k), &alpha, b.data,
                           checked_int(b.ld), a.data, checked_int(a.ld), &beta, c, checked_int(ldc)),
               "cublasSgemm");
}

void gemm_batched(cublasHandle_t handle, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, Operand a,
                  Operand b, float beta, float* c, std::int64_t ldc, std::int64_t stride_c, std::int64_t batch) {
  if (m == 0 || n == 0 || batch == 0) return;
  check_cublas(cublasSgemmStridedBatched(handle, op(b), op(a), checked_int(n), checked_int(m), checked_int(k), &alpha,
                                         b.data, checked_int(b.ld), b.stride, a.data, checked_int(a.ld), a.stride,
                                         &beta, c, checked_int(ldc), stride_c, checked_int(batch)),
               "cublasSgemmStridedBatched");
}

void project(cublasHandle_t handle, const float* x, const float* weight, std::int64_t tokens, std::int64_t in,
             std::int64_t out, float* y, float beta) {
  gemm(handle, tokens, out, in, 1.0f, {x, in}, {weight, in, true}, beta, y, out);
}

void weight_gradient(cublasHandle_t handle, const float* dy, const float* x, std::int64_t tokens, std::int64_t in,
                     std::int64_t out, float* d_weight) {
  gemm(handle, out, in, tokens, 1.0f, {dy, out, true}, {x, in}, 0.0f, d_weight, in);
}

void input_gradient(cublasHandle_t handle, const float* dy, const float* weight, std::int64_t tokens, std::int64_t in,
                    std::int64_t out, float* dx, float beta) {
  gemm(handle, tokens, in, out, 1.0f, {dy, out}, {weight, in}, beta, dx, in);
}

}  // namespace asteria::real::cuda::blas

#pragma once
// Row-major matrix products on cuBLAS (column-major): a row-major M x N matrix is, read
// column-major, its N x M transpose, so C = op(A) op(B) is computed as Cᵀ = op(B)ᵀ op(A)ᵀ by
// handing cuBLAS the operands swapped with the same op flags. Leading dimensions are row
// lengths of the stored (un-transposed) matrices.
#include <cublas_v2.h>

#include <cstdint>

namespace asteria::real::cuda::blas {

struct Operand {
  const float* data = nullptr;
  std::int64_t ld = 0;      // elements per stored row
  bool transpose = false;   // use the stored matrix transposed
  std::int64_t stride = 0;  // between consecutive matrices of a batch
};

// C (m x n, row length ldc) = alpha · op(A) op(B) + beta · C, with k the inner dimension.
void gemm(cublasHandle_t handle, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, Operand a, Operand b,
          float beta, float* c, std::int64_t ldc);
// `batch` independent products; A, B and C advance by their strides.
void gemm_batched(cublasHandle_t handle, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, Operand a,
                  Operand b, float beta, float* c, std::int64_t ldc, std::int64_t stride_c, std::int64_t batch);

// A linear layer y = x Wᵀ with W stored out x in (PyTorch layout), x tokens x in.
// y (tokens x out) = x Wᵀ + beta · y.
void project(cublasHandle_t handle, const float* x, const float* weight, std::int64_t tokens, std::int64_t in,
             std::int64_t out, float* y, float beta = 0.0f);
// dW (out x in) = dyᵀ x, overwritten.
void weight_gradient(cublasHandle_t handle, const float* dy, const float* x, std::int64_t tokens, std::int64_t in,
                     std::int64_t out, float* d_weight);
// dx (tokens x in) = dy W + beta · dx.
void input_gradient(cublasHandle_t handle, const float* dy, const float* weight, std::int64_t tokens, std::int64_t in,
                    std::int64_t out, float* dx, float beta = 0.0f);

}  // namespace asteria::real::cuda::blas

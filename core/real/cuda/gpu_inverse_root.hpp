#pragma once
// Inverse p-th root on the GPU: (A + εI)^(-1/p) by cuSOLVER syevd and one cuBLAS GEMM, with
// the same epsilon shift as linalg::inverse_root_eigen so the two agree to float tolerance.
#include "core/common/status.hpp"
#include "core/linalg/matrix.hpp"

namespace asteria::real::cuda {

// Host matrices in, host matrix out (staging through device memory). Returns a non-ok Status
// (never non-finite output) on non-finite input, solver failure, or when no device is present.
linalg::index gpu_inverse_root_max_dim() noexcept;
Status gpu_inverse_root(linalg::ConstMatrixView<float> a, double p, double epsilon, linalg::MatrixView<float> out);

}  // namespace asteria::real::cuda

#pragma once
// What a unit of work costs, described so that a hardware model can charge time for it
// without running it: the kind of kernel, its floating-point operations, the bytes it touches,
// and the matrix dimension that dominates it (for c·n³ models of eigendecompositions).
#include <cstdint>
#include <string_view>

namespace asteria::platform {

enum class WorkKind {
  gemm,         // dense matrix product, compute bound
  eigh,         // symmetric eigendecomposition (syevd)
  qr,           // orthogonalization (Householder or Cholesky QR)
  newton,       // coupled Newton inverse-root iteration (a sequence of GEMMs)
  elementwise,  // memory bound: bytes over bandwidth
  other,
};

std::string_view to_string(WorkKind kind) noexcept;

struct Cost {
  WorkKind kind = WorkKind::other;
  double flops = 0.0;
  double bytes = 0.0;
  std::int64_t dimension = 0;  // n for an n x n factorization; 0 when not meaningful
  // A training-step matmul in reduced precision (bf16 on tensor cores, fp32 accumulation), as
  // mixed-precision training runs forward and backward; optimizer kernels stay fp32.
  bool reduced_precision = false;
};

}  // namespace asteria::platform

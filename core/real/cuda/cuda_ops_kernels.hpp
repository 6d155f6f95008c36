#pragma once
// CudaDevice's kernels (cuda_ops_kernels.cu): the rules of core/ops/rules.hpp over strided
// operands, and the reductions, each launched on the given stream. Operations arrive checked.
#include <cuda_runtime.h>

#include "core/ops/operation.hpp"

namespace asteria::real::cuda::ops_kernels {

// A map operation (map, guarded or checked rule). `verdict` is a device int the checked rules use
// for their own check pass (the operation's flag may be raised already by an earlier one).
void launch_map(const ops::MapOp& op, int* verdict, cudaStream_t stream);
// ‖x‖_F into the 1 x 1 f64 result; `partials` holds kNormPartials doubles of device memory.
inline constexpr int kNormPartials = 1024;
void launch_norm(const ops::NormOp& op, double* partials, cudaStream_t stream);
void launch_scale_by_ratio(const ops::ScaleByRatioOp& op, cudaStream_t stream);
void launch_kl_estimates(const ops::KlEstimatesOp& op, cudaStream_t stream);
// x ← x(rows[i], cols[j]); `rows`, `cols` device copies of the orders, `scratch` a device buffer
// of x.rows x x.cols elements.
void launch_permute(const ops::PermuteOp& op, const long long* rows, const long long* cols, void* scratch,
                    cudaStream_t stream);
void launch_check_finite(const ops::CheckFiniteOp& op, cudaStream_t stream);
// Mirrors the lower triangle of a square row-major matrix into the upper one (after cuBLAS syrk).
void launch_mirror_lower(const ops::TensorRef& c, cudaStream_t stream);

}  // namespace asteria::real::cuda::ops_kernels

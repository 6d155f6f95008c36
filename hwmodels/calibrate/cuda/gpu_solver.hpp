#pragma once
// cuSOLVER factorization timings (gpu_solver.cu), used by measure_gpu.
#include <cstdint>
#include <span>

#include "hwmodels/calibrate/cubic_fit.hpp"

namespace asteria::hw::calibrate::gpu {

// cusolverDnSsyevd with eigenvectors on random symmetric matrices; c fitted on the larger sizes.
CubicTimings time_gpu_eigh(std::span<const std::int64_t> sizes, int repeats);

// cusolverDnSgeqrf + cusolverDnSorgqr (QR with explicit Q) on random square matrices.
CubicTimings time_gpu_qr(std::span<const std::int64_t> sizes, int repeats);

}  // namespace asteria::hw::calibrate::gpu

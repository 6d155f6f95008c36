#pragma once
// Warp and block reductions for GptCuda's row kernels. Blocks are a multiple of 32 threads, at
// most 1024; every thread of the block receives the result.
#include <cuda_runtime.h>

#include <cstdint>

namespace asteria::real::cuda::kernels {

inline constexpr unsigned kFullWarp = 0xffffffffu;

template <class T>
__device__ inline T warp_sum(T v) {
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(kFullWarp, v, offset);
  return v;
}

__device__ inline float warp_max(float v) {
  for (int offset = 16; offset > 0; offset >>= 1) v = fmaxf(v, __shfl_xor_sync(kFullWarp, v, offset));
  return v;
}

template <class T>
__device__ inline T block_sum(T v) {
  __shared__ T partial[32];
  const unsigned lane = threadIdx.x & 31u;
  const unsigned warp = threadIdx.x >> 5;
  v = warp_sum(v);
  __syncthreads();  // a previous call's readers are done with `partial`
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  const unsigned warps = blockDim.x >> 5;
  return warp_sum(lane < warps ? partial[lane] : T(0));
}

__device__ inline float block_max(float v) {
  __shared__ float partial[32];
  const unsigned lane = threadIdx.x & 31u;
  const unsigned warp = threadIdx.x >> 5;
  v = warp_max(v);
  __syncthreads();
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  const unsigned warps = blockDim.x >> 5;
  return warp_max(lane < warps ? partial[lane] : -INFINITY);
}

// Blocks of `threads` covering `count` items, one item per thread.
inline unsigned blocks_for(std::int64_t count, unsigned threads) {
  return static_cast<unsigned>((count + threads - 1) / threads);
}

}  // namespace asteria::real::cuda::kernels

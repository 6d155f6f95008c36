#include "core/real/cuda/gpu_inverse_root.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/linalg/blas.hpp"

namespace asteria::real::cuda {
namespace {

using linalg::index;

// RAII owners for the handles and buffers of one call.
struct DeviceBuffer {
  void* ptr = nullptr;
  explicit DeviceBuffer(std::size_t bytes) {
    if (cudaMalloc(&ptr, bytes) != cudaSuccess) ptr = nullptr;
  }
  ~DeviceBuffer() {
    if (ptr) cudaFree(ptr);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr);
  }
};

struct Handles {
  cusolverDnHandle_t solver = nullptr;
  cublasHandle_t blas = nullptr;
  bool ok = false;
  Handles() { ok = cusolverDnCreate(&solver) == CUSOLVER_STATUS_SUCCESS && cublasCreate(&blas) == CUBLAS_STATUS_SUCCESS; }
  ~Handles() {
    if (blas) cublasDestroy(blas);
    if (solver) cusolverDnDestroy(solver);
  }
  Handles(const Handles&) = delete;
  Handles& operator=(const Handles&) = delete;
};

// Column j of the column-major eigenvector matrix scaled by scale[j].
__global__ void scale_columns(float* v, const float* scale, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y;
  if (i < n && j < n) v[static_cast<std::size_t>(j) * n + i] *= scale[j];
}

Status cuda_failure(const char* what, cudaError_t err) {
  return {StatusCode::invalid_argument, std::string("gpu_inverse_root: ") + what + ": " + cudaGetErrorString(err)};
}

}  // namespace

index gpu_inverse_root_max_dim() noexcept { return 1 << 15; }

Status gpu_inverse_root(linalg::ConstMatrixView<float> a, double p, double epsilon, linalg::MatrixView<float> out) {
  const index n = a.rows();
  if (a.cols() != n || out.rows() != n || out.cols() != n || !(p > 0.0) || n > gpu_inverse_root_max_dim())
    return {StatusCode::invalid_argument, "gpu_inverse_root: expected square matrices and p > 0"};
  if (!linalg::all_finite(a)) return {StatusCode::non_finite_input, "gpu_inverse_root: input holds NaN or Inf"};
  if (n == 0) return Status::success();
  const int ni = static_cast<int>(n);
  const auto count = static_cast<std::size_t>(n * n);

  // A + εI, packed contiguously. Symmetric, so row-major storage is valid column-major input.
  std::vector<float> host(count);
  for (index i = 0; i < n; ++i)
    for (index j = 0; j < n; ++j) host[static_cast<std::size_t>(i * n + j)] = a(i, j) + (i == j ? static_cast<float>(epsilon) : 0.0f);

  Handles handles;
  if (!handles.ok) return {StatusCode::invalid_argument, "gpu_inverse_root: cannot create cuSOLVER/cuBLAS handles (no device?)"};
  DeviceBuffer d_a(count * sizeof(float)), d_w(count * sizeof(float)), d_x(count * sizeof(float));
  DeviceBuffer d_eig(static_cast<std::size_t>(n) * sizeof(float)), d_info(sizeof(int));
  if (!d_a.ptr || !d_w.ptr || !d_x.ptr || !d_eig.ptr || !d_info.ptr)
    return {StatusCode::invalid_argument, "gpu_inverse_root: device allocation failed"};
  if (cudaError_t e = cudaMemcpy(d_a.ptr, host.data(), count * sizeof(float), cudaMemcpyHostToDevice); e != cudaSuccess)
    return cuda_failure("copy to device", e);

  int lwork = 0;
  if (cusolverDnSsyevd_bufferSize(handles.solver, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, ni, d_a.as<float>(),
                                  ni, d_eig.as<float>(), &lwork) != CUSOLVER_STATUS_SUCCESS)
    return {StatusCode::invalid_argument, "gpu_inverse_root: syevd workspace query failed"};
  DeviceBuffer d_work(static_cast<std::size_t>(lwork) * sizeof(float));
  if (!d_work.ptr) return {StatusCode::invalid_argument, "gpu_inverse_root: workspace allocation failed"};
  if (cusolverDnSsyevd(handles.solver, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, ni, d_a.as<float>(), ni,
                       d_eig.as<float>(), d_work.as<float>(), lwork, d_info.as<int>()) != CUSOLVER_STATUS_SUCCESS)
    return {StatusCode::invalid_argument, "gpu_inverse_root: syevd launch failed"};
  int info = 0;
  std::vector<float> eig(static_cast<std::size_t>(n));
  if (cudaError_t e = cudaMemcpy(&info, d_info.ptr, sizeof(int), cudaMemcpyDeviceToHost); e != cudaSuccess)
    return cuda_failure("syevd", e);
  if (info != 0) return {StatusCode::no_convergence, "gpu_inverse_root: syevd info " + std::to_string(info)};
  cudaMemcpy(eig.data(), d_eig.ptr, eig.size() * sizeof(float), cudaMemcpyDeviceToHost);

  // The same shift as the CPU eigen method: lift the spectrum so λ_min >= ε.
  const double lambda_min = eig.front();
  const double shift = lambda_min < epsilon ? epsilon - lambda_min : 0.0;
  std::vector<float> scale(eig.size());
  for (std::size_t j = 0; j < eig.size(); ++j) {
    const double lambda = static_cast<double>(eig[j]) + shift;
    scale[j] = static_cast<float>(std::pow(lambda, -0.5 / p));  // X = (V D)(V D)ᵀ, D = Λ^(-1/(2p))
    if (!std::isfinite(scale[j])) return {StatusCode::non_finite_output, "gpu_inverse_root: eigenvalue scale overflow"};
  }
  cudaMemcpy(d_eig.ptr, scale.data(), scale.size() * sizeof(float), cudaMemcpyHostToDevice);
  const dim3 block(256);
  const dim3 grid(static_cast<unsigned>((n + 255) / 256), static_cast<unsigned>(n));
  scale_columns<<<grid, block>>>(d_a.as<float>(), d_eig.as<float>(), ni);
  const float one = 1.0f;
  const float zero = 0.0f;
  if (cublasSgemm(handles.blas, CUBLAS_OP_N, CUBLAS_OP_T, ni, ni, ni, &one, d_a.as<float>(), ni, d_a.as<float>(), ni,
                  &zero, d_x.as<float>(), ni) != CUBLAS_STATUS_SUCCESS)
    return {StatusCode::invalid_argument, "gpu_inverse_root: gemm failed"};
  if (cudaError_t e = cudaMemcpy(host.data(), d_x.ptr, count * sizeof(float), cudaMemcpyDeviceToHost); e != cudaSuccess)
    return cuda_failure("copy to host", e);
  for (index i = 0; i < n; ++i)
    for (index j = 0; j < n; ++j) out(i, j) = host[static_cast<std::size_t>(i * n + j)];  // symmetric
  if (!linalg::all_finite(linalg::ConstMatrixView<float>(out)))
    return {StatusCode::non_finite_output, "gpu_inverse_root: non-finite result"};
  return Status::success();
}

}  // namespace asteria::real::cuda

#include "core/real/cuda/cuda_solver.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/linalg/blas.hpp"

namespace asteria::real::cuda {
namespace {

using linalg::index;

// Column j of the column-major n x n matrix v scaled by scale[j].
__global__ void scale_columns(float* v, const float* scale, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y;
  if (i < n && j < n) v[static_cast<std::size_t>(j) * n + i] *= scale[j];
}

Status failure(const std::string& what) { return {StatusCode::invalid_argument, "cuSOLVER: " + what}; }

Status failure(const std::string& what, cudaError_t err) { return failure(what + ": " + cudaGetErrorString(err)); }

}  // namespace

// Handles and buffers of the device, grown to the largest n solved so far.
struct CudaSolver::Handles {
  cusolverDnHandle_t solver = nullptr;
  cublasHandle_t blas = nullptr;
  std::size_t capacity = 0;  // floats in a, x
  std::size_t work_capacity = 0;
  float* a = nullptr;  // the matrix, then its eigenvectors
  float* x = nullptr;  // a product
  float* values = nullptr;
  float* work = nullptr;
  int* info = nullptr;

  void release() {
    for (void* p : {static_cast<void*>(a), static_cast<void*>(x), static_cast<void*>(values),
                    static_cast<void*>(work)})
      if (p != nullptr) cudaFree(p);
    a = x = values = work = nullptr;
    capacity = work_capacity = 0;
  }
  bool reserve(index n) {
    const auto count = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
    if (count <= capacity) return true;
    release();
    if (cudaMalloc(reinterpret_cast<void**>(&a), count * sizeof(float)) != cudaSuccess ||
        cudaMalloc(reinterpret_cast<void**>(&x), count * sizeof(float)) != cudaSuccess ||
        cudaMalloc(reinterpret_cast<void**>(&values), static_cast<std::size_t>(n) * sizeof(float)) != cudaSuccess) {
      release();
      return false;
    }
    capacity = count;
    return true;
  }
  bool reserve_work(int lwork) {
    if (static_cast<std::size_t>(lwork) <= work_capacity) return true;
    if (work != nullptr) cudaFree(work);
    work = nullptr;
    work_capacity = 0;
    if (cudaMalloc(reinterpret_cast<void**>(&work), static_cast<std::size_t>(lwork) * sizeof(float)) != cudaSuccess)
      return false;
    work_capacity = static_cast<std::size_t>(lwork);
    return true;
  }
};

CudaSolver::CudaSolver(int device) : device_(device), handles_(std::make_unique<Handles>()) {
  if (cudaSetDevice(device) != cudaSuccess) throw std::runtime_error("CudaSolver: cannot use CUDA device " + std::to_string(device));
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess)
    throw std::runtime_error("CudaSolver: cannot query CUDA device " + std::to_string(device));
  name_ = std::string("cuSOLVER on cuda:") + std::to_string(device) + " (" + prop.name + ")";
  if (cusolverDnCreate(&handles_->solver) != CUSOLVER_STATUS_SUCCESS || cublasCreate(&handles_->blas) != CUBLAS_STATUS_SUCCESS ||
      cudaMalloc(reinterpret_cast<void**>(&handles_->info), sizeof(int)) != cudaSuccess) {
    if (handles_->blas != nullptr) cublasDestroy(handles_->blas);
    if (handles_->solver != nullptr) cusolverDnDestroy(handles_->solver);
    throw std::runtime_error("CudaSolver: cannot create cuSOLVER/cuBLAS handles on device " + std::to_string(device));
  }
}

CudaSolver::~CudaSolver() {
  cudaSetDevice(device_);
  handles_->release();
  cudaFree(handles_->info);
  cublasDestroy(handles_->blas);
  cusolverDnDestroy(handles_->solver);
}

Status CudaSolver::eigh(linalg::ConstMatrixView<float> a, double shift, std::vector<float>& values) const {
  const index n = a.rows();
  const int ni = static_cast<int>(n);
  const auto count = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  if (cudaSetDevice(device_) != cudaSuccess) return failure("cannot use the device");
  Handles& h = *handles_;
  if (!h.reserve(n)) return failure("device allocation of " + std::to_string(n) + " x " + std::to_string(n));
  // a + shift·I, packed: symmetric, so row-major storage is valid column-major input.
  std::vector<float> packed(count);
  for (index i = 0; i < n; ++i)
    for (index j = 0; j < n; ++j)
      packed[static_cast<std::size_t>(i * n + j)] = a(i, j) + (i == j ? static_cast<float>(shift) : 0.0f);
  if (cudaError_t e = cudaMemcpy(h.a, packed.data(), count * sizeof(float), cudaMemcpyHostToDevice); e != cudaSuccess)
    return failure("copy to the device", e);
  int lwork = 0;
  if (cusolverDnSsyevd_bufferSize(h.solver, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, ni, h.a, ni, h.values,
                                  &lwork) != CUSOLVER_STATUS_SUCCESS)
    return failure("syevd workspace query");
  if (!h.reserve_work(lwork)) return failure("syevd workspace allocation");
  if (cusolverDnSsyevd(h.solver, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_UPPER, ni, h.a, ni, h.values, h.work, lwork,
                       h.info) != CUSOLVER_STATUS_SUCCESS)
    return failure("syevd launch");
  int info = 0;
  if (cudaError_t e = cudaMemcpy(&info, h.info, sizeof(int), cudaMemcpyDeviceToHost); e != cudaSuccess)
    return failure("syevd", e);
  if (info != 0) return {StatusCode::no_convergence, "cuSOLVER syevd: info " + std::to_string(info)};
  values.resize(static_cast<std::size_t>(n));
  if (cudaError_t e = cudaMemcpy(values.data(), h.values, values.size() * sizeof(float), cudaMemcpyDeviceToHost);
      e != cudaSuccess)
    return failure("copy of the eigenvalues", e);
  return Status::success();
}

Status CudaSolver::inverse_root_eigen(linalg::ConstMatrixView<float> a, double p, double epsilon,
                                      linalg::MatrixView<float> out) const {
  const index n = a.rows();
  if (a.cols() != n || out.rows() != n || out.cols() != n || !(p > 0.0))
    return {StatusCode::invalid_argument, "inverse_root_eigen: expected square matrices and p > 0"};
  if (!linalg::all_finite(a)) return {StatusCode::non_finite_input, "inverse_root_eigen: input holds NaN or Inf"};
  if (n == 0) return Status::success();
  const std::lock_guard lock(mutex_);
  std::vector<float> values;
  Status status = eigh(a, epsilon, values);
  Handles& h = *handles_;
  std::vector<float> result(static_cast<std::size_t>(n) * static_cast<std::size_t>(n));
  if (status.ok()) {
    // The host method's shift: lift the spectrum so λ_min >= ε (inverse_root.hpp).
    const double lambda_min = values.front();
    const double lift = lambda_min < epsilon ? epsilon - lambda_min : 0.0;
    std::vector<float> scale(values.size());
    for (std::size_t j = 0; j < values.size() && status.ok(); ++j) {
      scale[j] = static_cast<float>(std::pow(static_cast<double>(values[j]) + lift, -0.5 / p));  // X = (VD)(VD)ᵀ
      if (!std::isfinite(scale[j])) status = {StatusCode::non_finite_output, "cuSOLVER: eigenvalue scale overflow"};
    }
    const int ni = static_cast<int>(n);
    if (status.ok() && cudaMemcpy(h.values, scale.data(), scale.size() * sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess)
      status = failure("copy of the scales");
    if (status.ok()) {
      const dim3 grid(static_cast<unsigned>((n + 255) / 256), static_cast<unsigned>(n));
      scale_columns<<<grid, 256>>>(h.a, h.values, ni);
      const float one = 1.0f, zero = 0.0f;
      if (cublasSgemm(h.blas, CUBLAS_OP_N, CUBLAS_OP_T, ni, ni, ni, &one, h.a, ni, h.a, ni, &zero, h.x, ni) !=
          CUBLAS_STATUS_SUCCESS)
        status = failure("GEMM");
    }
    if (status.ok()) {
      if (cudaError_t e = cudaMemcpy(result.data(), h.x, result.size() * sizeof(float), cudaMemcpyDeviceToHost);
          e != cudaSuccess)
        status = failure("copy to the host", e);
    }
  }
  if (!status.ok()) {
    if (status.code() == StatusCode::non_finite_output) return status;
    ++host_fallbacks_;
    return SymmetricSolver::inverse_root_eigen(a, p, epsilon, out);
  }
  for (index i = 0; i < n; ++i)
    for (index j = 0; j < n; ++j) out(i, j) = result[static_cast<std::size_t>(i * n + j)];  // symmetric
  if (!linalg::all_finite(linalg::ConstMatrixView<float>(out)))
    return {StatusCode::non_finite_output, "cuSOLVER: non-finite inverse root"};
  ++device_solves_;
  return Status::success();
}

Status CudaSolver::initial_eigenbasis(linalg::ConstMatrixView<float> stats, linalg::MatrixView<float> basis) const {
  const index n = stats.rows();
  if (stats.cols() != n || basis.rows() != n || basis.cols() != n)
    return {StatusCode::invalid_argument, "initial_eigenbasis: expected square stats and basis of the same shape"};
  if (!linalg::all_finite(stats)) return {StatusCode::non_finite_input, "initial_eigenbasis: statistics hold NaN or Inf"};
  if (n == 0) return Status::success();
  const std::lock_guard lock(mutex_);
  std::vector<float> values;
  Status status = eigh(stats, 1e-30, values);  // SOAP's ridge, as the host adds it
  std::vector<float> vectors(static_cast<std::size_t>(n) * static_cast<std::size_t>(n));
  if (status.ok())
    if (cudaError_t e = cudaMemcpy(vectors.data(), handles_->a, vectors.size() * sizeof(float), cudaMemcpyDeviceToHost);
        e != cudaSuccess)
      status = failure("copy of the eigenvectors", e);
  if (!status.ok()) {  // the host solves (and retries in double where float fails)
    ++host_fallbacks_;
    return SymmetricSolver::initial_eigenbasis(stats, basis);
  }
  // Column-major eigenvectors, ascending: basis column j is the eigenvector of the j-th largest.
  for (index i = 0; i < n; ++i)
    for (index j = 0; j < n; ++j) basis(i, j) = vectors[static_cast<std::size_t>((n - 1 - j) * n + i)];
  if (!linalg::all_finite(linalg::ConstMatrixView<float>(basis))) {
    ++host_fallbacks_;
    return SymmetricSolver::initial_eigenbasis(stats, basis);
  }
  ++device_solves_;
  return Status::success();
}

}  // namespace asteria::real::cuda

#pragma once
// The refresh factorizations on one CUDA device (linalg::SymmetricSolver): float inverse roots
// and initial eigenbases by cuSOLVER syevd (plus one cuBLAS GEMM for a root), staged from and to
// the host matrices a refresh job holds. Double precision, and any solve the device fails (no
// convergence, an allocation), fall back to the host's LAPACK, as the base class solves them.
// One solve at a time (cuSOLVER handles are not thread-safe): calls serialize on a mutex.
#include <memory>
#include <mutex>
#include <string>

#include "core/linalg/symmetric_solver.hpp"

namespace asteria::real::cuda {

class CudaSolver final : public linalg::SymmetricSolver {
 public:
  // Throws std::runtime_error when `device` cannot be used.
  explicit CudaSolver(int device);
  ~CudaSolver() override;

  std::string name() const override { return name_; }
  using SymmetricSolver::inverse_root_eigen;
  using SymmetricSolver::initial_eigenbasis;
  Status inverse_root_eigen(linalg::ConstMatrixView<float> a, double p, double epsilon,
                            linalg::MatrixView<float> out) const override;
  Status initial_eigenbasis(linalg::ConstMatrixView<float> stats, linalg::MatrixView<float> basis) const override;

  // Solves the device ran and those it handed back to the host.
  std::int64_t device_solves() const noexcept { return device_solves_; }
  std::int64_t host_fallbacks() const noexcept { return host_fallbacks_; }

 private:
  struct Handles;
  // syevd of `a` + shift·I (a symmetric, n x n): ascending eigenvalues into `values`, the
  // eigenvectors left in the columns of the device buffer the handles hold.
  Status eigh(linalg::ConstMatrixView<float> a, double shift, std::vector<float>& values) const;

  int device_;
  std::string name_;
  std::unique_ptr<Handles> handles_;
  mutable std::mutex mutex_;
  mutable std::int64_t device_solves_ = 0;
  mutable std::int64_t host_fallbacks_ = 0;
};

}  // namespace asteria::real::cuda

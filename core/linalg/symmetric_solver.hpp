#pragma once
// The symmetric factorizations of a preconditioner refresh (an eigendecomposition behind an
// inverse root or an initial eigenbasis), where they run: the host's LAPACK by default. A device
// that runs some of them itself (the CUDA device: cuSOLVER) derives from this and overrides
// those; the rest stay here, run by whichever thread runs the refresh. Matrices are host memory
// either way (a device solver stages them), with the contracts of inverse_root.hpp and
// eigenbasis.hpp, so a job's numbers agree to float tolerance wherever it solves.
#include <string>

#include "core/common/status.hpp"
#include "core/linalg/matrix.hpp"

namespace asteria::linalg {

class SymmetricSolver {
 public:
  SymmetricSolver() = default;
  virtual ~SymmetricSolver() = default;
  SymmetricSolver(const SymmetricSolver&) = delete;
  SymmetricSolver& operator=(const SymmetricSolver&) = delete;

  // Who solves, for a run's description: "host LAPACK", "cuSOLVER on NVIDIA H100 ...".
  virtual std::string name() const { return "host LAPACK"; }

  // (a + εI)^(-1/p) (inverse_root_eigen).
  virtual Status inverse_root_eigen(ConstMatrixView<float> a, double p, double epsilon, MatrixView<float> out) const;
  virtual Status inverse_root_eigen(ConstMatrixView<double> a, double p, double epsilon,
                                    MatrixView<double> out) const;
  // Eigenvectors in descending eigenvalue order (initial_eigenbasis).
  virtual Status initial_eigenbasis(ConstMatrixView<float> stats, MatrixView<float> basis) const;
  virtual Status initial_eigenbasis(ConstMatrixView<double> stats, MatrixView<double> basis) const;
};

}  // namespace asteria::linalg

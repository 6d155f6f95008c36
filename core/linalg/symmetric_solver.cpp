#include "core/linalg/symmetric_solver.hpp"

#include "core/linalg/eigenbasis.hpp"
#include "core/linalg/inverse_root.hpp"

namespace asteria::linalg {

Status SymmetricSolver::inverse_root_eigen(ConstMatrixView<float> a, double p, double epsilon,
                                           MatrixView<float> out) const {
  return linalg::inverse_root_eigen<float>(a, p, epsilon, out);
}

Status SymmetricSolver::inverse_root_eigen(ConstMatrixView<double> a, double p, double epsilon,
                                           MatrixView<double> out) const {
  return linalg::inverse_root_eigen<double>(a, p, epsilon, out);
}

Status SymmetricSolver::initial_eigenbasis(ConstMatrixView<float> stats, MatrixView<float> basis) const {
  return linalg::initial_eigenbasis<float>(stats, basis);
}

Status SymmetricSolver::initial_eigenbasis(ConstMatrixView<double> stats, MatrixView<double> basis) const {
  return linalg::initial_eigenbasis<double>(stats, basis);
}

}  // namespace asteria::linalg

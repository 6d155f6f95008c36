#include "core/real/cuda/gpu_inverse_root.hpp"

#include <stdexcept>
#include <string>

#include "core/real/cuda/cuda_solver.hpp"
#include "core/real/cuda/device.hpp"

namespace asteria::real::cuda {

linalg::index gpu_inverse_root_max_dim() noexcept { return 1 << 15; }

Status gpu_inverse_root(linalg::ConstMatrixView<float> a, double p, double epsilon, linalg::MatrixView<float> out) {
  const linalg::index n = a.rows();
  if (a.cols() != n || out.rows() != n || out.cols() != n || !(p > 0.0) || n > gpu_inverse_root_max_dim())
    return {StatusCode::invalid_argument, "gpu_inverse_root: expected square matrices and p > 0"};
  try {
    const CudaSolver solver(current_device());
    Status status = solver.inverse_root_eigen(a, p, epsilon, out);
    if (status.ok() && solver.device_solves() == 0)
      return {StatusCode::invalid_argument, "gpu_inverse_root: the device did not solve (the host's LAPACK did)"};
    return status;
  } catch (const std::runtime_error& e) {
    return {StatusCode::invalid_argument, std::string("gpu_inverse_root: ") + e.what()};
  }
}

}  // namespace asteria::real::cuda

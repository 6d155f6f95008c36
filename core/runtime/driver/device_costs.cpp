#include "core/runtime/driver/device_costs.hpp"

#include <algorithm>

namespace asteria::runtime {

namespace {

using platform::Cost;
using platform::WorkKind;

}  // namespace

Cost combine(const Cost& a, const Cost& b) {
  Cost total = a.flops >= b.flops ? a : b;
  total.flops = a.flops + b.flops;
  total.bytes = a.bytes + b.bytes;
  return total;
}

PhaseCosts phase_costs(optim::OptimizerKind kind, linalg::index rows, linalg::index cols, std::size_t bytes_per_value) {
  const double m = static_cast<double>(rows);
  const double n = static_cast<double>(cols);
  const double v = static_cast<double>(bytes_per_value);
  const double mn = m * n;
  const double squares = m * m + n * n;           // elements of the two factors
  const double two_sided = m * m * n + m * n * n;  // one product on each side
  const linalg::index dim = std::max(rows, cols);
  PhaseCosts c;
  switch (kind) {
    case optim::OptimizerKind::adamw:
      c.apply = {WorkKind::elementwise, 12.0 * mn, 7.0 * mn * v, dim};  // read w g m v, write w m v
      break;
    case optim::OptimizerKind::shampoo:
      // L += G Gᵀ, R += Gᵀ G (syrk); P = L̂ Ḡ R̂ plus momentum and the Adam graft.
      c.accumulate = {WorkKind::gemm, two_sided, (mn + 2.0 * squares) * v, dim};
      c.apply = {WorkKind::gemm, 2.0 * two_sided + 20.0 * mn, (squares + 9.0 * mn) * v, dim};
      c.publish = {WorkKind::elementwise, 0.0, 2.0 * squares * v, dim};
      break;
    case optim::OptimizerKind::soap:
      // Statistics as Shampoo; the update rotates G in, Adam in the basis, rotates back.
      c.accumulate = {WorkKind::gemm, two_sided, (mn + 2.0 * squares) * v, dim};
      c.apply = {WorkKind::gemm, 4.0 * two_sided + 12.0 * mn, (squares + 9.0 * mn) * v, dim};
      c.publish = {WorkKind::gemm, 2.0 * two_sided + 2.0 * (m * m * m + n * n * n), (2.0 * squares + 3.0 * mn) * v, dim};
      break;
    case optim::OptimizerKind::kl_shampoo:
      // Two-sided statistics through the other side's inverse (G Ŝ⁻¹ Gᵀ), eigenvalue estimates.
      c.accumulate = {WorkKind::gemm, 4.0 * two_sided + 2.0 * (m * m * m + n * n * n), (mn + 4.0 * squares) * v, dim};
      c.apply = {WorkKind::gemm, 4.0 * two_sided + 8.0 * mn, (squares + 5.0 * mn) * v, dim};
      c.publish = {WorkKind::elementwise, 0.0, 2.0 * squares * v, dim};
      break;
    case optim::OptimizerKind::muon: {
      // Five Newton-Schulz iterations on the smaller side: A = X Xᵀ, B = bA + cA², X = aX + BX.
      const double k = std::min(m, n);
      const double l = std::max(m, n);
      c.apply = {WorkKind::gemm, 5.0 * (2.0 * k * k * l + 2.0 * k * k * k + 2.0 * k * k * l) + 10.0 * mn,
                 (5.0 * 3.0 * mn + 4.0 * mn) * v, dim};
      break;
    }
  }
  return c;
}

}  // namespace asteria::runtime

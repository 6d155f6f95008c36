#include "core/optim/shape_model.hpp"

#include <algorithm>

#include "core/common/error.hpp"
#include "core/optim/eigenbasis_refresh.hpp"
#include "core/optim/shampoo_refresh.hpp"

namespace asteria::optim {
namespace {

using platform::Cost;
using platform::WorkKind;

void require_shape(index rows, index cols) {
  if (rows < 0) throw InputError("optimizer shape model", "rows", "expected a size >= 0, found " + std::to_string(rows));
  if (cols < 0) throw InputError("optimizer shape model", "cols", "expected a size >= 0, found " + std::to_string(cols));
}

// Appends tensors at consecutive offsets, as BlockState::add_tensor places them.
class LayoutBuilder {
 public:
  void add(std::string name, index rows, index cols) {
    slots_.push_back({std::move(name), rows, cols, next_});
    next_ += rows * cols;
  }
  std::vector<TensorSlot> take() { return std::move(slots_); }

 private:
  std::vector<TensorSlot> slots_;
  index next_ = 0;
};

// SOAP keeps its momentum in the basis, so its job also computes the change of basis that
// publish() rotates the momentum with (soap.cpp); KL-Shampoo's momentum lives in the original
// space and needs none (kl_shampoo.cpp).
bool computes_change_of_basis(OptimizerKind kind) { return kind == OptimizerKind::soap; }

}  // namespace

std::vector<TensorSlot> state_layout(OptimizerKind kind, const Hyperparameters& hp, index rows, index cols) {
  require_shape(rows, cols);
  LayoutBuilder layout;
  switch (kind) {
    case OptimizerKind::adamw:
      layout.add("exp_avg", rows, cols);
      layout.add("exp_avg_sq", rows, cols);
      break;
    case OptimizerKind::shampoo:
      // Statistics, their inverse roots (identity until the first publish), the EMA of G (only
      // when β1 > 0) and the Adam graft's second moment (only with grafting).
      layout.add("L", rows, rows);
      layout.add("R", cols, cols);
      layout.add("L_root", rows, rows);
      layout.add("R_root", cols, cols);
      if (hp.beta1 > 0.0) layout.add("momentum", rows, cols);
      if (hp.grafting) layout.add("graft_exp_avg_sq", rows, cols);
      break;
    case OptimizerKind::soap:
      // Adam's moments in the current basis, the statistics and the bases.
      layout.add("exp_avg", rows, cols);
      layout.add("exp_avg_sq", rows, cols);
      layout.add("stats_left", rows, rows);
      layout.add("stats_right", cols, cols);
      layout.add("basis_left", rows, rows);
      layout.add("basis_right", cols, cols);
      break;
    case OptimizerKind::kl_shampoo:
      // Momentum, statistics, bases, λ^(−1/2) per side now and at the start of the step of the
      // last accumulate (m + n values beyond ALGORITHMS.md's table; see kl_shampoo.hpp).
      layout.add("exp_avg", rows, cols);
      layout.add("stats_left", rows, rows);
      layout.add("stats_right", cols, cols);
      layout.add("basis_left", rows, rows);
      layout.add("basis_right", cols, cols);
      layout.add("inv_sqrt_eigenvalues_left", rows, 1);
      layout.add("inv_sqrt_eigenvalues_right", cols, 1);
      layout.add("inv_sqrt_eigenvalues_left_before", rows, 1);
      layout.add("inv_sqrt_eigenvalues_right_before", cols, 1);
      break;
    case OptimizerKind::muon:
      layout.add("momentum", rows, cols);
      break;
  }
  return layout.take();
}

std::vector<std::string> state_counters(OptimizerKind kind, const Hyperparameters& /*hp*/) {
  switch (kind) {
    case OptimizerKind::adamw:
    case OptimizerKind::muon: return {"step"};
    // step: updates applied; stats_steps: gradients in L and R; root_stats_steps: stats_steps of
    // the active roots (0: none published yet).
    case OptimizerKind::shampoo: return {"step", "stats_steps", "root_stats_steps"};
    case OptimizerKind::soap:
      return {"statistics_updates", "step", "basis_version", "basis_stats_step", "moments_restart"};
    case OptimizerKind::kl_shampoo:
      return {"statistics_updates", "accumulated_step", "step", "basis_version", "basis_stats_step"};
  }
  return {};
}

std::string_view statistics_counter(OptimizerKind kind) noexcept {
  switch (kind) {
    case OptimizerKind::shampoo: return "stats_steps";
    case OptimizerKind::soap:
    case OptimizerKind::kl_shampoo: return "statistics_updates";
    case OptimizerKind::adamw:
    case OptimizerKind::muon: return {};
  }
  return {};
}

std::size_t state_bytes(OptimizerKind kind, const Hyperparameters& hp, index rows, index cols,
                        std::size_t element_bytes) {
  std::size_t values = 0;
  for (const TensorSlot& slot : state_layout(kind, hp, rows, cols))
    values += static_cast<std::size_t>(slot.rows) * static_cast<std::size_t>(slot.cols);
  return values * element_bytes;
}

int activation_delay(OptimizerKind kind) noexcept {
  switch (kind) {
    case OptimizerKind::soap:
    case OptimizerKind::kl_shampoo: return 1;  // the refresh follows the step's update
    case OptimizerKind::shampoo:                // the step's own update uses the new roots
    case OptimizerKind::adamw:
    case OptimizerKind::muon: return 0;
  }
  return 0;
}

bool refresh_due_after(OptimizerKind kind, const Hyperparameters& hp, std::int64_t statistics_updates) {
  const std::int64_t k = statistics_updates;
  const std::int64_t f = hp.precondition_frequency;
  switch (kind) {
    case OptimizerKind::shampoo: {
      // DS: step == start or (step % f == 0 and step > start).
      const std::int64_t start = hp.effective_start_preconditioning_step();
      return k == start || (k > start && k % f == 0);
    }
    case OptimizerKind::soap:
    case OptimizerKind::kl_shampoo:
      // The initial basis after the first gradient, then whenever the references' own step
      // counter (k − 1, the first step only initialises) reaches a multiple of f.
      return k == 1 || (k > 1 && (k - 1) % f == 0);
    case OptimizerKind::adamw:
    case OptimizerKind::muon: return false;
  }
  return false;
}

std::vector<std::vector<Cost>> refresh_part_costs(OptimizerKind kind, const Hyperparameters& hp, index rows,
                                                  index cols, std::size_t element_bytes, bool first) {
  require_shape(rows, cols);
  std::vector<std::vector<Cost>> parts;
  switch (kind) {
    case OptimizerKind::shampoo: {
      // Roots from scratch every time, so `first` changes nothing.
      const ShampooRootSettings settings = shampoo_root_settings(hp);
      for (const index n : {rows, cols})
        append_root_cost(parts.emplace_back(), settings, n, element_bytes, kNewtonIterationsEstimate);
      break;
    }
    case OptimizerKind::soap:
    case OptimizerKind::kl_shampoo:
      for (const index n : {rows, cols})
        append_eigenbasis_cost(parts.emplace_back(), n, element_bytes, first, hp.basis_orthogonalization,
                               computes_change_of_basis(kind));
      break;
    case OptimizerKind::adamw:
    case OptimizerKind::muon: break;
  }
  return parts;
}

std::vector<Cost> refresh_cost(OptimizerKind kind, const Hyperparameters& hp, index rows, index cols,
                               std::size_t element_bytes, bool first) {
  std::vector<Cost> pieces;
  for (const std::vector<Cost>& part : refresh_part_costs(kind, hp, rows, cols, element_bytes, first))
    pieces.insert(pieces.end(), part.begin(), part.end());
  return pieces;
}

std::size_t refresh_job_bytes(OptimizerKind kind, const Hyperparameters& /*hp*/, index rows, index cols,
                              std::size_t element_bytes) {
  require_shape(rows, cols);
  switch (kind) {
    case OptimizerKind::shampoo: return root_job_bytes(rows, element_bytes) + root_job_bytes(cols, element_bytes);
    case OptimizerKind::soap:
    case OptimizerKind::kl_shampoo: {
      const bool change = computes_change_of_basis(kind);
      return eigenbasis_job_bytes(rows, element_bytes, change) + eigenbasis_job_bytes(cols, element_bytes, change);
    }
    case OptimizerKind::adamw:
    case OptimizerKind::muon: return 0;
  }
  return 0;
}

std::size_t refresh_result_bytes(OptimizerKind kind, const Hyperparameters& /*hp*/, index rows, index cols,
                                 std::size_t element_bytes) {
  require_shape(rows, cols);
  switch (kind) {
    case OptimizerKind::shampoo: return root_result_bytes(rows, element_bytes) + root_result_bytes(cols, element_bytes);
    case OptimizerKind::soap:
    case OptimizerKind::kl_shampoo: {
      const bool change = computes_change_of_basis(kind);
      return eigenbasis_result_bytes(rows, element_bytes, change) + eigenbasis_result_bytes(cols, element_bytes, change);
    }
    case OptimizerKind::adamw:
    case OptimizerKind::muon: return 0;
  }
  return 0;
}

PhaseCosts phase_costs(OptimizerKind kind, index rows, index cols, std::size_t element_bytes) {
  const double m = static_cast<double>(rows);
  const double n = static_cast<double>(cols);
  const double v = static_cast<double>(element_bytes);
  const double mn = m * n;
  const double squares = m * m + n * n;           // elements of the two factors
  const double two_sided = m * m * n + m * n * n;  // one product on each side
  const index dim = std::max(rows, cols);
  PhaseCosts c;
  switch (kind) {
    case OptimizerKind::adamw: {
      // adamw.cpp: the moments (7 flops), then the step m̂/(√v̂ + ε)·lr + decay·w (3 divisions,
      // a square root and 4 flops) twice, once to check it is finite before any weight is
      // written and once to write it, the check and the subtraction (3). Reads w g m v, writes w m v.
      const double per_value = 7.0 + 2.0 * (4.0 * platform::kDivisionFlops + 4.0) + 3.0;
      c.apply = {WorkKind::elementwise, per_value * mn, 7.0 * mn * v, dim};
      break;
    }
    case OptimizerKind::shampoo:
      // L += G Gᵀ, R += Gᵀ G (syrk); P = L̂ Ḡ R̂ plus momentum and the Adam graft.
      c.accumulate = {WorkKind::gemm, two_sided, (mn + 2.0 * squares) * v, dim};
      c.apply = {WorkKind::gemm, 2.0 * two_sided + 20.0 * mn, (squares + 9.0 * mn) * v, dim};
      c.publish = {WorkKind::elementwise, 0.0, 2.0 * squares * v, dim};
      break;
    case OptimizerKind::soap:
      // Statistics as Shampoo; the update rotates G in, Adam in the basis, rotates back.
      c.accumulate = {WorkKind::gemm, two_sided, (mn + 2.0 * squares) * v, dim};
      c.apply = {WorkKind::gemm, 4.0 * two_sided + 12.0 * mn, (squares + 9.0 * mn) * v, dim};
      // Publish rotates the momentum with the change of basis the job computed (soap.cpp); the
      // second moment is permuted (the default soap_second_moment), O(mn). A job started from an
      // older basis (published late, S > 0) forms the change itself, 2(m³ + n³) more: rare, not
      // charged.
      c.publish = {WorkKind::gemm, 2.0 * two_sided, (2.0 * squares + 3.0 * mn) * v, dim};
      break;
    case OptimizerKind::kl_shampoo:
      // Two-sided statistics through the other side's inverse (G Ŝ⁻¹ Gᵀ), eigenvalue estimates.
      c.accumulate = {WorkKind::gemm, 4.0 * two_sided + 2.0 * (m * m * m + n * n * n), (mn + 4.0 * squares) * v, dim};
      c.apply = {WorkKind::gemm, 4.0 * two_sided + 8.0 * mn, (squares + 5.0 * mn) * v, dim};
      c.publish = {WorkKind::elementwise, 0.0, 2.0 * squares * v, dim};
      break;
    case OptimizerKind::muon: {
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

}  // namespace asteria::optim

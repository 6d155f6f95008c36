#include "core/workload/optimizer_blocks.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include "core/common/error.hpp"
#include "core/optim/tensor_optimizer.hpp"
#include "core/runtime/driver/device_costs.hpp"

namespace asteria::workload {
namespace {

using optim::OptimizerKind;
using platform::Cost;
using platform::WorkKind;

// The constants of the refresh jobs' cost() (core/optim/shampoo_refresh.cpp,
// core/optim/eigenbasis_refresh.cpp); tests/workload compares against the jobs themselves.
constexpr double kEighFlopsPerCube = 9.0;            // syevd with eigenvectors
constexpr double kReconstructionFlopsPerCube = 1.0;  // Shampoo: (QD)(QD)ᵀ, one SYRK
constexpr int kNewtonIterationsEstimate = 20;        // Shampoo's coupled Newton, before it runs

double newton_flops_per_cube(double p) {
  const auto k = static_cast<unsigned>(std::max(1L, std::lround(p)));
  const int squarings = std::bit_width(k) - 1;
  const int multiplications = std::popcount(k);
  return 2.0 + squarings + 2.0 * multiplications;
}

void shampoo_factor(std::vector<Cost>& pieces, const optim::Hyperparameters& hp, index n, double element_bytes) {
  const double cube = static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  const double matrix_bytes = static_cast<double>(n) * static_cast<double>(n) * element_bytes;
  if (hp.root_method == optim::RootMethod::eigen) {
    pieces.push_back({WorkKind::eigh, kEighFlopsPerCube * cube, 2.0 * matrix_bytes, n});
    pieces.push_back({WorkKind::gemm, kReconstructionFlopsPerCube * cube, 2.0 * matrix_bytes, n});
  } else {
    const double exponent = hp.exponent_override > 0.0 ? hp.exponent_override : 4.0;
    const double flops = kNewtonIterationsEstimate * newton_flops_per_cube(exponent) * cube;
    pieces.push_back({WorkKind::newton, flops, 4.0 * kNewtonIterationsEstimate * matrix_bytes, n});
  }
}

// SOAP computes the change of basis for its momentum rotation; KL-Shampoo does not.
void eigenbasis_factor(std::vector<Cost>& pieces, const optim::Hyperparameters& hp, index rows, double element_bytes,
                       bool first, bool change_of_basis) {
  const auto n = static_cast<double>(rows);
  const double matrix_bytes = n * n * element_bytes;
  if (first) {
    pieces.push_back({WorkKind::eigh, kEighFlopsPerCube * n * n * n, 2.0 * matrix_bytes, rows});
    return;
  }
  if (change_of_basis) pieces.push_back({WorkKind::gemm, 2.0 * n * n * n, 3.0 * matrix_bytes, rows});
  pieces.push_back({WorkKind::gemm, 2.0 * n * n * n, 3.0 * matrix_bytes, rows});  // power step F·Q
  const double qr_flops = hp.basis_orthogonalization == linalg::Orthogonalization::householder
                              ? 4.0 * n * n * n / 3.0
                              : 2.0 * (7.0 * n * n * n / 3.0);
  pieces.push_back({WorkKind::qr, qr_flops, 2.0 * matrix_bytes, rows});
}

double flops_of(const std::vector<Cost>& pieces) {
  double total = 0.0;
  for (const Cost& c : pieces) total += c.flops;
  return total;
}

}  // namespace

std::size_t state_bytes(OptimizerKind kind, const optim::Hyperparameters& hp, index rows, index cols,
                        std::size_t element_bytes) {
  const auto m = static_cast<std::size_t>(rows);
  const auto n = static_cast<std::size_t>(cols);
  const std::size_t mn = m * n;
  const std::size_t factors = m * m + n * n;  // one m x m and one n x n matrix
  std::size_t values = 0;
  switch (kind) {
    case OptimizerKind::adamw: values = 2 * mn; break;  // m, v
    case OptimizerKind::shampoo:                        // L, R, their roots, momentum, graft v
      values = 2 * factors + (hp.beta1 > 0.0 ? mn : 0) + (hp.grafting ? mn : 0);
      break;
    case OptimizerKind::soap: values = 2 * mn + 2 * factors; break;  // m, v, L, R, Q_L, Q_R
    case OptimizerKind::kl_shampoo:  // m, S_a, S_b, Q_a, Q_b, λ^(−1/2) now and at step start
      values = mn + 2 * factors + 2 * (m + n);
      break;
    case OptimizerKind::muon: values = mn; break;  // momentum
  }
  return values * element_bytes;
}

std::size_t state_bytes(OptimizerKind kind, index rows, index cols, std::size_t element_bytes) {
  return state_bytes(kind, optim::default_hyperparameters(kind), rows, cols, element_bytes);
}

std::vector<Cost> refresh_costs(OptimizerKind kind, const optim::Hyperparameters& hp, index rows, index cols,
                                std::size_t element_bytes, bool first) {
  std::vector<Cost> pieces;
  const auto e = static_cast<double>(element_bytes);
  switch (kind) {
    case OptimizerKind::shampoo:
      shampoo_factor(pieces, hp, rows, e);
      shampoo_factor(pieces, hp, cols, e);
      break;
    case OptimizerKind::soap:
    case OptimizerKind::kl_shampoo: {
      const bool change_of_basis = kind == OptimizerKind::soap;
      eigenbasis_factor(pieces, hp, rows, e, first, change_of_basis);
      eigenbasis_factor(pieces, hp, cols, e, first, change_of_basis);
      break;
    }
    case OptimizerKind::adamw:
    case OptimizerKind::muon: break;
  }
  return pieces;
}

std::vector<BlockSpec> optimizer_blocks(const WorkloadModel& model, OptimizerKind kind,
                                        const optim::Hyperparameters& hp, std::size_t element_bytes) {
  const std::string source = model.config.name + " optimizer";
  optim::validate(hp, source);
  if (element_bytes == 0) throw InputError(source, "element_bytes", "expected a positive size");
  std::vector<BlockSpec> blocks;
  for (std::size_t w = 0; w < model.weights.size(); ++w) {
    const WeightSpec& weight = model.weights[w];
    const std::vector<index> shape =
        weight.order <= 1 ? std::vector<index>{weight.elements()} : std::vector<index>{weight.rows, weight.cols};
    // The blocking optim::TensorOptimizer uses, so the two can never disagree.
    const std::vector<optim::BlockPlan> plan = optim::plan_blocks(kind, hp, shape);
    for (std::size_t b = 0; b < plan.size(); ++b) {
      const optim::BlockRegion& r = plan[b].region;
      const OptimizerKind block_kind = plan[b].kind;
      const optim::Hyperparameters& block_hp = plan[b].hp;
      BlockSpec spec;
      spec.weight = w;
      spec.label = weight.name + " block " + std::to_string(b);
      spec.row0 = r.row0;
      spec.col0 = r.col0;
      spec.rows = r.rows;
      spec.cols = r.cols;
      spec.fallback = weight.order <= 1;
      spec.kind = block_kind;
      spec.state_bytes = state_bytes(block_kind, block_hp, r.rows, r.cols, element_bytes);
      spec.first_refresh = refresh_costs(block_kind, block_hp, r.rows, r.cols, element_bytes, true);
      spec.warm_refresh = refresh_costs(block_kind, block_hp, r.rows, r.cols, element_bytes, false);
      const runtime::PhaseCosts phases = runtime::phase_costs(block_kind, r.rows, r.cols, element_bytes);
      spec.accumulate = phases.accumulate;
      spec.apply = phases.apply;
      spec.publish = phases.publish;
      blocks.push_back(std::move(spec));
    }
  }
  return blocks;
}

std::vector<BlockSpec> optimizer_blocks(const WorkloadModel& model, OptimizerKind kind, index max_precond_dim) {
  optim::Hyperparameters hp = optim::default_hyperparameters(kind);
  hp.max_precond_dim = max_precond_dim;
  return optimizer_blocks(model, kind, hp, static_cast<std::size_t>(model.config.parameter_bytes));
}

OptimizerTotals summarize(const std::vector<BlockSpec>& blocks) {
  OptimizerTotals t;
  t.blocks = blocks.size();
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const BlockSpec& spec = blocks[b];
    t.state_bytes += spec.state_bytes;
    (spec.fallback ? t.fallback_blocks : t.matrix_blocks) += 1;
    if (spec.state_bytes > t.largest_block_bytes) {
      t.largest_block = b;
      t.largest_block_bytes = spec.state_bytes;
    }
    t.first_refresh_flops += flops_of(spec.first_refresh);
    t.warm_refresh_flops += flops_of(spec.warm_refresh);
  }
  return t;
}

}  // namespace asteria::workload

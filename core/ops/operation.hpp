#pragma once
// One device operation as data: what it computes (a rule, a product, a reduction), its operands
// (TensorRefs in the device's memory) and its parameters. Device (device.hpp) checks an operation
// once and hands it to a backend's run(), or to the core-side fallback (host_fallback.hpp) when
// the backend does not support it. The set is small on purpose: everything an optimizer does per
// step is a composition of these.
#include <array>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "core/linalg/blas.hpp"
#include "core/ops/rules.hpp"
#include "core/ops/tensor_ref.hpp"

namespace asteria::ops {

// Every rule of rules.hpp at both precisions.
#define ASTERIA_OPS_RULE_ALTERNATIVES(R) R<float>, R<double>,
using AnyRule = std::variant<ASTERIA_OPS_RULES(ASTERIA_OPS_RULE_ALTERNATIVES) std::monostate>;
#undef ASTERIA_OPS_RULE_ALTERNATIVES

// How a map operation treats its rule's result (see rules.hpp for the rule kinds).
struct MapOp {
  AnyRule rule;
  std::array<TensorRef, 6> operands{};  // in the rule's operand order
  int operand_count = 0;
  index rows = 0;  // the operation's shape (that of its full operands)
  index cols = 0;
  // guarded and checked rules raise `flag` (1 x 1 i32) when they meet a non-finite value; a map
  // rule with skip_if_raised does nothing when `flag` is already raised (commits that must follow
  // only a written update).
  TensorRef flag{};
  bool skip_if_raised = false;
};

// c ← alpha·op(a)·op(b) + beta·c; with batch > 1, `batch` independent products whose operands
// are stacked: each of a, b and c holds `batch` equal matrices one below the other (a stack of
// rows × cols matrices is a (batch·rows) × cols operand, one row stride).
struct GemmOp {
  TensorRef a, b, c;
  linalg::Op op_a = linalg::Op::none;
  linalg::Op op_b = linalg::Op::none;
  double alpha = 1.0;
  double beta = 0.0;
  index batch = 1;
};
// Matrix k of a stack of `batch` (rows divisible by batch).
TensorRef stacked(const TensorRef& stack, index batch, index k) noexcept;

// c ← alpha·a·aᵀ + beta·c (op none) or alpha·aᵀ·a + beta·c (op transpose), both triangles.
struct SyrkOp {
  TensorRef a, c;
  linalg::Op op = linalg::Op::none;
  double alpha = 1.0;
  double beta = 0.0;
};

// result (1 x 1 f64) ← ‖x‖_F, accumulated in double.
struct NormOp {
  TensorRef x, result;
};

// x ← x · T(numerator / (denominator + floor)), the scalars 1 x 1 f64 in device memory
// (numerator absent: 1). Normalization (Muon) and grafting (Shampoo) without a trip to the host.
struct ScaleByRatioOp {
  TensorRef x, numerator, denominator;
  double floor = 0.0;
};

// KL-Shampoo's eigenvalue estimates from c = Q_aᵀ G Q_b:
//   left_i  = Σ_j c_ij² s_right,j² / cols,   right_j = Σ_i c_ij² s_left,i² / rows.
struct KlEstimatesOp {
  TensorRef c, s_left, s_right, left, right;
};

// x_ij ← x(row_order[i], col_order[j]) (SOAP's second moment follows its basis's sort order).
// The orders are host arrays.
struct PermuteOp {
  TensorRef x;
  std::span<const index> row_order;
  std::span<const index> col_order;
};

// Raises `flag` (1 x 1 i32) when x holds NaN or Inf (gradients are checked before they are used).
struct CheckFiniteOp {
  TensorRef x, flag;
};

using Operation =
    std::variant<MapOp, GemmOp, SyrkOp, NormOp, ScaleByRatioOp, KlEstimatesOp, PermuteOp, CheckFiniteOp>;

// What a rule declares (rules.hpp), read off the variant.
std::span<const OperandSpec> rule_operands(const AnyRule& rule) noexcept;
RuleKind rule_kind(const AnyRule& rule) noexcept;
const char* rule_name(const AnyRule& rule) noexcept;
DType rule_dtype(const AnyRule& rule) noexcept;

// An operand and what the operation does to it (for checks, and for the host fallback's staging).
struct OperandUse {
  TensorRef tensor;
  Access access = Access::read;
};
std::vector<OperandUse> operand_uses(const Operation& op);

// The same operation on other operands, given in operand_uses() order (the host fallback runs
// an operation on staged copies of its operands).
Operation with_operands(const Operation& op, std::span<const TensorRef> operands);

// The operation's name and the rule's: "map assign", "gemm", "kl_estimates", ...
std::string describe(const Operation& op);

}  // namespace asteria::ops

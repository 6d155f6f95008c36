#pragma once
// The optimizers' element-wise equations, each written once. Every backend runs these same
// functions: the CPU backend inlines them into loops vectorized for the processor at hand, the
// CUDA backend into its kernels (this header compiles as CUDA too). What differs between
// backends is how elements are visited, never what is computed for one element.
//
// A rule lists its operands (OperandSpec: read, write or both; a full tensor, or a vector
// broadcast along rows or columns) and is one of three kinds:
//   map      void operator()(operands...): writes its outputs.
//   guarded  bool operator()(operands...): computes new values for the element and writes them
//            only if all are finite; false (nothing written for that element) otherwise. One pass
//            over memory, for updates that are bound by memory bandwidth (AdamW).
//   checked  T operator()(target, inputs...): the new value of operand 0. The operation writes
//            the target only if every element's new value is finite (whole-block guard).
// Arithmetic is written out as in ALGORITHMS.md; no contraction into fused multiply-adds is
// assumed (the CPU build and the CUDA kernels both disable it), so a rule gives the same bits on
// every backend for the same inputs.
#include <array>
#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define ASTERIA_RULE __host__ __device__ __forceinline__
#else
#define ASTERIA_RULE __attribute__((always_inline)) inline
#endif

namespace asteria::ops {

enum class Access : std::uint8_t { read, write, read_write };
// full: same shape as the operation; per_row: one value per row (a rows x 1 vector); per_col:
// one value per column (a cols x 1 or 1 x cols vector).
enum class Extent : std::uint8_t { full, per_row, per_col };
struct OperandSpec {
  Access access = Access::read;
  Extent extent = Extent::full;
};
enum class RuleKind : std::uint8_t { map, guarded, checked };

inline constexpr OperandSpec kRead{Access::read, Extent::full};
inline constexpr OperandSpec kWrite{Access::write, Extent::full};
inline constexpr OperandSpec kReadWrite{Access::read_write, Extent::full};
inline constexpr OperandSpec kReadRow{Access::read, Extent::per_row};
inline constexpr OperandSpec kReadCol{Access::read, Extent::per_col};

// False for NaN and ±Inf (Inf − Inf is NaN), with no library call: vectorizes everywhere.
template <class T>
ASTERIA_RULE bool is_finite(T x) {
  return x - x == T(0);
}

// y ← x
template <class T>
struct Assign {
  static constexpr const char* name = "assign";
  static constexpr RuleKind kind = RuleKind::map;
  static constexpr std::array<OperandSpec, 2> operands{kWrite, kRead};
  ASTERIA_RULE void operator()(T& y, T x) const { y = x; }
};

// y ← value
template <class T>
struct Set {
  static constexpr const char* name = "set";
  static constexpr RuleKind kind = RuleKind::map;
  static constexpr std::array<OperandSpec, 1> operands{kWrite};
  T value;
  ASTERIA_RULE void operator()(T& y) const { y = value; }
};

// y ← y + a·x
template <class T>
struct AddScaled {
  static constexpr const char* name = "add_scaled";
  static constexpr RuleKind kind = RuleKind::map;
  static constexpr std::array<OperandSpec, 2> operands{kReadWrite, kRead};
  T a;
  ASTERIA_RULE void operator()(T& y, T x) const { y = y + a * x; }
};

// y ← x²
template <class T>
struct Square {
  static constexpr const char* name = "square";
  static constexpr RuleKind kind = RuleKind::map;
  static constexpr std::array<OperandSpec, 2> operands{kWrite, kRead};
  ASTERIA_RULE void operator()(T& y, T x) const { y = x * x; }
};

// x ← x·s_i (row i's scale)
template <class T>
struct ScaleRows {
  static constexpr const char* name = "scale_rows";
  static constexpr RuleKind kind = RuleKind::map;
  static constexpr std::array<OperandSpec, 2> operands{kReadWrite, kReadRow};
  ASTERIA_RULE void operator()(T& x, T row_scale) const { x = x * row_scale; }
};

// x ← x·s_j (column j's scale)
template <class T>
struct ScaleCols {
  static constexpr const char* name = "scale_cols";
  static constexpr RuleKind kind = RuleKind::map;
  static constexpr std::array<OperandSpec, 2> operands{kReadWrite, kReadCol};
  ASTERIA_RULE void operator()(T& x, T col_scale) const { x = x * col_scale; }
};

// AdamW, one pass: m ← β1 m + (1−β1) g; v ← β2 v + (1−β2) g²;
// w ← w − (lr/(1−β1^t) · m / (√v / √(1−β2^t) + ε) + lr·wd·w).
// step_size = lr/(1−β1^t), inv_sqrt_bc2 = 1/√(1−β2^t), decay = lr·wd.
template <class T>
struct AdamWStep {
  static constexpr const char* name = "adamw_step";
  static constexpr RuleKind kind = RuleKind::guarded;
  static constexpr std::array<OperandSpec, 4> operands{kReadWrite, kReadWrite, kReadWrite, kRead};  // w, m, v, g
  T beta1, beta2, step_size, inv_sqrt_bc2, eps, decay;
  ASTERIA_RULE bool operator()(T& w, T& m, T& v, T g) const {
    const T m_new = beta1 * m + (T(1) - beta1) * g;
    const T v_new = beta2 * v + (T(1) - beta2) * g * g;
    const T w_new = w - (step_size * m_new / (std::sqrt(v_new) * inv_sqrt_bc2 + eps) + decay * w);
    const bool ok = is_finite(w_new) & is_finite(m_new) & is_finite(v_new);
    w = ok ? w_new : w;
    m = ok ? m_new : m;
    v = ok ? v_new : v;
    return ok;
  }
};

// Shampoo's filtered gradient (DS): m ← β1 m + (1−β1) g; Ḡ ← m / (1−β1^t).
template <class T>
struct FilteredGradient {
  static constexpr const char* name = "filtered_gradient";
  static constexpr RuleKind kind = RuleKind::map;
  static constexpr std::array<OperandSpec, 3> operands{kReadWrite, kWrite, kRead};  // m, filtered, g
  T beta1, inv_bc1;
  ASTERIA_RULE void operator()(T& m, T& filtered, T g) const {
    m = beta1 * m + (T(1) - beta1) * g;
    filtered = m * inv_bc1;
  }
};

// Adam grafting direction (DS): v ← β2 v + w g²; P_graft = Ḡ / (√(v/(1−β2^t)) + ε).
template <class T>
struct AdamGraftDirection {
  static constexpr const char* name = "adam_graft_direction";
  static constexpr RuleKind kind = RuleKind::map;
  static constexpr std::array<OperandSpec, 4> operands{kReadWrite, kWrite, kRead, kRead};  // v, graft, g, filtered
  T beta2, weight, inv_bc2, eps;
  ASTERIA_RULE void operator()(T& v, T& graft, T g, T filtered) const {
    v = beta2 * v + weight * g * g;
    graft = filtered / (std::sqrt(v * inv_bc2) + eps);
  }
};

// Shampoo's decoupled weight decay (DS): W ← W − lr·(P + wd·W).
template <class T>
struct ShampooDescent {
  static constexpr const char* name = "shampoo_descent";
  static constexpr RuleKind kind = RuleKind::checked;
  static constexpr std::array<OperandSpec, 2> operands{kReadWrite, kRead};  // w, direction
  T lr, weight_decay;
  ASTERIA_RULE T operator()(T w, T direction) const { return w - lr * (direction + weight_decay * w); }
};

// SOAP's Adam direction in the eigenbasis, from the moments the step would commit:
// m′ = β1 m + (1−β1) G′, v′ = β2 v + (1−β2) G′², D = m′ / (√v′ + ε). m and v stay untouched.
template <class T>
struct SoapDirection {
  static constexpr const char* name = "soap_direction";
  static constexpr RuleKind kind = RuleKind::map;
  static constexpr std::array<OperandSpec, 4> operands{kWrite, kRead, kRead, kRead};  // direction, m, v, rotated
  T beta1, beta2, eps;
  ASTERIA_RULE void operator()(T& direction, T m, T v, T rotated) const {
    const T m_new = beta1 * m + (T(1) - beta1) * rotated;
    const T v_new = beta2 * v + (T(1) - beta2) * rotated * rotated;
    direction = m_new / (std::sqrt(v_new) + eps);
  }
};

// SOAP's moments, committed once the step's update was written: as SoapDirection's m′ and v′.
template <class T>
struct SoapMoments {
  static constexpr const char* name = "soap_moments";
  static constexpr RuleKind kind = RuleKind::map;
  static constexpr std::array<OperandSpec, 3> operands{kReadWrite, kReadWrite, kRead};  // m, v, rotated
  T beta1, beta2;
  ASTERIA_RULE void operator()(T& m, T& v, T rotated) const {
    const T m_new = beta1 * m + (T(1) - beta1) * rotated;
    v = beta2 * v + (T(1) - beta2) * rotated * rotated;
    m = m_new;
  }
};

// SOAP and KL-Shampoo: W ← (W − step·D)·(1 − lr·wd).
template <class T>
struct DescentThenDecay {
  static constexpr const char* name = "descent_then_decay";
  static constexpr RuleKind kind = RuleKind::checked;
  static constexpr std::array<OperandSpec, 2> operands{kReadWrite, kRead};  // w, direction
  T step, keep;
  ASTERIA_RULE T operator()(T w, T direction) const { return (w - step * direction) * keep; }
};

// KL-Shampoo's momentum as the step would commit it: m′ = β1 m + (1−β1) G.
template <class T>
struct MomentumLerp {
  static constexpr const char* name = "momentum_lerp";
  static constexpr RuleKind kind = RuleKind::map;
  static constexpr std::array<OperandSpec, 3> operands{kWrite, kRead, kRead};  // m′, m, g
  T beta1;
  ASTERIA_RULE void operator()(T& m_new, T m, T g) const { m_new = beta1 * m + (T(1) - beta1) * g; }
};

// KL-Shampoo's preconditioning in the eigenbasis: x ← x·s/(1 + ε·s), s = λ_a,i^(−½) λ_b,j^(−½).
template <class T>
struct KlPrecondition {
  static constexpr const char* name = "kl_precondition";
  static constexpr RuleKind kind = RuleKind::map;
  static constexpr std::array<OperandSpec, 3> operands{kReadWrite, kReadRow, kReadCol};  // x, s_left, s_right
  T eps;
  ASTERIA_RULE void operator()(T& x, T s_left, T s_right) const {
    const T scale = s_left * s_right;
    x = x * (scale / (T(1) + eps * scale));
  }
};

// KL-Shampoo's eigenvalue EMA on the stored s = λ^(−1/2) (the reference's conventions): a zero s
// stands for λ = 0, a non-finite s becomes 0, s is clamped from above by `limit`.
template <class T>
struct KlInverseSqrtEigenvalues {
  static constexpr const char* name = "kl_inverse_sqrt_eigenvalues";
  static constexpr RuleKind kind = RuleKind::map;
  static constexpr std::array<OperandSpec, 2> operands{kReadWrite, kRead};  // s, estimate
  T beta, limit;
  ASTERIA_RULE void operator()(T& s, T estimate) const {
    T lambda = T(1) / (s * s);
    lambda = is_finite(lambda) ? lambda : T(0);
    lambda = beta * lambda + (T(1) - beta) * estimate;
    T next = T(1) / std::sqrt(lambda);
    next = is_finite(next) ? next : T(0);
    s = next < limit ? next : limit;
  }
};

// Muon's momentum and the matrix it orthogonalizes: m ← lerp(m, G, 1−β); u = lerp(G, m, β)
// (Nesterov) or m.
template <class T>
struct MuonMomentum {
  static constexpr const char* name = "muon_momentum";
  static constexpr RuleKind kind = RuleKind::map;
  static constexpr std::array<OperandSpec, 3> operands{kReadWrite, kWrite, kRead};  // m, u, g
  T beta;
  bool nesterov;
  ASTERIA_RULE void operator()(T& m, T& u, T g) const {
    m = m + (T(1) - beta) * (g - m);
    u = nesterov ? g + beta * (m - g) : m;
  }
};

// Muon: W ← (1 − lr·wd)·W − step·X.
template <class T>
struct MuonDescent {
  static constexpr const char* name = "muon_descent";
  static constexpr RuleKind kind = RuleKind::checked;
  static constexpr std::array<OperandSpec, 2> operands{kReadWrite, kRead};  // w, orthogonalized update
  T keep, step;
  ASTERIA_RULE T operator()(T w, T x) const { return keep * w - step * x; }
};

// Every rule, for the backends' dispatch tables: X(RuleTemplate).
#define ASTERIA_OPS_RULES(X)  \
  X(Assign)                   \
  X(Set)                      \
  X(AddScaled)                \
  X(Square)                   \
  X(ScaleRows)                \
  X(ScaleCols)                \
  X(AdamWStep)                \
  X(FilteredGradient)         \
  X(AdamGraftDirection)       \
  X(ShampooDescent)           \
  X(SoapDirection)            \
  X(SoapMoments)              \
  X(DescentThenDecay)         \
  X(MomentumLerp)             \
  X(KlPrecondition)           \
  X(KlInverseSqrtEigenvalues) \
  X(MuonMomentum)             \
  X(MuonDescent)

}  // namespace asteria::ops

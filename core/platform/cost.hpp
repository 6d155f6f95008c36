#pragma once
// What a unit of work costs, described so that a hardware model can charge time for it
// without running it: the kind of kernel, its floating-point operations, the bytes it touches,
// and the matrix dimension that dominates it (for c·n³ models of eigendecompositions).
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <span>
#include <string_view>
#include <vector>

namespace asteria::platform {

enum class WorkKind {
  gemm,         // dense matrix product, compute bound
  eigh,         // symmetric eigendecomposition (syevd)
  qr,           // orthogonalization (Householder or Cholesky QR)
  newton,       // coupled Newton inverse-root iteration (a sequence of GEMMs)
  elementwise,  // memory bound: bytes over bandwidth
  other,
};

std::string_view to_string(WorkKind kind) noexcept;

// Elementwise flops weigh an operation by what it costs beside a multiply or an add, so that one
// rate (s/flop) prices every elementwise kernel: a division or a square root as kDivisionFlops
// (x86 divps/sqrtps: a vector every 4-8 cycles against two FMAs per cycle; GPUs: several
// cycles too), an exp, tanh or erf as kTranscendentalFlops (a scalar libm call: on a 2-core
// AMD EPYC VM, 3.3 ns per expf and 7.3 ns per tanhf, 25-55 multiply-adds; a GPU's
// special-function units make it cheap, and memory traffic dominates there either way).
inline constexpr double kDivisionFlops = 8.0;
inline constexpr double kTranscendentalFlops = 25.0;

struct Cost {
  WorkKind kind = WorkKind::other;
  double flops = 0.0;
  double bytes = 0.0;
  std::int64_t dimension = 0;  // n for an n x n factorization; 0 when not meaningful
  // A training-step matmul in reduced precision (bf16 on tensor cores, fp32 accumulation), as
  // mixed-precision training runs forward and backward; optimizer kernels stay fp32.
  bool reduced_precision = false;

  // A piece with no flops, no bytes and no dimension does nothing (AdamW's accumulate): a plan op
  // of such pieces is no kernel (PlanInterpreter submits none for it), though a model charges a
  // Work that names one explicitly its launch.
  bool does_work() const noexcept { return flops != 0.0 || bytes != 0.0 || dimension != 0; }

  bool operator==(const Cost&) const = default;
};

// What one work item costs: its pieces, each charged by its own rule. A refresh computes an
// eigendecomposition of each Kronecker factor (two sizes) and a few GEMMs; a fused launch runs
// the kernels of several plan ops. Summing them into one Cost would charge the heaviest
// piece's c·n³ for all of them.
class Costs {
 public:
  Costs() = default;
  Costs(const Cost& piece) : pieces_{piece} {}  // NOLINT(google-explicit-constructor): one piece
  Costs(std::initializer_list<Cost> pieces) : pieces_(pieces) {}
  explicit Costs(std::vector<Cost> pieces) : pieces_(std::move(pieces)) {}

  void add(const Cost& piece) { pieces_.push_back(piece); }
  void add(const Costs& more) { pieces_.insert(pieces_.end(), more.pieces_.begin(), more.pieces_.end()); }
  // Adds each piece of `more` into this one's piece of the same kind, dimension and precision
  // (appended when there is none): the work of a layer charged to its neighbour.
  void merge(const Costs& more);
  // Every piece's flops and bytes times `factor`: a share of the work (a micro-batch's, a weight's).
  Costs scaled(double factor) const;

  std::span<const Cost> pieces() const noexcept { return pieces_; }
  bool empty() const noexcept { return pieces_.empty(); }
  double flops() const noexcept;  // of all pieces
  double bytes() const noexcept;
  // Nothing to charge: no piece computes or moves anything.
  bool free() const noexcept { return flops() == 0.0 && bytes() == 0.0; }
  // Whether some piece does work (Cost::does_work); adds only such pieces of `more`.
  bool any_work() const noexcept;
  void add_work(const Costs& more);

  bool operator==(const Costs&) const = default;

 private:
  std::vector<Cost> pieces_;
};

// The time of all pieces, each charged by `piece_seconds` (a model's rule for one piece).
template <class PieceSeconds>
double total_seconds(const Costs& cost, PieceSeconds&& piece_seconds) {
  double seconds = 0.0;
  for (const Cost& piece : cost.pieces()) seconds += piece_seconds(piece);
  return seconds;
}

}  // namespace asteria::platform

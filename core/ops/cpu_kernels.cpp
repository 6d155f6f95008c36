#include "core/ops/cpu_kernels.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/linalg/blas.hpp"

namespace asteria::ops {
namespace {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

template <class R>
struct ValueOf;
template <template <class> class R, class T>
struct ValueOf<R<T>> {
  using type = T;
};

// Elements per piece of a split loop: large enough that a piece costs far more than handing it
// to a thread, small enough to spread 10⁶-element blocks over a few threads. Fixed, so that the
// pieces (and the order reductions combine them in) do not depend on the number of threads.
constexpr index kPieceElements = index{1} << 15;

// How loops visit elements: one pass applying a map or guarded rule, or a checked rule's two
// passes (check every element, then write).
enum class Pass { apply, check, write };

// Element j of an operand. Readers get the value, writers a reference; a per-row operand's
// pointer is at its row's element already.
template <class T, OperandSpec S>
struct Element {
  using Pointer = std::conditional_t<S.access == Access::read, const T*, T*>;
  static ASTERIA_RULE decltype(auto) at(Pointer p, index j) {
    const index k = S.extent == Extent::per_row ? 0 : j;
    if constexpr (S.access == Access::read) return T(p[k]);
    else return (p[k]);
  }
};

// One row (or a flattened contiguous run) of n elements; returns 1 if some element was
// non-finite (guarded rules: not written; checked rules, check pass: would be written).
#define ASTERIA_ROW_LOOP(NAME, TARGET)                                                                  \
  template <Pass P, class T, class Rule, std::size_t... K, class... Ptr>                              \
  TARGET int NAME(std::index_sequence<K...>, index n, const Rule& rule, Ptr __restrict... p) {        \
    int bad = 0;                                                                                      \
    if constexpr (P == Pass::check) {                                                                 \
      for (index j = 0; j < n; ++j) bad |= is_finite(rule(Element<T, Rule::operands[K]>::at(p, j)...)) ? 0 : 1; \
    } else if constexpr (P == Pass::write) {                                                          \
      auto targets = std::get<0>(std::forward_as_tuple(p...));                                        \
      for (index j = 0; j < n; ++j) targets[j] = rule(Element<T, Rule::operands[K]>::at(p, j)...);    \
    } else if constexpr (Rule::kind == RuleKind::guarded) {                                           \
      for (index j = 0; j < n; ++j) bad |= rule(Element<T, Rule::operands[K]>::at(p, j)...) ? 0 : 1;  \
    } else {                                                                                          \
      for (index j = 0; j < n; ++j) rule(Element<T, Rule::operands[K]>::at(p, j)...);                 \
    }                                                                                                 \
    return bad;                                                                                       \
  }

ASTERIA_ROW_LOOP(row_loop_generic, )
#if defined(__x86_64__)
ASTERIA_ROW_LOOP(row_loop_avx2, __attribute__((target("avx2"))))
ASTERIA_ROW_LOOP(row_loop_avx512, __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq"))))
#endif
#undef ASTERIA_ROW_LOOP

template <Pass P, class T, class Rule, std::size_t... K>
int row_loop(CpuIsa isa, std::index_sequence<K...> seq, index n, const Rule& rule,
             typename Element<T, Rule::operands[K]>::Pointer... p) {
#if defined(__x86_64__)
  if (isa == CpuIsa::avx512) return row_loop_avx512<P, T>(seq, n, rule, p...);
  if (isa == CpuIsa::avx2) return row_loop_avx2<P, T>(seq, n, rule, p...);
#endif
  (void)isa;
  return row_loop_generic<P, T>(seq, n, rule, p...);
}

// Runs pieces [0, pieces) on the runner (or here) and ORs their results.
template <class F>
int for_pieces(const CpuContext& ctx, std::int64_t pieces, F&& piece) {
  if (pieces <= 0) return 0;
  if (ctx.runner == nullptr || ctx.runner->width() <= 1 || pieces == 1) {
    int bad = 0;
    for (std::int64_t p = 0; p < pieces; ++p) bad |= piece(p);
    return bad;
  }
  std::vector<int> results(static_cast<std::size_t>(pieces), 0);
  ctx.runner->run(pieces, [&](std::int64_t p) { results[static_cast<std::size_t>(p)] = piece(p); });
  int bad = 0;
  for (int r : results) bad |= r;
  return bad;
}

// One pass of a rule over the operation's elements, split into pieces of rows (or of a
// flattened run when every operand is full and contiguous).
template <Pass P, class Rule>
int map_pass(const Rule& rule, const MapOp& op, const CpuContext& ctx) {
  using T = typename ValueOf<Rule>::type;
  constexpr std::size_t N = Rule::operands.size();
  auto seq = std::make_index_sequence<N>{};
  bool flat = true;
  for (std::size_t k = 0; k < N; ++k)
    flat = flat && Rule::operands[k].extent == Extent::full && op.operands[k].contiguous();
  if (op.rows == 0 || op.cols == 0) return 0;
  // Operand k's pointer at element (i, j0): a full operand's element, a per-row operand's row-i
  // element, a per-column operand's column-j0 element (vectors are n x 1 or 1 x n, contiguous).
  auto at = [&]<std::size_t... K>(std::index_sequence<K...>, index i, index j0) {
    auto offset = [&](std::size_t k, Extent extent) -> index {
      const TensorRef& t = op.operands[k];
      const index step = t.cols == 1 ? t.stride : 1;
      if (extent == Extent::per_row) return i * step;
      if (extent == Extent::per_col) return j0 * step;
      return i * t.stride + j0;
    };
    return std::make_tuple(static_cast<typename Element<T, Rule::operands[K]>::Pointer>(
        static_cast<T*>(op.operands[K].data) + offset(K, Rule::operands[K].extent))...);
  };
  if (flat) {
    const index total = op.rows * op.cols;
    const std::int64_t pieces = (total + kPieceElements - 1) / kPieceElements;
    return for_pieces(ctx, pieces, [&](std::int64_t piece) {
      const index begin = piece * kPieceElements;
      const index n = std::min(kPieceElements, total - begin);
      return std::apply([&](auto... p) { return row_loop<P, T>(ctx.isa, seq, n, rule, p...); }, at(seq, 0, begin));
    });
  }
  const index rows_per_piece = std::max<index>(1, kPieceElements / std::max<index>(op.cols, 1));
  const std::int64_t pieces = (op.rows + rows_per_piece - 1) / rows_per_piece;
  return for_pieces(ctx, pieces, [&](std::int64_t piece) {
    int bad = 0;
    const index end = std::min(op.rows, (piece + 1) * rows_per_piece);
    for (index i = piece * rows_per_piece; i < end; ++i)
      bad |= std::apply([&](auto... p) { return row_loop<P, T>(ctx.isa, seq, op.cols, rule, p...); }, at(seq, i, 0));
    return bad;
  });
}

std::int32_t& flag_of(const MapOp& op) { return *static_cast<std::int32_t*>(op.flag.data); }

template <class Rule>
void run_map(const Rule& rule, const MapOp& op, const CpuContext& ctx) {
  if (op.skip_if_raised && flag_of(op) != 0) return;
  if constexpr (Rule::kind == RuleKind::checked) {
    if (map_pass<Pass::check>(rule, op, ctx) != 0) {
      flag_of(op) = 1;
      return;
    }
    map_pass<Pass::write>(rule, op, ctx);
  } else {
    const int bad = map_pass<Pass::apply>(rule, op, ctx);
    if constexpr (Rule::kind == RuleKind::guarded)
      if (bad != 0) flag_of(op) = 1;
  }
}

// x ← x·s, for scale_by_ratio.
template <class T>
struct ScaleBy {
  static constexpr const char* name = "scale";
  static constexpr RuleKind kind = RuleKind::map;
  static constexpr std::array<OperandSpec, 1> operands{kReadWrite};
  T s;
  ASTERIA_RULE void operator()(T& x) const { x = x * s; }
};

// Σ x² in double over n contiguous elements, in 8 interleaved lanes combined in lane order: the
// same bits whatever the vector width.
#define ASTERIA_SQUARES(NAME, TARGET)                                              \
  template <class T>                                                               \
  TARGET double NAME(const T* __restrict x, index n) {                             \
    double lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};                                     \
    const index whole = n - n % 8;                                                 \
    for (index j = 0; j < whole; j += 8)                                           \
      for (int l = 0; l < 8; ++l) {                                                \
        const double v = static_cast<double>(x[j + l]);                            \
        lane[l] += v * v;                                                          \
      }                                                                            \
    for (index j = whole; j < n; ++j) {                                            \
      const double v = static_cast<double>(x[j]);                                  \
      lane[j - whole] += v * v;                                                    \
    }                                                                              \
    return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7])); \
  }
ASTERIA_SQUARES(squares_generic, )
#if defined(__x86_64__)
ASTERIA_SQUARES(squares_avx2, __attribute__((target("avx2"))))
ASTERIA_SQUARES(squares_avx512, __attribute__((target("avx512f,avx512vl,avx512bw,avx512dq"))))
#endif
#undef ASTERIA_SQUARES

template <class T>
double squares(CpuIsa isa, const T* x, index n) {
#if defined(__x86_64__)
  if (isa == CpuIsa::avx512) return squares_avx512(x, n);
  if (isa == CpuIsa::avx2) return squares_avx2(x, n);
#endif
  (void)isa;
  return squares_generic(x, n);
}

template <class T>
void run_norm(const NormOp& op, const CpuContext& ctx) {
  const linalg::ConstMatrixView<T> x = view_of<const T>(op.x);
  double total = 0.0;
  if (!x.empty()) {
    // Pieces of whole rows; partial sums combined in piece order.
    const index rows_per_piece = std::max<index>(1, kPieceElements / x.cols());
    const bool flat = x.contiguous();
    const index total_elements = x.rows() * x.cols();
    const std::int64_t pieces = flat ? (total_elements + kPieceElements - 1) / kPieceElements
                                     : (x.rows() + rows_per_piece - 1) / rows_per_piece;
    std::vector<double> partial(static_cast<std::size_t>(pieces), 0.0);
    auto piece = [&](std::int64_t p) {
      double sum = 0.0;
      if (flat) {
        const index begin = p * kPieceElements;
        sum = squares(ctx.isa, x.data() + begin, std::min(kPieceElements, total_elements - begin));
      } else {
        const index end = std::min(x.rows(), (p + 1) * rows_per_piece);
        for (index i = p * rows_per_piece; i < end; ++i) sum += squares(ctx.isa, x.row(i).data(), x.cols());
      }
      partial[static_cast<std::size_t>(p)] = sum;
      return 0;
    };
    for_pieces(ctx, pieces, piece);
    for (double s : partial) total += s;
  }
  *static_cast<double*>(op.result.data) = std::sqrt(total);
}

template <class T>
void run_scale_by_ratio(const ScaleByRatioOp& op, const CpuContext& ctx) {
  const double numerator = op.numerator.data != nullptr ? *static_cast<const double*>(op.numerator.data) : 1.0;
  const double denominator = *static_cast<const double*>(op.denominator.data);
  MapOp scale;
  scale.operands[0] = op.x;
  scale.operand_count = 1;
  scale.rows = op.x.rows;
  scale.cols = op.x.cols;
  run_map(ScaleBy<T>{static_cast<T>(numerator / (denominator + op.floor))}, scale, ctx);
}

// Element (k) of a vector operand stored as n x 1 or 1 x n.
template <class T>
T vector_at(const TensorRef& v, index k) {
  return static_cast<const T*>(v.data)[v.cols == 1 ? k * v.stride : k];
}
template <class T>
T& vector_at_mut(const TensorRef& v, index k) {
  return static_cast<T*>(v.data)[v.cols == 1 ? k * v.stride : k];
}

template <class T>
void run_kl_estimates(const KlEstimatesOp& op, const CpuContext& ctx) {
  const linalg::ConstMatrixView<T> c = view_of<const T>(op.c);
  const index rows = c.rows(), cols = c.cols();
  std::vector<T> s_right2(static_cast<std::size_t>(cols)), s_left2(static_cast<std::size_t>(rows));
  for (index j = 0; j < cols; ++j) s_right2[static_cast<std::size_t>(j)] = vector_at<T>(op.s_right, j);
  for (index i = 0; i < rows; ++i) s_left2[static_cast<std::size_t>(i)] = vector_at<T>(op.s_left, i);
  // Pieces of rows: each sums its rows' left estimates and its own partial right estimates;
  // the partials are added in piece order.
  const index rows_per_piece = std::max<index>(1, kPieceElements / std::max<index>(cols, 1));
  const std::int64_t pieces = (rows + rows_per_piece - 1) / rows_per_piece;
  std::vector<std::vector<T>> partial(static_cast<std::size_t>(pieces), std::vector<T>(static_cast<std::size_t>(cols), T(0)));
  for_pieces(ctx, pieces, [&](std::int64_t p) {
    std::vector<T>& right = partial[static_cast<std::size_t>(p)];
    const index end = std::min(rows, (p + 1) * rows_per_piece);
    for (index i = p * rows_per_piece; i < end; ++i) {
      const T* ci = c.row(i).data();
      const T sl = s_left2[static_cast<std::size_t>(i)];
      T lane[8] = {};
      for (index j = 0; j < cols; ++j) {
        const T c2 = ci[j] * ci[j];
        const T sr = s_right2[static_cast<std::size_t>(j)];
        lane[j % 8] += c2 * sr * sr;
        right[static_cast<std::size_t>(j)] += c2 * sl * sl;
      }
      const T left = ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
      vector_at_mut<T>(op.left, i) = left / static_cast<T>(cols);
    }
    return 0;
  });
  for (index j = 0; j < cols; ++j) {
    T sum = T(0);
    for (const std::vector<T>& part : partial) sum += part[static_cast<std::size_t>(j)];
    vector_at_mut<T>(op.right, j) = sum / static_cast<T>(rows);
  }
}

template <class T>
void run_permute(const PermuteOp& op) {
  const linalg::MatrixView<T> x = view_of<T>(op.x);
  const linalg::Matrix<T> old(linalg::ConstMatrixView<T>{x});
  for (index i = 0; i < x.rows(); ++i)
    for (index j = 0; j < x.cols(); ++j)
      x(i, j) = old(op.row_order[static_cast<std::size_t>(i)], op.col_order[static_cast<std::size_t>(j)]);
}

// A map rule that computes nothing: check_finite's check pass.
template <class T>
struct Identity {
  static constexpr const char* name = "identity";
  static constexpr RuleKind kind = RuleKind::checked;
  static constexpr std::array<OperandSpec, 1> operands{kRead};
  ASTERIA_RULE T operator()(T x) const { return x; }
};

template <class T>
void run_check_finite(const CheckFiniteOp& op, const CpuContext& ctx) {
  MapOp check;
  check.operands[0] = op.x;
  check.operand_count = 1;
  check.rows = op.x.rows;
  check.cols = op.x.cols;
  if (map_pass<Pass::check>(Identity<T>{}, check, ctx) != 0) *static_cast<std::int32_t*>(op.flag.data) = 1;
}

template <class F>
void by_dtype(DType dtype, F&& f) {
  if (dtype == DType::f32) f(float{});
  else f(double{});
}

}  // namespace

std::string_view to_string(CpuIsa isa) noexcept {
  switch (isa) {
    case CpuIsa::generic:
#if defined(__x86_64__)
      return "sse2";
#elif defined(__aarch64__)
      return "neon";
#else
      return "generic";
#endif
    case CpuIsa::avx2: return "avx2";
    case CpuIsa::avx512: return "avx512";
  }
  return "?";
}

CpuIsa detect_cpu_isa() noexcept {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq"))
    return CpuIsa::avx512;
  if (__builtin_cpu_supports("avx2")) return CpuIsa::avx2;
#endif
  return CpuIsa::generic;
}

std::vector<CpuIsa> supported_cpu_isas() {
  std::vector<CpuIsa> isas{CpuIsa::generic};
  const CpuIsa best = detect_cpu_isa();
  if (best == CpuIsa::avx2 || best == CpuIsa::avx512) isas.push_back(CpuIsa::avx2);
  if (best == CpuIsa::avx512) isas.push_back(CpuIsa::avx512);
  return isas;
}

void run_on_cpu(const Operation& operation, const CpuContext& ctx) {
  std::visit(Overloaded{
                 [&](const MapOp& op) {
                   std::visit(
                       [&](const auto& rule) {
                         using R = std::decay_t<decltype(rule)>;
                         if constexpr (!std::is_same_v<R, std::monostate>) run_map(rule, op, ctx);
                       },
                       op.rule);
                 },
                 [&](const GemmOp& op) {
                   by_dtype(op.c.dtype, [&]<class T>(T) {
                     for (index k = 0; k < op.batch; ++k)
                       linalg::gemm<T>(static_cast<T>(op.alpha), view_of<const T>(stacked(op.a, op.batch, k)), op.op_a,
                                       view_of<const T>(stacked(op.b, op.batch, k)), op.op_b, static_cast<T>(op.beta),
                                       view_of<T>(stacked(op.c, op.batch, k)));
                   });
                 },
                 [&](const SyrkOp& op) {
                   by_dtype(op.c.dtype, [&]<class T>(T) {
                     linalg::syrk<T>(static_cast<T>(op.alpha), view_of<const T>(op.a), op.op, static_cast<T>(op.beta),
                                     view_of<T>(op.c));
                   });
                 },
                 [&](const NormOp& op) { by_dtype(op.x.dtype, [&]<class T>(T) { run_norm<T>(op, ctx); }); },
                 [&](const ScaleByRatioOp& op) {
                   by_dtype(op.x.dtype, [&]<class T>(T) { run_scale_by_ratio<T>(op, ctx); });
                 },
                 [&](const KlEstimatesOp& op) {
                   by_dtype(op.c.dtype, [&]<class T>(T) { run_kl_estimates<T>(op, ctx); });
                 },
                 [&](const PermuteOp& op) { by_dtype(op.x.dtype, [&]<class T>(T) { run_permute<T>(op); }); },
                 [&](const CheckFiniteOp& op) {
                   by_dtype(op.x.dtype, [&]<class T>(T) { run_check_finite<T>(op, ctx); });
                 },
             },
             operation);
}

}  // namespace asteria::ops

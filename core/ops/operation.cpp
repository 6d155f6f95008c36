#include "core/ops/operation.hpp"

#include <stdexcept>
#include <type_traits>

namespace asteria::ops {
namespace {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

}  // namespace

std::size_t element_bytes(DType dtype) noexcept {
  switch (dtype) {
    case DType::f32: return 4;
    case DType::f64: return 8;
    case DType::i32: return 4;
  }
  return 0;
}

std::string_view to_string(DType dtype) noexcept {
  switch (dtype) {
    case DType::f32: return "f32";
    case DType::f64: return "f64";
    case DType::i32: return "i32";
  }
  return "?";
}

std::size_t TensorRef::span_bytes() const noexcept {
  if (empty()) return 0;
  return static_cast<std::size_t>((rows - 1) * stride + cols) * element_bytes(dtype);
}

bool TensorRef::overlaps(const TensorRef& other) const noexcept {
  if (empty() || other.empty()) return false;
  const auto* a = static_cast<const std::byte*>(data);
  const auto* b = static_cast<const std::byte*>(other.data);
  return a < b + other.span_bytes() && b < a + span_bytes();
}

TensorRef stacked(const TensorRef& stack, index batch, index k) noexcept {
  const index rows = stack.rows / batch;
  TensorRef m = stack;
  m.rows = rows;
  m.data = static_cast<std::byte*>(stack.data) +
           static_cast<std::size_t>(k * rows * stack.stride) * element_bytes(stack.dtype);
  return m;
}

std::string describe(const TensorRef& t) {
  std::string text = std::to_string(t.rows) + "x" + std::to_string(t.cols) + " " + std::string(to_string(t.dtype));
  if (!t.contiguous()) text += " (row stride " + std::to_string(t.stride) + ")";
  return text;
}

std::span<const OperandSpec> rule_operands(const AnyRule& rule) noexcept {
  return std::visit(
      [](const auto& r) -> std::span<const OperandSpec> {
        using R = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<R, std::monostate>) return {};
        else return std::span<const OperandSpec>(R::operands);
      },
      rule);
}

RuleKind rule_kind(const AnyRule& rule) noexcept {
  return std::visit(
      [](const auto& r) {
        using R = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<R, std::monostate>) return RuleKind::map;
        else return R::kind;
      },
      rule);
}

const char* rule_name(const AnyRule& rule) noexcept {
  return std::visit(
      [](const auto& r) -> const char* {
        using R = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<R, std::monostate>) return "none";
        else return R::name;
      },
      rule);
}

namespace {
template <class R>
struct ValueOf {
  using type = void;
};
template <template <class> class R, class T>
struct ValueOf<R<T>> {
  using type = T;
};
}  // namespace

DType rule_dtype(const AnyRule& rule) noexcept {
  return std::visit(
      [](const auto& r) {
        using R = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<R, std::monostate>) return DType::f32;
        else return dtype_of<typename ValueOf<R>::type>();
      },
      rule);
}

std::vector<OperandUse> operand_uses(const Operation& op) {
  return std::visit(
      Overloaded{
          [](const MapOp& m) {
            std::vector<OperandUse> uses;
            const std::span<const OperandSpec> specs = rule_operands(m.rule);
            for (int k = 0; k < m.operand_count; ++k)
              uses.push_back({m.operands[static_cast<std::size_t>(k)], specs[static_cast<std::size_t>(k)].access});
            if (m.flag.data != nullptr)
              uses.push_back({m.flag, m.skip_if_raised ? Access::read : Access::read_write});
            return uses;
          },
          [](const GemmOp& g) {
            return std::vector<OperandUse>{
                {g.a, Access::read}, {g.b, Access::read}, {g.c, g.beta == 0.0 ? Access::write : Access::read_write}};
          },
          [](const SyrkOp& s) {
            return std::vector<OperandUse>{{s.a, Access::read}, {s.c, s.beta == 0.0 ? Access::write : Access::read_write}};
          },
          [](const NormOp& n) { return std::vector<OperandUse>{{n.x, Access::read}, {n.result, Access::write}}; },
          [](const ScaleByRatioOp& s) {
            return std::vector<OperandUse>{
                {s.x, Access::read_write}, {s.numerator, Access::read}, {s.denominator, Access::read}};
          },
          [](const KlEstimatesOp& k) {
            return std::vector<OperandUse>{{k.c, Access::read},
                                           {k.s_left, Access::read},
                                           {k.s_right, Access::read},
                                           {k.left, Access::write},
                                           {k.right, Access::write}};
          },
          [](const PermuteOp& p) { return std::vector<OperandUse>{{p.x, Access::read_write}}; },
          [](const CheckFiniteOp& c) {
            return std::vector<OperandUse>{{c.x, Access::read}, {c.flag, Access::read_write}};
          },
      },
      op);
}

Operation with_operands(const Operation& op, std::span<const TensorRef> t) {
  if (t.size() != operand_uses(op).size()) throw std::logic_error("ops::with_operands: wrong operand count");
  return std::visit(
      Overloaded{
          [&](const MapOp& m) -> Operation {
            MapOp out = m;
            for (int k = 0; k < m.operand_count; ++k) out.operands[static_cast<std::size_t>(k)] = t[static_cast<std::size_t>(k)];
            if (m.flag.data != nullptr) out.flag = t[static_cast<std::size_t>(m.operand_count)];
            return out;
          },
          [&](const GemmOp& g) -> Operation {
            GemmOp out = g;
            out.a = t[0], out.b = t[1], out.c = t[2];
            return out;
          },
          [&](const SyrkOp& s) -> Operation {
            SyrkOp out = s;
            out.a = t[0], out.c = t[1];
            return out;
          },
          [&](const NormOp&) -> Operation { return NormOp{t[0], t[1]}; },
          [&](const ScaleByRatioOp& s) -> Operation { return ScaleByRatioOp{t[0], t[1], t[2], s.floor}; },
          [&](const KlEstimatesOp&) -> Operation { return KlEstimatesOp{t[0], t[1], t[2], t[3], t[4]}; },
          [&](const PermuteOp& p) -> Operation { return PermuteOp{t[0], p.row_order, p.col_order}; },
          [&](const CheckFiniteOp&) -> Operation { return CheckFiniteOp{t[0], t[1]}; },
      },
      op);
}

std::string describe(const Operation& op) {
  return std::visit(Overloaded{
                        [](const MapOp& m) { return std::string("map ") + rule_name(m.rule); },
                        [](const GemmOp& g) { return std::string(g.batch > 1 ? "gemm (batched)" : "gemm"); },
                        [](const SyrkOp&) { return std::string("syrk"); },
                        [](const NormOp&) { return std::string("norm"); },
                        [](const ScaleByRatioOp&) { return std::string("scale_by_ratio"); },
                        [](const KlEstimatesOp&) { return std::string("kl_estimates"); },
                        [](const PermuteOp&) { return std::string("permute"); },
                        [](const CheckFiniteOp&) { return std::string("check_finite"); },
                    },
                    op);
}

}  // namespace asteria::ops

#include "core/ops/device.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "core/ops/cpu_kernels.hpp"

namespace asteria::ops {
namespace {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

[[noreturn]] void reject(const std::string& op, const std::string& what) {
  throw std::invalid_argument("ops::Device: " + op + ": " + what);
}

bool is_real(DType d) { return d == DType::f32 || d == DType::f64; }

void require_cell(const TensorRef& t, DType dtype, const std::string& op, const char* what) {
  if (t.data == nullptr || t.rows != 1 || t.cols != 1 || t.dtype != dtype)
    reject(op, std::string(what) + " must be a 1x1 " + std::string(to_string(dtype)) + " cell, got " + describe(t));
}

void require_vector(const TensorRef& t, index n, DType dtype, const std::string& op, const char* what) {
  const bool shape_ok = (t.rows == n && t.cols == 1) || (t.rows == 1 && t.cols == n);
  if (!shape_ok || t.dtype != dtype)
    reject(op, std::string(what) + " must be a vector of " + std::to_string(n) + " " + std::string(to_string(dtype)) +
                   ", got " + describe(t));
}

void require_disjoint(const std::vector<OperandUse>& uses, const std::string& op) {
  for (std::size_t i = 0; i < uses.size(); ++i)
    for (std::size_t j = i + 1; j < uses.size(); ++j) {
      const OperandUse& a = uses[i];
      const OperandUse& b = uses[j];
      if (a.access == Access::read && b.access == Access::read) continue;
      if (a.tensor.data == nullptr || b.tensor.data == nullptr) continue;
      if (a.tensor.overlaps(b.tensor))
        reject(op, "operands " + std::to_string(i) + " (" + describe(a.tensor) + ") and " + std::to_string(j) + " (" +
                       describe(b.tensor) + ") overlap and one is written");
    }
}

index rows_of(const TensorRef& t, linalg::Op op) { return op == linalg::Op::none ? t.rows : t.cols; }
index cols_of(const TensorRef& t, linalg::Op op) { return op == linalg::Op::none ? t.cols : t.rows; }

void check(const Operation& operation) {
  const std::string name = describe(operation);
  std::visit(
      Overloaded{
          [&](const MapOp&) {},  // checked as it was built (shape_map)
          [&](const GemmOp& g) {
            if (!is_real(g.a.dtype) || g.a.dtype != g.b.dtype || g.a.dtype != g.c.dtype)
              reject(name, "operands must share one real dtype: " + describe(g.a) + ", " + describe(g.b) + ", " + describe(g.c));
            if (g.batch < 1) reject(name, "a batch of " + std::to_string(g.batch));
            for (const TensorRef* t : {&g.a, &g.b, &g.c})
              if (t->rows % g.batch != 0)
                reject(name, describe(*t) + " is not a stack of " + std::to_string(g.batch) + " equal matrices");
            const TensorRef a = stacked(g.a, g.batch, 0), b = stacked(g.b, g.batch, 0), c = stacked(g.c, g.batch, 0);
            if (rows_of(a, g.op_a) != c.rows || cols_of(b, g.op_b) != c.cols || cols_of(a, g.op_a) != rows_of(b, g.op_b))
              reject(name, "inconsistent shapes " + describe(a) + " x " + describe(b) + " -> " + describe(c) +
                               (g.batch > 1 ? " (per matrix of the batch)" : ""));
          },
          [&](const SyrkOp& s) {
            const index n = rows_of(s.a, s.op);
            if (!is_real(s.a.dtype) || s.a.dtype != s.c.dtype) reject(name, "operands must share one real dtype");
            if (s.c.rows != n || s.c.cols != n)
              reject(name, "result must be " + std::to_string(n) + "x" + std::to_string(n) + ", got " + describe(s.c));
          },
          [&](const NormOp& n) {
            if (!is_real(n.x.dtype)) reject(name, "x must be real");
            require_cell(n.result, DType::f64, name, "result");
          },
          [&](const ScaleByRatioOp& s) {
            if (!is_real(s.x.dtype)) reject(name, "x must be real");
            require_cell(s.denominator, DType::f64, name, "denominator");
            if (s.numerator.data != nullptr) require_cell(s.numerator, DType::f64, name, "numerator");
          },
          [&](const KlEstimatesOp& k) {
            if (!is_real(k.c.dtype)) reject(name, "c must be real");
            require_vector(k.s_left, k.c.rows, k.c.dtype, name, "s_left");
            require_vector(k.s_right, k.c.cols, k.c.dtype, name, "s_right");
            require_vector(k.left, k.c.rows, k.c.dtype, name, "left");
            require_vector(k.right, k.c.cols, k.c.dtype, name, "right");
          },
          [&](const PermuteOp& p) {
            if (!is_real(p.x.dtype)) reject(name, "x must be real");
            if (static_cast<index>(p.row_order.size()) != p.x.rows || static_cast<index>(p.col_order.size()) != p.x.cols)
              reject(name, "orders of " + std::to_string(p.row_order.size()) + " and " + std::to_string(p.col_order.size()) +
                               " entries for " + describe(p.x));
            for (auto order : {p.row_order, p.col_order}) {
              std::vector<bool> seen(order.size(), false);
              for (index i : order) {
                if (i < 0 || i >= static_cast<index>(order.size()) || seen[static_cast<std::size_t>(i)])
                  reject(name, "an order is not a permutation of 0.." + std::to_string(order.size() - 1));
                seen[static_cast<std::size_t>(i)] = true;
              }
            }
          },
          [&](const CheckFiniteOp& c) {
            if (!is_real(c.x.dtype)) reject(name, "x must be real");
            require_cell(c.flag, DType::i32, name, "the flag");
          },
      },
      operation);
  require_disjoint(operand_uses(operation), name);
}

}  // namespace

Buffer& Buffer::operator=(Buffer&& other) noexcept {
  if (this != &other) {
    if (device_ != nullptr && tensor_.data != nullptr) device_->release(tensor_.data);
    device_ = std::exchange(other.device_, nullptr);
    tensor_ = std::exchange(other.tensor_, {});
  }
  return *this;
}

Buffer::~Buffer() {
  if (device_ != nullptr && tensor_.data != nullptr) device_->release(tensor_.data);
}

Buffer Device::buffer(index rows, index cols, DType dtype) {
  if (rows < 0 || cols < 0) throw std::invalid_argument("ops::Device::matrix: negative size");
  const auto bytes = static_cast<std::size_t>(rows * cols) * element_bytes(dtype);
  void* data = bytes == 0 ? nullptr : allocate(bytes);
  return Buffer(this, TensorRef{data, rows, cols, cols, dtype});
}

void Device::zero(const TensorRef& cell) {
  const std::vector<std::byte> zeros(cell.span_bytes(), std::byte{0});
  copy_from_host(TensorRef{const_cast<std::byte*>(zeros.data()), cell.rows, cell.cols, cell.stride, cell.dtype}, cell);
}

Flag Device::flag() {
  Buffer cell = buffer(1, 1, DType::i32);
  zero(cell.ref());
  return Flag(std::move(cell));
}

Scalar Device::scalar() {
  Buffer cell = buffer(1, 1, DType::f64);
  zero(cell.ref());
  return Scalar(std::move(cell));
}

bool Device::raised(const Flag& flag) {
  std::int32_t value = 0;
  copy_to_host(flag.ref(), TensorRef{&value, 1, 1, 1, DType::i32});
  return value != 0;
}

double Device::value(const Scalar& scalar) {
  double value = 0.0;
  copy_to_host(scalar.ref(), TensorRef{&value, 1, 1, 1, DType::f64});
  return value;
}

void Device::transfer_check(const TensorRef& from, const TensorRef& to, const char* what) {
  if (from.rows != to.rows || from.cols != to.cols || from.dtype != to.dtype)
    reject(what, "views differ: " + describe(from) + " -> " + describe(to));
}

void Device::shape_map(MapOp& op, std::span<const OperandSpec> specs, DType dtype, const char* rule) {
  const std::string name = std::string("map ") + rule;
  // The operation's shape: that of its full operands, which must all agree.
  bool shaped = false;
  for (std::size_t k = 0; k < specs.size(); ++k) {
    const TensorRef& t = op.operands[k];
    if (t.dtype != dtype)
      reject(name, "operand " + std::to_string(k) + " is " + describe(t) + ", the rule computes in " + std::string(to_string(dtype)));
    if (specs[k].extent != Extent::full) continue;
    if (!shaped) {
      op.rows = t.rows, op.cols = t.cols, shaped = true;
    } else if (t.rows != op.rows || t.cols != op.cols) {
      reject(name, "operand " + std::to_string(k) + " is " + describe(t) + ", operand 0 is " + describe(op.operands[0]));
    }
  }
  if (!shaped) reject(name, "a rule needs at least one full operand");
  for (std::size_t k = 0; k < specs.size(); ++k) {
    if (specs[k].extent == Extent::per_row) require_vector(op.operands[k], op.rows, dtype, name, "a per-row operand");
    if (specs[k].extent == Extent::per_col) {
      require_vector(op.operands[k], op.cols, dtype, name, "a per-column operand");
      if (op.operands[k].cols == 1 && op.operands[k].stride != 1 && op.cols > 1)
        reject(name, "a per-column operand must be contiguous, got " + describe(op.operands[k]));
    }
  }
  const RuleKind kind = rule_kind(op.rule);
  if ((kind != RuleKind::map || op.skip_if_raised) != (op.flag.data != nullptr)) reject(name, "flag missing or not wanted");
  if (op.flag.data != nullptr) require_cell(op.flag, DType::i32, name, "the flag");
}

void Device::execute(const Operation& op) {
  check(op);
  if (supports(op)) {
    run(op);
    return;
  }
  ++fallbacks_;
  run_on_host(op);
}

void Device::run_on_host(const Operation& op) {
  // Stage every operand through contiguous host memory, run the CPU kernels there, copy back
  // what the operation writes.
  const std::vector<OperandUse> uses = operand_uses(op);
  std::vector<std::unique_ptr<std::byte[]>> staging;
  std::vector<TensorRef> host(uses.size());
  for (std::size_t i = 0; i < uses.size(); ++i) {
    const TensorRef& t = uses[i].tensor;
    if (t.data == nullptr || t.empty()) {
      host[i] = t;
      continue;
    }
    staging.push_back(std::make_unique<std::byte[]>(static_cast<std::size_t>(t.size()) * element_bytes(t.dtype)));
    host[i] = TensorRef{staging.back().get(), t.rows, t.cols, t.cols, t.dtype};
    copy_to_host(t, host[i]);
  }
  run_on_cpu(with_operands(op, host), CpuContext{detect_cpu_isa(), nullptr});
  for (std::size_t i = 0; i < uses.size(); ++i)
    if (uses[i].access != Access::read && uses[i].tensor.data != nullptr && !uses[i].tensor.empty())
      copy_from_host(host[i], uses[i].tensor);
}

}  // namespace asteria::ops

#pragma once
// Where an optimizer's per-step math runs: the device whose memory holds a block's state. The
// optimizers (core/optim) write accumulate, apply and publish once, against this interface; a
// backend runs them (CpuDevice: BLAS and vectorized loops over host memory; the CUDA device in
// core/real/cuda: cuBLAS and kernels over GPU memory).
//
// The shape of comm.hpp: the typed calls below check their operands once, here, and build an
// Operation (operation.hpp); a backend implements run() for the operations it supports() and
// the rest run on the host through the core-side fallback (operands staged through host memory,
// the CPU kernels, results copied back). tests/ops runs every operation and every optimizer's
// step on every backend against the float64 reference.
//
// Operations are ordered: each sees the effects of the ones called before it on the same device.
// A backend may run them asynchronously (a CUDA stream); reading a result on the host (raised(),
// value(), download()) waits for what it depends on. A device is used by one thread at a time.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "core/linalg/blas.hpp"
#include "core/linalg/matrix.hpp"
#include "core/linalg/symmetric_solver.hpp"
#include "core/ops/operation.hpp"
#include "core/ops/rules.hpp"
#include "core/ops/tensor_ref.hpp"

namespace asteria::ops {

class Device;

// Memory of a device, released through it when the handle goes (the device must outlive it).
class Buffer {
 public:
  Buffer() = default;
  Buffer(Device* device, TensorRef tensor) noexcept : device_(device), tensor_(tensor) {}
  Buffer(Buffer&& other) noexcept
      : device_(std::exchange(other.device_, nullptr)), tensor_(std::exchange(other.tensor_, {})) {}
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();

  const TensorRef& ref() const noexcept { return tensor_; }
  // The buffer as a matrix of T (std::logic_error if it holds another type).
  template <Real T>
  linalg::MatrixView<T> view() const {
    if (tensor_.dtype != dtype_of<T>()) throw std::logic_error("ops::Buffer: viewed as " + std::string(to_string(dtype_of<T>())) + ", holds " + describe(tensor_));
    return view_of<T>(tensor_);
  }

 private:
  Device* device_ = nullptr;
  TensorRef tensor_{};
};

// A flag in device memory that guarded and checked operations raise when they meet a non-finite
// value, and that later operations may test without a trip to the host.
class Flag {
 public:
  explicit Flag(Buffer cell) noexcept : cell_(std::move(cell)) {}
  const TensorRef& ref() const noexcept { return cell_.ref(); }

 private:
  Buffer cell_;
};

// A double in device memory (a norm), read by later operations without a trip to the host.
class Scalar {
 public:
  explicit Scalar(Buffer cell) noexcept : cell_(std::move(cell)) {}
  const TensorRef& ref() const noexcept { return cell_.ref(); }

 private:
  Buffer cell_;
};

// A point in a device's queue of operations: wait() returns once every operation called on the
// device before the fence was taken has finished (throwing std::runtime_error when the device
// failed). An executor completes a launch through it without holding the thread that queues the
// next one (a CUDA event).
class Fence {
 public:
  virtual ~Fence() = default;
  virtual void wait() = 0;
};

// Host memory page-locked for a device's copies (Device::pin), released when this goes.
class PinnedHost {
 public:
  virtual ~PinnedHost() = default;
};

// Operands of a map operation.
template <class V>
inline constexpr bool kIsView = false;
template <class T>
inline constexpr bool kIsView<linalg::MatrixView<T>> = true;

// The element type of a rule (every rule is a template over it).
template <class Rule>
struct RuleValue;
template <template <class> class R, class T>
struct RuleValue<R<T>> {
  using type = T;
};

class Device {
 public:
  virtual ~Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  virtual std::string_view name() const noexcept = 0;
  // Whether host code may read and write this device's memory directly.
  virtual bool host_addressable() const noexcept = 0;

  // --- memory -------------------------------------------------------------------------------
  template <Real T>
  Buffer matrix(index rows, index cols) {  // contents unspecified
    return buffer(rows, cols, dtype_of<T>());
  }
  Flag flag();      // lowered
  Scalar scalar();  // 0

  // --- moving values ------------------------------------------------------------------------
  template <Real T>
  void copy(linalg::ConstMatrixView<T> from, linalg::MatrixView<T> to) {
    map(Assign<T>{}, to, from);
  }
  template <Real T>
  void fill(linalg::MatrixView<T> to, T value) {
    map(Set<T>{value}, to);
  }
  // Between host memory and this device's (views of equal shape; any strides).
  template <Real T>
  void upload(linalg::ConstMatrixView<T> host, linalg::MatrixView<T> on_device) {
    transfer_check(ref(host), ref(on_device), "upload");
    if (!host.empty()) copy_from_host(ref(host), ref(on_device));
  }
  template <Real T>
  void download(linalg::ConstMatrixView<T> on_device, linalg::MatrixView<T> host) {
    transfer_check(ref(on_device), ref(host), "download");
    if (!host.empty()) copy_to_host(ref(on_device), ref(host));
  }
  // A copy the host reads later (a refresh's snapshot). Inside an AsyncCopies scope it is only
  // queued, after the operations called so far: its bytes are in `host` once a fence() taken
  // after it has been waited for (at once where fence() returns null), and `host` stays alive
  // and unread until then (pin() it first, or a CUDA device copies synchronously anyway).
  // Outside a scope it is download(): callers that read at once need no fence.
  template <Real T>
  void download_async(linalg::ConstMatrixView<T> on_device, linalg::MatrixView<T> host) {
    transfer_check(ref(on_device), ref(host), "download_async");
    if (host.empty()) return;
    if (async_copies_ > 0) copy_to_host_async(ref(on_device), ref(host));
    else copy_to_host(ref(on_device), ref(host));
  }
  // An upload ordered like any operation that the host does not wait for inside an AsyncCopies
  // scope: `host` may be reused once the call returns (a device stages it), and the device's
  // later operations see the values. Outside a scope it is upload().
  template <Real T>
  void upload_async(linalg::ConstMatrixView<T> host, linalg::MatrixView<T> on_device) {
    transfer_check(ref(host), ref(on_device), "upload_async");
    if (host.empty()) return;
    if (async_copies_ > 0) copy_from_host_async(ref(host), ref(on_device));
    else copy_from_host(ref(host), ref(on_device));
  }
  // While one lives, download_async() leaves its copies in flight (its owner waits for a fence
  // taken after them before reading: the preconditioner service, around a snapshot), and
  // upload_async() does not wait for the device (around a publication).
  class AsyncCopies {
   public:
    explicit AsyncCopies(Device& device) : device_(device) { ++device_.async_copies_; }
    ~AsyncCopies() { --device_.async_copies_; }
    AsyncCopies(const AsyncCopies&) = delete;
    AsyncCopies& operator=(const AsyncCopies&) = delete;

   private:
    Device& device_;
  };
  // Page-locks `host` for asynchronous copies until the returned object goes; null where the
  // device's copies need no such thing (or it could not: copies then wait).
  virtual std::unique_ptr<PinnedHost> pin(std::span<std::byte> /*host*/) { return nullptr; }

  // --- products (linalg::gemm and linalg::syrk's contracts) ---------------------------------
  template <Real T>
  void gemm(T alpha, linalg::ConstMatrixView<T> a, linalg::Op op_a, linalg::ConstMatrixView<T> b, linalg::Op op_b,
            T beta, linalg::MatrixView<T> c) {
    execute(GemmOp{ref(a), ref(b), ref(c), op_a, op_b, static_cast<double>(alpha), static_cast<double>(beta)});
  }
  // `batch` products at once: a, b and c each stack `batch` equal matrices one below the other.
  template <Real T>
  void gemm_batched(T alpha, linalg::ConstMatrixView<T> a, linalg::Op op_a, linalg::ConstMatrixView<T> b,
                    linalg::Op op_b, T beta, linalg::MatrixView<T> c, index batch) {
    execute(GemmOp{ref(a), ref(b), ref(c), op_a, op_b, static_cast<double>(alpha), static_cast<double>(beta), batch});
  }
  template <Real T>
  void syrk(T alpha, linalg::ConstMatrixView<T> a, linalg::Op op, T beta, linalg::MatrixView<T> c) {
    execute(SyrkOp{ref(a), ref(c), op, static_cast<double>(alpha), static_cast<double>(beta)});
  }

  // --- element-wise rules (rules.hpp); operands in the rule's order ---------------------------
  template <class Rule, class... Views>
  void map(const Rule& rule, Views... operands) {
    static_assert(Rule::kind == RuleKind::map, "map() takes map rules; update() guarded, checked_write() checked ones");
    execute(map_op(rule, nullptr, false, operands...));
  }
  // Does nothing when `flag` is raised: the commit that must follow only a written update.
  template <class Rule, class... Views>
  void map_unless_raised(const Flag& flag, const Rule& rule, Views... operands) {
    static_assert(Rule::kind == RuleKind::map);
    execute(map_op(rule, &flag, true, operands...));
  }
  // One pass; each element written only where its new values are all finite; raises `flag`
  // when some element was not.
  template <class Rule, class... Views>
  void update(const Flag& flag, const Rule& rule, Views... operands) {
    static_assert(Rule::kind == RuleKind::guarded, "update() takes guarded rules");
    execute(map_op(rule, &flag, false, operands...));
  }
  // Operand 0 gets the rule's new value only if every element's is finite; otherwise it is left
  // as it was and `flag` is raised.
  template <class Rule, class... Views>
  void checked_write(const Flag& flag, const Rule& rule, Views... operands) {
    static_assert(Rule::kind == RuleKind::checked, "checked_write() takes checked rules");
    execute(map_op(rule, &flag, false, operands...));
  }

  // --- reductions and the rest ----------------------------------------------------------------
  template <Real T>
  void norm(linalg::ConstMatrixView<T> x, const Scalar& result) {
    execute(NormOp{ref(x), result.ref()});
  }
  // x ← x · T(numerator / (denominator + floor)); no numerator: 1.
  template <Real T>
  void scale_by_ratio(linalg::MatrixView<T> x, const Scalar* numerator, const Scalar& denominator, double floor) {
    execute(ScaleByRatioOp{ref(x), numerator != nullptr ? numerator->ref() : TensorRef{}, denominator.ref(), floor});
  }
  template <Real T>
  void kl_estimates(linalg::ConstMatrixView<T> c, linalg::ConstMatrixView<T> s_left, linalg::ConstMatrixView<T> s_right,
                    linalg::MatrixView<T> left, linalg::MatrixView<T> right) {
    execute(KlEstimatesOp{ref(c), ref(s_left), ref(s_right), ref(left), ref(right)});
  }
  template <Real T>
  void permute(linalg::MatrixView<T> x, std::span<const index> row_order, std::span<const index> col_order) {
    execute(PermuteOp{ref(x), row_order, col_order});
  }
  // Raises `flag` when x holds NaN or Inf.
  template <Real T>
  void check_finite(linalg::ConstMatrixView<T> x, const Flag& flag) {
    execute(CheckFiniteOp{ref(x), flag.ref()});
  }

  // --- results on the host (wait for the work they depend on) ---------------------------------
  bool raised(const Flag& flag);
  double value(const Scalar& scalar);
  void synchronize() { wait(); }
  // A fence after every operation called so far; null when they have all finished already (a
  // device whose operations run before the call returns).
  virtual std::unique_ptr<Fence> fence() { return nullptr; }

  // Operations run by the core-side fallback because the backend declined them.
  std::int64_t fallback_count() const noexcept { return fallbacks_; }

  // The refresh factorizations this device runs itself (a refresh placed on the device solves
  // there); null: none, the host's LAPACK solves them on the thread that runs the refresh.
  virtual const linalg::SymmetricSolver* solver() const noexcept { return nullptr; }

 protected:
  Device() = default;

  // Backend hooks. run() receives checked operations only.
  virtual bool supports(const Operation& /*op*/) const { return true; }
  virtual void run(const Operation& op) = 0;
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void release(void* data) noexcept = 0;
  // Strided copies between a host view and a device view of the same shape and dtype.
  virtual void copy_from_host(const TensorRef& host, const TensorRef& on_device) = 0;
  virtual void copy_to_host(const TensorRef& on_device, const TensorRef& host) = 0;
  // By default the copies are done when the calls return.
  virtual void copy_to_host_async(const TensorRef& on_device, const TensorRef& host) { copy_to_host(on_device, host); }
  virtual void copy_from_host_async(const TensorRef& host, const TensorRef& on_device) {
    copy_from_host(host, on_device);
  }
  // Returns once every operation called so far has finished.
  virtual void wait() {}
  // Sets a buffer's bytes to zero (flags and scalars start so). By default a copy from the host;
  // a backend with an asynchronous fill saves the wait.
  virtual void zero(const TensorRef& cell);

 private:
  friend class Buffer;
  int async_copies_ = 0;  // open AsyncCopies scopes

  Buffer buffer(index rows, index cols, DType dtype);
  void execute(const Operation& op);
  void run_on_host(const Operation& op);
  static void transfer_check(const TensorRef& from, const TensorRef& to, const char* what);

  template <class Rule, class... Views>
  MapOp map_op(const Rule& rule, const Flag* flag, bool skip_if_raised, Views... operands) {
    static_assert((kIsView<Views> && ...), "map operands are linalg::MatrixView<T> or MatrixView<const T>");
    static_assert(sizeof...(Views) == std::tuple_size_v<decltype(Rule::operands)>,
                  "a map operation takes exactly its rule's operands");
    MapOp op;
    op.rule = rule;
    op.operand_count = static_cast<int>(sizeof...(Views));
    std::size_t k = 0;
    bool writable_ok = true;
    (
        [&] {
          using View = Views;
          constexpr bool is_const = std::is_const_v<std::remove_pointer_t<decltype(std::declval<View>().data())>>;
          const OperandSpec spec = Rule::operands[k];
          if (spec.access != Access::read && is_const) writable_ok = false;
          op.operands[k] = ref(operands);
          ++k;
        }(),
        ...);
    if (!writable_ok)
      throw std::invalid_argument(std::string("ops::Device: ") + Rule::name + " writes an operand given as a view of const data");
    if (flag != nullptr) op.flag = flag->ref();
    op.skip_if_raised = skip_if_raised;
    shape_map(op, Rule::operands, dtype_of<typename RuleValue<Rule>::type>(), Rule::name);
    return op;
  }
  template <std::size_t N>
  static void shape_map(MapOp& op, const std::array<OperandSpec, N>& specs, DType dtype, const char* rule) {
    shape_map(op, std::span<const OperandSpec>(specs), dtype, rule);
  }
  // Sets the operation's shape from its operands and checks them against the rule's specs.
  static void shape_map(MapOp& op, std::span<const OperandSpec> specs, DType dtype, const char* rule);

  std::int64_t fallbacks_ = 0;
};

// Whether x holds only finite values, read where it lives: a host loop where the host can read
// the device's memory, else a check on the device and one read of its flag (a synchronization).
template <Real T>
bool all_finite(Device& device, linalg::ConstMatrixView<T> x) {
  if (device.host_addressable()) return linalg::all_finite(x);
  const Flag flag = device.flag();
  device.check_finite(x, flag);
  return !device.raised(flag);
}

}  // namespace asteria::ops

#include "core/real/cuda/cuda_ops_kernels.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "core/ops/rules.hpp"
#include "core/real/cuda/gpt_cuda_reduce.cuh"

namespace asteria::real::cuda::ops_kernels {
namespace {

using ops::Access;
using ops::Extent;
using ops::OperandSpec;
using ops::RuleKind;
using ops::TensorRef;

constexpr int kThreads = 256;
// Enough blocks in flight to cover every SM several times; larger maps loop (grid-stride).
constexpr long long kMaxBlocks = 8192;

void check_launch(const char* what) {
  if (cudaError_t err = cudaGetLastError(); err != cudaSuccess)
    throw std::runtime_error(std::string("CudaDevice: ") + what + ": " + cudaGetErrorString(err));
}

unsigned grid_for(long long n) {
  return static_cast<unsigned>(std::clamp<long long>((n + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

template <class R>
struct ValueOf;
template <template <class> class R, class T>
struct ValueOf<R<T>> {
  using type = T;
};

// Up to six operands: base pointers, row strides, and for vectors the distance between elements.
struct Operands {
  void* data[6] = {};
  long long stride[6] = {};
  long long step[6] = {};
};

Operands operands_of(const ops::MapOp& op) {
  Operands a;
  for (int k = 0; k < op.operand_count; ++k) {
    const TensorRef& t = op.operands[static_cast<std::size_t>(k)];
    a.data[k] = t.data;
    a.stride[k] = t.stride;
    a.step[k] = t.cols == 1 ? t.stride : 1;
  }
  return a;
}

template <class T, OperandSpec S>
struct Element {
  __device__ __forceinline__ static T* address(void* base, long long stride, long long step, long long i, long long j,
                                               long long k, bool flat) {
    T* p = static_cast<T*>(base);
    if constexpr (S.extent == Extent::per_row) return p + i * step;
    else if constexpr (S.extent == Extent::per_col) return p + j * step;
    else return flat ? p + k : p + i * stride + j;
  }
  __device__ __forceinline__ static decltype(auto) at(const Operands& a, int n, long long i, long long j, long long k,
                                                      bool flat) {
    T* p = address(a.data[n], a.stride[n], a.step[n], i, j, k, flat);
    if constexpr (S.access == Access::read) return T(*p);
    else return (*p);
  }
};

enum class Pass { apply, check, write };

// One pass of a rule over rows x cols elements (flat: every operand full and contiguous).
// apply: map and guarded rules (guarded raise *flag). check: *verdict = 1 where a checked rule's
// value is non-finite. write: operand 0 gets the checked rule's value unless *verdict, and the
// verdict is carried into *flag.
template <Pass P, class Rule, std::size_t... K>
__global__ void map_kernel(Rule rule, Operands a, long long rows, long long cols, bool flat, int* flag,
                           const int* skip_if, int* verdict, std::index_sequence<K...>) {
  using T = typename ValueOf<Rule>::type;
  if (skip_if != nullptr && *skip_if != 0) return;
  if constexpr (P == Pass::write) {
    if (*verdict != 0) {
      if (blockIdx.x == 0 && threadIdx.x == 0) *flag = 1;
      return;
    }
  }
  const long long n = rows * cols;
  int bad = 0;
  for (long long k = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; k < n;
       k += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long i = flat ? 0 : k / cols;
    const long long j = flat ? k : k - i * cols;
    if constexpr (P == Pass::check) {
      bad |= ops::is_finite(rule(Element<T, Rule::operands[K]>::at(a, static_cast<int>(K), i, j, k, flat)...)) ? 0 : 1;
    } else if constexpr (P == Pass::write) {
      T* target = Element<T, Rule::operands[0]>::address(a.data[0], a.stride[0], a.step[0], i, j, k, flat);
      *target = rule(Element<T, Rule::operands[K]>::at(a, static_cast<int>(K), i, j, k, flat)...);
    } else if constexpr (Rule::kind == RuleKind::guarded) {
      bad |= rule(Element<T, Rule::operands[K]>::at(a, static_cast<int>(K), i, j, k, flat)...) ? 0 : 1;
    } else {
      rule(Element<T, Rule::operands[K]>::at(a, static_cast<int>(K), i, j, k, flat)...);
    }
  }
  if (bad != 0) *(P == Pass::check ? verdict : flag) = 1;  // every writer stores 1: no race on the value
}

template <Pass P, class Rule>
void launch_pass(const Rule& rule, const ops::MapOp& op, bool flat, int* verdict, cudaStream_t stream) {
  constexpr std::size_t N = Rule::operands.size();
  const long long n = op.rows * op.cols;
  int* flag = static_cast<int*>(op.flag.data);
  const int* skip_if = op.skip_if_raised ? flag : nullptr;
  map_kernel<P><<<grid_for(n), kThreads, 0, stream>>>(rule, operands_of(op), op.rows, op.cols, flat, flag, skip_if,
                                                       verdict, std::make_index_sequence<N>{});
  check_launch(Rule::name);
}

template <class Rule>
void launch_rule(const Rule& rule, const ops::MapOp& op, int* verdict, cudaStream_t stream) {
  if (op.rows == 0 || op.cols == 0) return;
  bool flat = true;
  for (std::size_t k = 0; k < Rule::operands.size(); ++k)
    flat = flat && Rule::operands[k].extent == Extent::full && op.operands[k].contiguous();
  if constexpr (Rule::kind == RuleKind::checked) {
    cudaMemsetAsync(verdict, 0, sizeof(int), stream);
    launch_pass<Pass::check>(rule, op, flat, verdict, stream);
    launch_pass<Pass::write>(rule, op, flat, verdict, stream);
  } else {
    launch_pass<Pass::apply>(rule, op, flat, verdict, stream);
  }
}

template <class T>
__global__ void sum_squares(const T* x, long long rows, long long cols, long long stride, double* partials) {
  double sum = 0.0;
  const long long n = rows * cols;
  for (long long k = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; k < n;
       k += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long i = k / cols;
    const double v = static_cast<double>(x[i * stride + (k - i * cols)]);
    sum += v * v;
  }
  sum = kernels::block_sum(sum);
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

// Partials summed in one block, in a fixed order: the same bits every run.
__global__ void finish_norm(const double* partials, int count, double* result) {
  double sum = 0.0;
  for (int p = static_cast<int>(threadIdx.x); p < count; p += static_cast<int>(blockDim.x)) sum += partials[p];
  sum = kernels::block_sum(sum);
  if (threadIdx.x == 0) *result = sqrt(sum);
}

template <class T>
__global__ void scale_by_ratio(T* x, long long rows, long long cols, long long stride, const double* numerator,
                               const double* denominator, double floor) {
  const T s = static_cast<T>((numerator != nullptr ? *numerator : 1.0) / (*denominator + floor));
  const long long n = rows * cols;
  for (long long k = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; k < n;
       k += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long i = k / cols;
    T& v = x[i * stride + (k - i * cols)];
    v = v * s;
  }
}

// One block per row: left_i = Σ_j c_ij² s_right,j² / cols.
template <class T>
__global__ void kl_left(const T* c, long long cols, long long stride, const T* s_right, long long right_step, T* left,
                        long long left_step) {
  const long long i = blockIdx.x;
  T sum = T(0);
  for (long long j = threadIdx.x; j < cols; j += blockDim.x) {
    const T v = c[i * stride + j];
    const T sr = s_right[j * right_step];
    sum += v * v * sr * sr;
  }
  sum = kernels::block_sum(sum);
  if (threadIdx.x == 0) left[i * left_step] = sum / static_cast<T>(cols);
}

// One thread per column: right_j = Σ_i c_ij² s_left,i² / rows.
template <class T>
__global__ void kl_right(const T* c, long long rows, long long cols, long long stride, const T* s_left,
                         long long left_step, T* right, long long right_step) {
  const long long j = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= cols) return;
  T sum = T(0);
  for (long long i = 0; i < rows; ++i) {
    const T v = c[i * stride + j];
    const T sl = s_left[i * left_step];
    sum += v * v * sl * sl;
  }
  right[j * right_step] = sum / static_cast<T>(rows);
}

template <class T>
__global__ void gather(const T* x, long long rows, long long cols, long long stride, const long long* row_order,
                       const long long* col_order, T* out) {
  const long long n = rows * cols;
  for (long long k = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; k < n;
       k += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long i = k / cols, j = k - i * cols;
    out[k] = x[row_order[i] * stride + col_order[j]];
  }
}

template <class T>
__global__ void scatter_rows(const T* in, long long rows, long long cols, long long stride, T* x) {
  const long long n = rows * cols;
  for (long long k = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; k < n;
       k += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long i = k / cols;
    x[i * stride + (k - i * cols)] = in[k];
  }
}

template <class T>
__global__ void check_finite(const T* x, long long rows, long long cols, long long stride, int* flag) {
  const long long n = rows * cols;
  int bad = 0;
  for (long long k = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; k < n;
       k += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long i = k / cols;
    bad |= ops::is_finite(x[i * stride + (k - i * cols)]) ? 0 : 1;
  }
  if (bad != 0) *flag = 1;
}

template <class T>
__global__ void mirror_lower(T* c, long long n, long long stride) {
  const long long total = n * n;
  for (long long k = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; k < total;
       k += static_cast<long long>(gridDim.x) * blockDim.x) {
    const long long i = k / n, j = k - i * n;
    if (j > i) c[i * stride + j] = c[j * stride + i];
  }
}

template <class F>
void by_dtype(ops::DType dtype, F&& f) {
  if (dtype == ops::DType::f32) f(float{});
  else f(double{});
}

}  // namespace

void launch_map(const ops::MapOp& op, int* verdict, cudaStream_t stream) {
  std::visit(
      [&](const auto& rule) {
        using R = std::decay_t<decltype(rule)>;
        if constexpr (!std::is_same_v<R, std::monostate>) launch_rule(rule, op, verdict, stream);
      },
      op.rule);
}

void launch_norm(const ops::NormOp& op, double* partials, cudaStream_t stream) {
  const long long n = op.x.rows * op.x.cols;
  const unsigned blocks = static_cast<unsigned>(std::clamp<long long>((n + kThreads - 1) / kThreads, 1, kNormPartials));
  by_dtype(op.x.dtype, [&]<class T>(T) {
    sum_squares<T><<<blocks, kThreads, 0, stream>>>(static_cast<const T*>(op.x.data), op.x.rows, op.x.cols,
                                                    op.x.stride, partials);
  });
  finish_norm<<<1, 1024, 0, stream>>>(partials, static_cast<int>(blocks), static_cast<double*>(op.result.data));
  check_launch("norm");
}

void launch_scale_by_ratio(const ops::ScaleByRatioOp& op, cudaStream_t stream) {
  by_dtype(op.x.dtype, [&]<class T>(T) {
    scale_by_ratio<T><<<grid_for(op.x.rows * op.x.cols), kThreads, 0, stream>>>(
        static_cast<T*>(op.x.data), op.x.rows, op.x.cols, op.x.stride, static_cast<const double*>(op.numerator.data),
        static_cast<const double*>(op.denominator.data), op.floor);
  });
  check_launch("scale_by_ratio");
}

void launch_kl_estimates(const ops::KlEstimatesOp& op, cudaStream_t stream) {
  auto step = [](const TensorRef& v) -> long long { return v.cols == 1 ? v.stride : 1; };
  by_dtype(op.c.dtype, [&]<class T>(T) {
    const T* c = static_cast<const T*>(op.c.data);
    if (op.c.rows > 0)
      kl_left<T><<<static_cast<unsigned>(op.c.rows), kThreads, 0, stream>>>(
          c, op.c.cols, op.c.stride, static_cast<const T*>(op.s_right.data), step(op.s_right),
          static_cast<T*>(op.left.data), step(op.left));
    if (op.c.cols > 0)
      kl_right<T><<<static_cast<unsigned>((op.c.cols + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
          c, op.c.rows, op.c.cols, op.c.stride, static_cast<const T*>(op.s_left.data), step(op.s_left),
          static_cast<T*>(op.right.data), step(op.right));
  });
  check_launch("kl_estimates");
}

void launch_permute(const ops::PermuteOp& op, const long long* rows, const long long* cols, void* scratch,
                    cudaStream_t stream) {
  const long long n = op.x.rows * op.x.cols;
  if (n == 0) return;
  by_dtype(op.x.dtype, [&]<class T>(T) {
    gather<T><<<grid_for(n), kThreads, 0, stream>>>(static_cast<const T*>(op.x.data), op.x.rows, op.x.cols, op.x.stride,
                                                    rows, cols, static_cast<T*>(scratch));
    scatter_rows<T><<<grid_for(n), kThreads, 0, stream>>>(static_cast<const T*>(scratch), op.x.rows, op.x.cols,
                                                          op.x.stride, static_cast<T*>(op.x.data));
  });
  check_launch("permute");
}

void launch_check_finite(const ops::CheckFiniteOp& op, cudaStream_t stream) {
  const long long n = op.x.rows * op.x.cols;
  if (n == 0) return;
  by_dtype(op.x.dtype, [&]<class T>(T) {
    check_finite<T><<<grid_for(n), kThreads, 0, stream>>>(static_cast<const T*>(op.x.data), op.x.rows, op.x.cols,
                                                          op.x.stride, static_cast<int*>(op.flag.data));
  });
  check_launch("check_finite");
}

void launch_mirror_lower(const TensorRef& c, cudaStream_t stream) {
  if (c.rows <= 1) return;
  by_dtype(c.dtype, [&]<class T>(T) {
    mirror_lower<T><<<grid_for(c.rows * c.rows), kThreads, 0, stream>>>(static_cast<T*>(c.data), c.rows, c.stride);
  });
  check_launch("syrk (mirror)");
}

}  // namespace asteria::real::cuda::ops_kernels

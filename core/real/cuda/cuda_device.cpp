#include "core/real/cuda/cuda_device.hpp"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/real/cuda/cuda_ops_kernels.hpp"
#include "core/real/cuda/cuda_solver.hpp"

namespace asteria::real::cuda {
namespace {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

void check(cudaError_t err, const std::string& what) {
  if (err != cudaSuccess) throw std::runtime_error("CudaDevice: " + what + ": " + cudaGetErrorString(err));
}
void check(cublasStatus_t status, const std::string& what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error("CudaDevice: " + what + ": cuBLAS status " + std::to_string(static_cast<int>(status)));
}

int as_int(ops::index v, const char* what) {
  if (v > std::numeric_limits<int>::max()) throw std::runtime_error(std::string("CudaDevice: ") + what + " exceeds cuBLAS's int range");
  return static_cast<int>(v);
}

cublasOperation_t op_of(linalg::Op op) { return op == linalg::Op::none ? CUBLAS_OP_N : CUBLAS_OP_T; }

}  // namespace

// Page-locked host buffers that asynchronous uploads are staged through: a buffer is free again
// once the copy recorded after it has run (its event), so the caller's host memory is reusable as
// soon as the call returns and the host never waits for the stream.
struct StagingBuffer {
  std::byte* pinned = nullptr;
  std::size_t bytes = 0;
  cudaEvent_t copied = nullptr;
};

struct CudaDevice::Handles {
  int device = 0;
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  // Per-operation device scratch, sized once: the checked rules' verdict, the norm's partials.
  int* verdict = nullptr;
  double* norm_partials = nullptr;
  std::vector<StagingBuffer> staging;  // oldest first
  std::size_t staging_bytes = 0;
};

namespace {
// Beyond this much staged memory an upload waits for the oldest staged copy to finish and takes
// its buffer (or frees it for a larger one).
constexpr std::size_t kStagingCap = std::size_t{256} << 20;

void free_staging(StagingBuffer& b) {
  if (b.copied != nullptr) cudaEventDestroy(b.copied);
  if (b.pinned != nullptr) cudaFreeHost(b.pinned);
  b = {};
}
}  // namespace

CudaDevice::CudaDevice(int device) : handles_(std::make_unique<Handles>()) {
  Handles& h = *handles_;
  h.device = device;
  check(cudaSetDevice(device), "cudaSetDevice(" + std::to_string(device) + ")");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  name_ = std::string("cuda:") + std::to_string(device) + " (" + prop.name + ")";
  check(cudaStreamCreateWithFlags(&h.stream, cudaStreamNonBlocking), "cudaStreamCreate");
  check(cublasCreate(&h.blas), "cublasCreate");
  check(cublasSetStream(h.blas, h.stream), "cublasSetStream");
  // Exact FP32 products (no TF32): the conformance tolerances are those of IEEE single precision.
  check(cublasSetMathMode(h.blas, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");
  // Freed temporaries stay in the stream-ordered pool for the next step instead of going back
  // to the driver.
  cudaMemPool_t pool = nullptr;
  check(cudaDeviceGetDefaultMemPool(&pool, device), "cudaDeviceGetDefaultMemPool");
  std::uint64_t keep = std::numeric_limits<std::uint64_t>::max();
  check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep), "cudaMemPoolSetAttribute");
  check(cudaMalloc(reinterpret_cast<void**>(&h.verdict), sizeof(int)), "cudaMalloc");
  check(cudaMalloc(reinterpret_cast<void**>(&h.norm_partials), sizeof(double) * ops_kernels::kNormPartials),
        "cudaMalloc");
  try {
    solver_ = std::make_unique<CudaSolver>(device);
  } catch (const std::runtime_error&) {
    solver_ = nullptr;  // refreshes on this device solve on the host
  }
}

const linalg::SymmetricSolver* CudaDevice::solver() const noexcept { return solver_.get(); }

CudaDevice::~CudaDevice() {
  Handles& h = *handles_;
  cudaStreamSynchronize(h.stream);
  for (StagingBuffer& b : h.staging) free_staging(b);
  cudaFree(h.verdict);
  cudaFree(h.norm_partials);
  cublasDestroy(h.blas);
  cudaStreamDestroy(h.stream);
}

void* CudaDevice::stream() const noexcept { return handles_->stream; }

// Operations come from whichever thread uses the device (the device stream's, the issuer's):
// kernels and copies go to the device current on the calling thread, so this one is made so.
void CudaDevice::make_current() const { check(cudaSetDevice(handles_->device), "cudaSetDevice"); }

void* CudaDevice::allocate(std::size_t bytes) {
  make_current();
  void* data = nullptr;
  check(cudaMallocAsync(&data, bytes, handles_->stream), "cudaMallocAsync of " + std::to_string(bytes) + " bytes");
  return data;
}

void CudaDevice::release(void* data) noexcept { cudaFreeAsync(data, handles_->stream); }

namespace {
void copy_2d(const ops::TensorRef& from, const ops::TensorRef& to, cudaMemcpyKind kind, cudaStream_t stream,
             bool wait = true) {
  const std::size_t element = ops::element_bytes(from.dtype);
  check(cudaMemcpy2DAsync(to.data, static_cast<std::size_t>(to.stride) * element, from.data,
                          static_cast<std::size_t>(from.stride) * element, static_cast<std::size_t>(from.cols) * element,
                          static_cast<std::size_t>(from.rows), kind, stream),
        "cudaMemcpy2DAsync");
  if (wait) check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
}

// Page-locked host memory, unregistered when it goes.
class CudaPinnedHost final : public ops::PinnedHost {
 public:
  explicit CudaPinnedHost(void* at) : at_(at) {}
  ~CudaPinnedHost() override { cudaHostUnregister(at_); }
  CudaPinnedHost(const CudaPinnedHost&) = delete;
  CudaPinnedHost& operator=(const CudaPinnedHost&) = delete;

 private:
  void* at_;
};
}  // namespace

void CudaDevice::copy_from_host(const ops::TensorRef& host, const ops::TensorRef& on_device) {
  make_current();
  copy_2d(host, on_device, cudaMemcpyHostToDevice, handles_->stream);
}

void CudaDevice::copy_to_host(const ops::TensorRef& on_device, const ops::TensorRef& host) {
  make_current();
  copy_2d(on_device, host, cudaMemcpyDeviceToHost, handles_->stream);
}

void CudaDevice::copy_from_host_async(const ops::TensorRef& host, const ops::TensorRef& on_device) {
  make_current();
  Handles& h = *handles_;
  const std::size_t element = ops::element_bytes(host.dtype);
  const std::size_t row_bytes = static_cast<std::size_t>(host.cols) * element;
  const std::size_t bytes = row_bytes * static_cast<std::size_t>(host.rows);
  // A free buffer large enough; else a new one while under the cap; else the oldest, waited for.
  auto free_one = std::find_if(h.staging.begin(), h.staging.end(), [&](const StagingBuffer& b) {
    return b.bytes >= bytes && cudaEventQuery(b.copied) == cudaSuccess;
  });
  if (free_one == h.staging.end()) {
    while (!h.staging.empty() && h.staging_bytes + bytes > kStagingCap) {
      check(cudaEventSynchronize(h.staging.front().copied), "cudaEventSynchronize");
      h.staging_bytes -= h.staging.front().bytes;
      free_staging(h.staging.front());
      h.staging.erase(h.staging.begin());
    }
    StagingBuffer b;
    b.bytes = bytes;
    check(cudaHostAlloc(reinterpret_cast<void**>(&b.pinned), bytes, cudaHostAllocDefault), "cudaHostAlloc");
    if (const cudaError_t err = cudaEventCreateWithFlags(&b.copied, cudaEventDisableTiming); err != cudaSuccess) {
      free_staging(b);
      check(err, "cudaEventCreate");
    }
    h.staging_bytes += bytes;
    h.staging.push_back(b);
    free_one = h.staging.end() - 1;
  }
  StagingBuffer staged = *free_one;
  h.staging.erase(free_one);  // to the back: the newest
  const auto* from = static_cast<const std::byte*>(host.data);
  for (ops::index r = 0; r < host.rows; ++r)
    std::memcpy(staged.pinned + static_cast<std::size_t>(r) * row_bytes,
                from + static_cast<std::size_t>(r * host.stride) * element, row_bytes);
  const cudaError_t copied = cudaMemcpy2DAsync(on_device.data, static_cast<std::size_t>(on_device.stride) * element,
                                               staged.pinned, row_bytes, row_bytes, static_cast<std::size_t>(host.rows),
                                               cudaMemcpyHostToDevice, h.stream);
  const cudaError_t recorded = copied == cudaSuccess ? cudaEventRecord(staged.copied, h.stream) : copied;
  h.staging.push_back(staged);
  check(copied, "cudaMemcpy2DAsync");
  check(recorded, "cudaEventRecord");
}

void CudaDevice::copy_to_host_async(const ops::TensorRef& on_device, const ops::TensorRef& host) {
  make_current();
  copy_2d(on_device, host, cudaMemcpyDeviceToHost, handles_->stream, /*wait=*/false);
}

std::unique_ptr<ops::PinnedHost> CudaDevice::pin(std::span<std::byte> host) {
  if (host.empty()) return nullptr;
  make_current();
  if (cudaHostRegister(host.data(), host.size(), cudaHostRegisterPortable) != cudaSuccess) {
    cudaGetLastError();  // clear it: copies into this memory then simply wait
    return nullptr;
  }
  return std::make_unique<CudaPinnedHost>(host.data());
}

void CudaDevice::wait() { check(cudaStreamSynchronize(handles_->stream), "cudaStreamSynchronize"); }

namespace {
// An event recorded on the device's stream; timing off (the cheapest kind to record and query).
class CudaFence final : public ops::Fence {
 public:
  CudaFence(int device, cudaStream_t stream) {
    check(cudaSetDevice(device), "cudaSetDevice");
    check(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), "cudaEventCreate");
    if (const cudaError_t err = cudaEventRecord(event_, stream); err != cudaSuccess) {
      cudaEventDestroy(event_);
      check(err, "cudaEventRecord");
    }
  }
  ~CudaFence() override { cudaEventDestroy(event_); }
  CudaFence(const CudaFence&) = delete;
  CudaFence& operator=(const CudaFence&) = delete;
  void wait() override { check(cudaEventSynchronize(event_), "cudaEventSynchronize"); }

 private:
  cudaEvent_t event_ = nullptr;
};
}  // namespace

std::unique_ptr<ops::Fence> CudaDevice::fence() {
  return std::make_unique<CudaFence>(handles_->device, handles_->stream);
}

void CudaDevice::zero(const ops::TensorRef& cell) {
  make_current();
  // Cells are contiguous (flags, scalars): one asynchronous memset, no wait.
  check(cudaMemsetAsync(cell.data, 0, cell.span_bytes(), handles_->stream), "cudaMemsetAsync");
}

void CudaDevice::run(const ops::Operation& operation) {
  make_current();
  Handles& h = *handles_;
  std::visit(
      Overloaded{
          [&](const ops::MapOp& op) { ops_kernels::launch_map(op, h.verdict, h.stream); },
          [&](const ops::GemmOp& op) {
            if (op.c.empty()) return;
            // Row-major C = op(A) op(B) is column-major Cᵀ = op(B)ᵀ op(A)ᵀ: cuBLAS gets B first.
            const ops::TensorRef a = ops::stacked(op.a, op.batch, 0), b = ops::stacked(op.b, op.batch, 0),
                                 c = ops::stacked(op.c, op.batch, 0);
            const int m = as_int(c.cols, "gemm n"), n = as_int(c.rows, "gemm m");
            const int k = as_int(op.op_a == linalg::Op::none ? a.cols : a.rows, "gemm k");
            const int lda = as_int(a.stride, "lda"), ldb = as_int(b.stride, "ldb"), ldc = as_int(c.stride, "ldc");
            // Elements from one matrix of a stack to the next.
            const long long step_a = a.rows * a.stride, step_b = b.rows * b.stride, step_c = c.rows * c.stride;
            const int batch = as_int(op.batch, "gemm batch");
            if (op.c.dtype == ops::DType::f32) {
              const float alpha = static_cast<float>(op.alpha), beta = static_cast<float>(op.beta);
              check(cublasSgemmStridedBatched(h.blas, op_of(op.op_b), op_of(op.op_a), m, n, k, &alpha,
                                              static_cast<const float*>(b.data), ldb, step_b,
                                              static_cast<const float*>(a.data), lda, step_a, &beta,
                                              static_cast<float*>(c.data), ldc, step_c, batch),
                    "cublasSgemmStridedBatched");
            } else {
              check(cublasDgemmStridedBatched(h.blas, op_of(op.op_b), op_of(op.op_a), m, n, k, &op.alpha,
                                              static_cast<const double*>(b.data), ldb, step_b,
                                              static_cast<const double*>(a.data), lda, step_a, &op.beta,
                                              static_cast<double*>(c.data), ldc, step_c, batch),
                    "cublasDgemmStridedBatched");
            }
          },
          [&](const ops::SyrkOp& op) {
            if (op.c.empty()) return;
            // Row-major A (rows x k) is column-major Aᵀ: A Aᵀ = (Aᵀ)ᵀ(Aᵀ) is cuBLAS's trans = T;
            // Aᵀ A is trans = N. cuBLAS's upper triangle is the row-major lower one; mirrored after.
            const bool outer = op.op == linalg::Op::none;
            const int n = as_int(op.c.rows, "syrk n");
            const int k = as_int(outer ? op.a.cols : op.a.rows, "syrk k");
            const cublasOperation_t trans = outer ? CUBLAS_OP_T : CUBLAS_OP_N;
            const int lda = as_int(op.a.stride, "lda"), ldc = as_int(op.c.stride, "ldc");
            if (op.c.dtype == ops::DType::f32) {
              const float alpha = static_cast<float>(op.alpha), beta = static_cast<float>(op.beta);
              check(cublasSsyrk(h.blas, CUBLAS_FILL_MODE_UPPER, trans, n, k, &alpha, static_cast<const float*>(op.a.data),
                                lda, &beta, static_cast<float*>(op.c.data), ldc),
                    "cublasSsyrk");
            } else {
              check(cublasDsyrk(h.blas, CUBLAS_FILL_MODE_UPPER, trans, n, k, &op.alpha,
                                static_cast<const double*>(op.a.data), lda, &op.beta, static_cast<double*>(op.c.data), ldc),
                    "cublasDsyrk");
            }
            ops_kernels::launch_mirror_lower(op.c, h.stream);
          },
          [&](const ops::NormOp& op) { ops_kernels::launch_norm(op, h.norm_partials, h.stream); },
          [&](const ops::ScaleByRatioOp& op) { ops_kernels::launch_scale_by_ratio(op, h.stream); },
          [&](const ops::KlEstimatesOp& op) { ops_kernels::launch_kl_estimates(op, h.stream); },
          [&](const ops::PermuteOp& op) {
            // The orders travel to the device; the gather goes through a scratch copy of x.
            std::vector<long long> rows(op.row_order.begin(), op.row_order.end());
            std::vector<long long> cols(op.col_order.begin(), op.col_order.end());
            ops::Buffer row_order = matrix<double>(static_cast<ops::index>(rows.size()), 1);  // 8-byte cells
            ops::Buffer col_order = matrix<double>(static_cast<ops::index>(cols.size()), 1);
            ops::Buffer scratch = op.x.dtype == ops::DType::f32 ? matrix<float>(op.x.rows, op.x.cols)
                                                                : matrix<double>(op.x.rows, op.x.cols);
            if (!rows.empty())
              check(cudaMemcpyAsync(row_order.ref().data, rows.data(), rows.size() * sizeof(long long),
                                    cudaMemcpyHostToDevice, h.stream),
                    "cudaMemcpyAsync");
            if (!cols.empty())
              check(cudaMemcpyAsync(col_order.ref().data, cols.data(), cols.size() * sizeof(long long),
                                    cudaMemcpyHostToDevice, h.stream),
                    "cudaMemcpyAsync");
            ops_kernels::launch_permute(op, static_cast<const long long*>(row_order.ref().data),
                                        static_cast<const long long*>(col_order.ref().data), scratch.ref().data, h.stream);
            // The host orders must outlive the copies from pageable memory.
            check(cudaStreamSynchronize(h.stream), "cudaStreamSynchronize");
          },
          [&](const ops::CheckFiniteOp& op) { ops_kernels::launch_check_finite(op, h.stream); },
      },
      operation);
}

}  // namespace asteria::real::cuda

#include "core/optim/shampoo_refresh.hpp"

#include <cstring>

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <string>

#include "core/common/error.hpp"
#include "core/linalg/blas.hpp"

namespace asteria::optim {
namespace {

// syevd with eigenvectors costs about 9 n³ flops (tridiagonalization, divide and conquer,
// back-transformation); the reconstruction Q Λ^(−1/p) Qᵀ = (QD)(QD)ᵀ is one SYRK, n³.
constexpr double kEighFlopsPerCube = 9.0;
constexpr double kReconstructionFlopsPerCube = 1.0;
// The DS default root is −1/(2·order): −1/4 per side of a matrix, −1/2 for a vector's one factor.
constexpr double kMatrixRootOrder = 4.0;
constexpr double kVectorRootOrder = 2.0;

// Flops per n³ of one coupled Newton iteration for integer p: X·M′ (GEMM, 2), then M′^p·M by
// repeated squaring (SYRK, 1 each) and multiplication (GEMM, 2 each).
double newton_flops_per_cube(double p) {
  const auto k = static_cast<unsigned>(std::max(1L, std::lround(p)));
  const int squarings = std::bit_width(k) - 1;
  const int multiplications = std::popcount(k);
  return 2.0 + squarings + 2.0 * multiplications;
}

}  // namespace

ShampooRootSettings shampoo_root_settings(const Hyperparameters& hp) {
  ShampooRootSettings s;
  s.one_sided = hp.vector_block;
  s.exponent = hp.exponent_override > 0.0 ? hp.exponent_override : s.one_sided ? kVectorRootOrder : kMatrixRootOrder;
  s.epsilon = hp.eps;
  s.method = hp.root_method;
  if (s.method == RootMethod::coupled_newton && s.exponent != std::round(s.exponent))
    throw InputError("shampoo hyperparameters", "exponent_override",
                     "coupled Newton needs an integer root order; found " + std::to_string(s.exponent));
  return s;
}

void append_root_cost(std::vector<platform::Cost>& pieces, const ShampooRootSettings& settings, index n,
                      std::size_t element_bytes, int newton_iterations) {
  const double cube = static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  const double matrix_bytes = static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(element_bytes);
  if (settings.method == RootMethod::eigen) {
    pieces.push_back({platform::WorkKind::eigh, kEighFlopsPerCube * cube, 2.0 * matrix_bytes, n});
    pieces.push_back({platform::WorkKind::gemm, kReconstructionFlopsPerCube * cube, 2.0 * matrix_bytes, n});
  } else {
    const double flops = newton_iterations * newton_flops_per_cube(settings.exponent) * cube;
    pieces.push_back({platform::WorkKind::newton, flops, 4.0 * newton_iterations * matrix_bytes, n});
  }
}

std::size_t root_result_bytes(index n, std::size_t element_bytes) {
  return static_cast<std::size_t>(n) * static_cast<std::size_t>(n) * element_bytes;
}

std::size_t root_job_bytes(index n, std::size_t element_bytes) {
  // The statistics and the root, both n x n (roots are sized by run(), but a job holds them once run).
  return 2 * static_cast<std::size_t>(n) * static_cast<std::size_t>(n) * element_bytes;
}

template <Real T>
ShampooRefreshJob<T>::ShampooRefreshJob(ops::Device& device, Step stats_step, std::int64_t stats_count,
                                        linalg::ConstMatrixView<T> left, linalg::ConstMatrixView<T> right,
                                        double bias_correction, const ShampooRootSettings& settings)
    : RefreshJob<T>(stats_step),
      stats_count_(stats_count),
      bias_correction_(bias_correction),
      settings_(settings),
      left_{"L", left.rows(), {}, {}},
      right_{"R", right.rows(), {}, {}} {
  refill(device, stats_step, stats_count, left, right, bias_correction);  // roots are sized by run(), on the worker
}

template <Real T>
ShampooRefreshJob<T>::ShampooRefreshJob(Step stats_step, std::int64_t stats_count, index left_n, index right_n,
                                        const ShampooRootSettings& settings)
    : RefreshJob<T>(stats_step), stats_count_(stats_count), bias_correction_(1.0), settings_(settings),
      left_{"L", left_n, {}, {}}, right_{"R", right_n, {}, {}} {
  receive(stats_step, stats_count, left_n, right_n);
}

template <Real T>
void ShampooRefreshJob<T>::receive(Step stats_step, std::int64_t stats_count, index left_n, index right_n) {
  this->restamp(stats_step);
  stats_count_ = stats_count;
  bias_correction_ = 1.0;
  receiving_ = true;
  for (auto [factor, n] : {std::pair{&left_, left_n}, std::pair{&right_, right_n}}) {
    factor->n = n;
    factor->statistics_pin.release();
    factor->statistics = linalg::Matrix<T>();  // a receiver never reads statistics: hold none
    factor->newton = {};
    factor->newton_ran = false;
    factor->bias_corrected = false;
    factor->done = false;
  }
}

template <Real T>
void ShampooRefreshJob<T>::refill(ops::Device& device, Step stats_step, std::int64_t stats_count,
                                  linalg::ConstMatrixView<T> left, linalg::ConstMatrixView<T> right,
                                  double bias_correction) {
  this->restamp(stats_step);
  stats_count_ = stats_count;
  bias_correction_ = bias_correction;
  receiving_ = false;
  for (auto [factor, source] : {std::pair{&left_, left}, std::pair{&right_, right}}) {
    factor->n = source.rows();
    factor->statistics_pin.fill(device, source, factor->statistics);  // read by run() after the service's fence
    factor->newton = {};
    factor->newton_ran = false;
    factor->bias_corrected = false;
    factor->done = false;
  }
}

template <Real T>
Status ShampooRefreshJob<T>::compute_root(Factor& factor) const {
  if (settings_.one_sided && &factor == &left_) {  // a vector's block: its rows side is not preconditioned
    factor.root.resize(1, 1);
    factor.root(0, 0) = T(1);
    return Status::success();
  }
  linalg::Matrix<T>& a = factor.statistics;
  if (!linalg::all_finite(linalg::ConstMatrixView<T>(a)))
    return {StatusCode::non_finite_input, std::string("statistics ") + factor.name + " hold NaN or Inf"};
  if (bias_correction_ != 1.0 && !factor.bias_corrected) {  // once, should run() be repeated
    const T scale = static_cast<T>(1.0 / bias_correction_);
    for (T& x : a.values()) x *= scale;
    factor.bias_corrected = true;
  }
  factor.root.resize(a.rows(), a.cols());
  factor.newton_ran = settings_.method == RootMethod::coupled_newton;
  Status status = settings_.method == RootMethod::eigen
                      ? this->solver().inverse_root_eigen(a, settings_.exponent, settings_.epsilon, factor.root)
                      : linalg::inverse_root_newton<T>(a, static_cast<int>(std::lround(settings_.exponent)),
                                                       settings_.epsilon, settings_.newton, factor.root,
                                                       factor.newton);
  if (!status.ok()) return {status.code(), std::string("root of ") + factor.name + ": " + status.reason()};
  // The kernels promise finite output; checking here keeps the weights safe whatever they do.
  if (!linalg::all_finite(linalg::ConstMatrixView<T>(factor.root)))
    return {StatusCode::non_finite_output, std::string("root of ") + factor.name + " is not finite"};
  return Status::success();
}

template <Real T>
Status ShampooRefreshJob<T>::run() {
  for (int part = 0; part < parts(); ++part)
    if (Status s = run_part(part); !s.ok()) return s;
  return Status::success();
}

template <Real T>
auto ShampooRefreshJob<T>::factor(int part) const -> const Factor& {
  if (part != 0 && part != 1) throw std::out_of_range("ShampooRefreshJob: no part " + std::to_string(part));
  return part == 0 ? left_ : right_;
}

template <Real T>
Status ShampooRefreshJob<T>::run_part(int part) {
  if (receiving_) return {StatusCode::invalid_argument, "a receiving refresh job loads its owner's result; it never runs"};
  Factor& f = const_cast<Factor&>(factor(part));  // one of this job's own factors
  f.done = false;
  Status status = compute_root(f);
  f.done = status.ok();
  return status;
}

template <Real T>
std::vector<platform::Cost> ShampooRefreshJob<T>::part_cost(int part) const {
  const Factor& f = factor(part);
  std::vector<platform::Cost> pieces;
  append_root_cost(pieces, settings_, f.n, sizeof(T), f.newton_ran ? f.newton.iterations : kNewtonIterationsEstimate);
  return pieces;
}

template <Real T>
std::vector<platform::Cost> ShampooRefreshJob<T>::cost() const {
  std::vector<platform::Cost> pieces;
  for (const Factor* factor : {&left_, &right_}) {
    // After run() the iteration count is known (also when the iteration failed).
    const int iterations = factor->newton_ran ? factor->newton.iterations : kNewtonIterationsEstimate;
    append_root_cost(pieces, settings_, factor->n, sizeof(T), iterations);
  }
  return pieces;
}

template <Real T>
std::size_t ShampooRefreshJob<T>::bytes() const {
  // From the shapes: roots are sized by run() (or load_result()).
  if (receiving_) return result_bytes();
  return root_job_bytes(left_.n, sizeof(T)) + root_job_bytes(right_.n, sizeof(T));
}

template class ShampooRefreshJob<float>;
template <Real T>
std::size_t ShampooRefreshJob<T>::result_bytes() const {
  return root_result_bytes(left_.n, sizeof(T)) + root_result_bytes(right_.n, sizeof(T));
}

template <Real T>
void ShampooRefreshJob<T>::save_result(std::span<std::byte> image) const {
  if (image.size() != result_bytes() || !finished())
    throw std::logic_error("ShampooRefreshJob::save_result: no finished result of that size");
  std::size_t at = 0;
  for (const Factor* f : {&left_, &right_}) {
    const auto values = std::as_bytes(std::span<const T>(f->root.data(), static_cast<std::size_t>(f->root.size())));
    std::memcpy(image.data() + at, values.data(), values.size());
    at += values.size();
  }
}

template <Real T>
void ShampooRefreshJob<T>::load_result(std::span<const std::byte> image) {
  if (image.size() != result_bytes()) throw std::logic_error("ShampooRefreshJob::load_result: wrong image size");
  std::size_t at = 0;
  for (Factor* f : {&left_, &right_}) {
    const index n = f->n;
    f->root.resize(n, n);
    const std::size_t bytes = static_cast<std::size_t>(n * n) * sizeof(T);
    std::memcpy(f->root.data(), image.data() + at, bytes);
    at += bytes;
    f->done = true;
  }
}

template class ShampooRefreshJob<double>;

}  // namespace asteria::optim

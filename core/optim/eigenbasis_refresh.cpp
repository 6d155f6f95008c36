#include "core/optim/eigenbasis_refresh.hpp"

#include <cstring>

#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

#include "core/linalg/blas.hpp"

namespace asteria::optim {

void append_eigenbasis_cost(std::vector<platform::Cost>& pieces, index n, std::size_t element_bytes, bool full,
                            linalg::Orthogonalization method, bool change_of_basis) {
  const auto d = static_cast<double>(n);
  const double cube = d * d * d;
  const double matrix_bytes = d * d * static_cast<double>(element_bytes);
  if (full) {
    // syevd with eigenvectors: c·n³ with c ≈ 9 (ALGORITHMS.md, "State sizes").
    pieces.push_back({platform::WorkKind::eigh, 9.0 * cube, 2.0 * matrix_bytes, n});
    return;
  }
  if (change_of_basis)  // C = Q_newᵀ Q_snapshot
    pieces.push_back({platform::WorkKind::gemm, 2.0 * cube, 3.0 * matrix_bytes, n});
  // Power step F·B (the eigenvalue estimate diag(Bᵀ(FB)) is O(n²) on top), then QR.
  pieces.push_back({platform::WorkKind::gemm, 2.0 * cube, 3.0 * matrix_bytes, n});
  // Householder geqrf + orgqr ≈ 4n³/3; Cholesky QR: Gram matrix n³ + Cholesky n³/3 + triangular
  // solve n³, twice (the second pass restores orthogonality).
  const double qr_flops = method == linalg::Orthogonalization::householder ? 4.0 * cube / 3.0 : 2.0 * (7.0 * cube / 3.0);
  pieces.push_back({platform::WorkKind::qr, qr_flops, 2.0 * matrix_bytes, n});
}

std::size_t eigenbasis_job_bytes(index n, std::size_t element_bytes, bool change_of_basis) {
  const auto square = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  const std::size_t matrices = 3 + (change_of_basis ? 1 : 0);
  return matrices * square * element_bytes + static_cast<std::size_t>(n) * sizeof(index);
}

template <Real T>
EigenbasisRefreshJob<T>::EigenbasisRefreshJob(ops::Device& device, Step stats_step, std::int64_t from_version,
                                              linalg::ConstMatrixView<T> left_stats,
                                              linalg::ConstMatrixView<T> right_stats,
                                              linalg::ConstMatrixView<T> left_basis,
                                              linalg::ConstMatrixView<T> right_basis, linalg::EigenvalueOrder ordering,
                                              linalg::Orthogonalization method, bool compute_change_of_basis)
    : RefreshJob<T>(stats_step),
      from_version_(from_version),
      ordering_(ordering),
      method_(method),
      compute_change_of_basis_(compute_change_of_basis) {
  refill(device, stats_step, from_version, left_stats, right_stats, left_basis, right_basis);
}

template <Real T>
EigenbasisRefreshJob<T>::EigenbasisRefreshJob(Step stats_step, std::int64_t from_version, index left_n, index right_n,
                                              linalg::EigenvalueOrder ordering, linalg::Orthogonalization method,
                                              bool compute_change_of_basis)
    : RefreshJob<T>(stats_step),
      from_version_(from_version),
      ordering_(ordering),
      method_(method),
      compute_change_of_basis_(compute_change_of_basis) {
  receive(stats_step, from_version, left_n, right_n);
}

template <Real T>
void EigenbasisRefreshJob<T>::receive(Step stats_step, std::int64_t from_version, index left_n, index right_n) {
  this->restamp(stats_step);
  from_version_ = from_version;
  receiving_ = true;
  const std::array<index, 2> sizes = {left_n, right_n};
  for (std::size_t s = 0; s < 2; ++s) {
    Factor& f = factors_[s];
    f.n = sizes[s];
    f.stats_pin.release();
    f.basis_pin.release();
    f.stats = linalg::Matrix<T>();  // a receiver never reads statistics: hold none
    f.basis = linalg::Matrix<T>();
  }
}

template <Real T>
void EigenbasisRefreshJob<T>::refill(ops::Device& device, Step stats_step, std::int64_t from_version,
                                     linalg::ConstMatrixView<T> left_stats, linalg::ConstMatrixView<T> right_stats,
                                     linalg::ConstMatrixView<T> left_basis, linalg::ConstMatrixView<T> right_basis) {
  this->restamp(stats_step);
  from_version_ = from_version;
  receiving_ = false;
  const std::array<linalg::ConstMatrixView<T>, 2> stats = {left_stats, right_stats};
  const std::array<linalg::ConstMatrixView<T>, 2> bases = {left_basis, right_basis};
  for (std::size_t s = 0; s < 2; ++s) {
    Factor& f = factors_[s];
    f.n = stats[s].rows();
    // Read by run() after the service's fence.
    f.stats_pin.fill(device, stats[s], f.stats);
    if (!full()) f.basis_pin.fill(device, bases[s], f.basis);  // a full job never reads it; a stale one is harmless
  }
}

template <Real T>
Status EigenbasisRefreshJob<T>::run_one(Factor& f, const char* which) {
  if (!linalg::all_finite<T>(f.stats.view()))
    return {StatusCode::non_finite_input, std::string(which) + " statistics hold NaN or Inf"};
  const index n = f.stats.rows();
  f.new_basis.resize(n, n);
  if (compute_change_of_basis_) f.change.resize(n, n);
  if (full()) f.basis.resize(n, n);  // unread here; sized now so a warm refill of this job allocates nothing
  f.order.resize(static_cast<std::size_t>(n));
  std::iota(f.order.begin(), f.order.end(), index{0});
  Status status = full() ? this->solver().initial_eigenbasis(f.stats.view(), f.new_basis.view())
                         : linalg::refresh_eigenbasis<T>(f.stats.view(), f.basis.view(), ordering_, method_,
                                                         f.new_basis.view(), std::span<index>(f.order), std::span<T>());
  if (!status.ok()) return {status.code(), std::string(which) + " basis: " + status.reason()};
  // The kernels promise finite output; a job must never hand a non-finite basis to a block.
  if (!linalg::all_finite<T>(f.new_basis.view()))
    return {StatusCode::non_finite_output, std::string(which) + " basis holds NaN or Inf"};
  if (!compute_change_of_basis_) return Status::success();
  if (full()) {  // the snapshot basis was the identity
    for (index i = 0; i < f.change.rows(); ++i)
      for (index j = 0; j < f.change.cols(); ++j) f.change(i, j) = f.new_basis(j, i);
  } else {
    linalg::gemm<T>(T(1), f.new_basis.view(), linalg::Op::transpose, f.basis.view(), linalg::Op::none, T(0),
                    f.change.view());
  }
  return Status::success();
}

template <Real T>
Status EigenbasisRefreshJob<T>::run() {
  for (int part = 0; part < parts(); ++part)
    if (Status s = run_part(part); !s.ok()) return s;
  return Status::success();
}

template <Real T>
Status EigenbasisRefreshJob<T>::run_part(int part) {
  if (part != 0 && part != 1) throw std::out_of_range("EigenbasisRefreshJob: no part " + std::to_string(part));
  if (receiving_) return {StatusCode::invalid_argument, "a receiving refresh job loads its owner's result; it never runs"};
  return run_one(factors_[static_cast<std::size_t>(part)], part == 0 ? "left" : "right");
}

template <Real T>
std::vector<platform::Cost> EigenbasisRefreshJob<T>::part_cost(int part) const {
  if (part != 0 && part != 1) throw std::out_of_range("EigenbasisRefreshJob: no part " + std::to_string(part));
  std::vector<platform::Cost> costs;
  append_eigenbasis_cost(costs, factors_[static_cast<std::size_t>(part)].n, sizeof(T), full(), method_,
                         compute_change_of_basis_);
  return costs;
}

template <Real T>
std::vector<platform::Cost> EigenbasisRefreshJob<T>::cost() const {
  std::vector<platform::Cost> costs;
  for (const Factor& f : factors_)
    append_eigenbasis_cost(costs, f.n, sizeof(T), full(), method_, compute_change_of_basis_);
  return costs;
}

template <Real T>
std::size_t EigenbasisRefreshJob<T>::bytes() const {
  // From the shapes alone: result buffers are sized by run() (or load_result()).
  if (receiving_) return result_bytes();
  std::size_t total = 0;
  for (const Factor& f : factors_) total += eigenbasis_job_bytes(f.n, sizeof(T), compute_change_of_basis_);
  return total;
}

std::size_t eigenbasis_result_bytes(index n, std::size_t element_bytes, bool change_of_basis) {
  const auto nn = static_cast<std::size_t>(n) * static_cast<std::size_t>(n);
  return nn * element_bytes * (change_of_basis ? 2 : 1) + static_cast<std::size_t>(n) * sizeof(std::int64_t);
}

template <Real T>
std::size_t EigenbasisRefreshJob<T>::result_bytes() const {
  std::size_t total = 0;
  for (const Factor& f : factors_) total += eigenbasis_result_bytes(f.n, sizeof(T), compute_change_of_basis_);
  return total;
}

namespace {
template <class V>
void put_bytes(std::span<std::byte> image, std::size_t& at, std::span<const V> values) {
  const auto bytes = std::as_bytes(values);
  std::memcpy(image.data() + at, bytes.data(), bytes.size());
  at += bytes.size();
}
template <class V>
void get_bytes(std::span<const std::byte> image, std::size_t& at, std::span<V> values) {
  std::memcpy(values.data(), image.data() + at, values.size_bytes());
  at += values.size_bytes();
}
}  // namespace

template <Real T>
void EigenbasisRefreshJob<T>::save_result(std::span<std::byte> image) const {
  if (image.size() != result_bytes()) throw std::logic_error("EigenbasisRefreshJob::save_result: wrong image size");
  std::size_t at = 0;
  for (const Factor& f : factors_) {
    put_bytes<T>(image, at, std::span<const T>(f.new_basis.data(), static_cast<std::size_t>(f.new_basis.size())));
    std::vector<std::int64_t> order(f.order.begin(), f.order.end());
    put_bytes<std::int64_t>(image, at, order);
    if (compute_change_of_basis_) put_bytes<T>(image, at, std::span<const T>(f.change.data(), static_cast<std::size_t>(f.change.size())));
  }
}

template <Real T>
void EigenbasisRefreshJob<T>::load_result(std::span<const std::byte> image) {
  if (image.size() != result_bytes()) throw std::logic_error("EigenbasisRefreshJob::load_result: wrong image size");
  std::size_t at = 0;
  for (Factor& f : factors_) {
    const index n = f.n;
    f.new_basis.resize(n, n);
    get_bytes<T>(image, at, std::span<T>(f.new_basis.data(), static_cast<std::size_t>(f.new_basis.size())));
    std::vector<std::int64_t> order(static_cast<std::size_t>(n));
    get_bytes<std::int64_t>(image, at, order);
    f.order.assign(order.begin(), order.end());
    if (compute_change_of_basis_) {
      f.change.resize(n, n);
      get_bytes<T>(image, at, std::span<T>(f.change.data(), static_cast<std::size_t>(f.change.size())));
    }
  }
}

template <Real T>
std::unique_ptr<RefreshJob<T>> take_eigenbasis_snapshot(ops::Device& device, const EigenbasisSnapshot<T>& s,
                                                        std::unique_ptr<RefreshJob<T>> spare) {
  if (auto* job = dynamic_cast<EigenbasisRefreshJob<T>*>(spare.get())) {
    job->refill(device, s.stats_step, s.from_version, s.left_stats, s.right_stats, s.left_basis, s.right_basis);
    return spare;
  }
  return std::make_unique<EigenbasisRefreshJob<T>>(device, s.stats_step, s.from_version, s.left_stats, s.right_stats,
                                                   s.left_basis, s.right_basis, s.ordering, s.method,
                                                   s.compute_change_of_basis);
}

template <Real T>
std::unique_ptr<RefreshJob<T>> take_eigenbasis_receiver(const EigenbasisSnapshot<T>& s,
                                                        std::unique_ptr<RefreshJob<T>> spare) {
  if (auto* job = dynamic_cast<EigenbasisRefreshJob<T>*>(spare.get())) {
    job->receive(s.stats_step, s.from_version, s.left_stats.rows(), s.right_stats.rows());
    return spare;
  }
  return std::make_unique<EigenbasisRefreshJob<T>>(s.stats_step, s.from_version, s.left_stats.rows(),
                                                   s.right_stats.rows(), s.ordering, s.method,
                                                   s.compute_change_of_basis);
}

template class EigenbasisRefreshJob<float>;
template class EigenbasisRefreshJob<double>;
template std::unique_ptr<RefreshJob<float>> take_eigenbasis_snapshot<float>(ops::Device&,
                                                                            const EigenbasisSnapshot<float>&,
                                                                            std::unique_ptr<RefreshJob<float>>);
template std::unique_ptr<RefreshJob<double>> take_eigenbasis_snapshot<double>(ops::Device&,
                                                                              const EigenbasisSnapshot<double>&,
                                                                              std::unique_ptr<RefreshJob<double>>);
template std::unique_ptr<RefreshJob<float>> take_eigenbasis_receiver<float>(const EigenbasisSnapshot<float>&,
                                                                            std::unique_ptr<RefreshJob<float>>);
template std::unique_ptr<RefreshJob<double>> take_eigenbasis_receiver<double>(const EigenbasisSnapshot<double>&,
                                                                              std::unique_ptr<RefreshJob<double>>);

}  // namespace asteria::optim

#include "core/runtime/service/serviced_tensor.hpp"

#include <stdexcept>

#include "core/common/error.hpp"

namespace asteria::runtime {

template <linalg::Real T>
ServicedTensor<T>::ServicedTensor(PreconditionerService<T>& service, optim::TensorOptimizer<T>& tensor,
                                  std::string source)
    : service_(service), tensor_(tensor), source_(std::move(source)) {
  for (std::size_t b = 0; b < tensor_.blocks().size(); ++b)
    ids_.push_back(service_.register_block(*tensor_.blocks()[b].optimizer, tensor_.describe(b)));
  proceed_.assign(ids_.size(), 0);
}

template <linalg::Real T>
void ServicedTensor<T>::check_size(std::size_t size, const char* field) const {
  const optim::MatrixShape shape = tensor_.matrix_shape();
  const auto expected = static_cast<std::size_t>(shape.rows * shape.cols);
  if (size != expected)
    throw InputError(source_, field,
                     "expected " + std::to_string(expected) + " values, found " + std::to_string(size));
}

template <linalg::Real T>
void ServicedTensor<T>::after_backward(std::span<const T> grads, Step t) {
  check_size(grads.size(), "grads");
  const optim::MatrixShape shape = tensor_.matrix_shape();
  const linalg::ConstMatrixView<T> all(grads.data(), shape.rows, shape.cols);
  proceed_step_ = t;
  for (std::size_t b = 0; b < ids_.size(); ++b) {
    const optim::BlockRegion& r = tensor_.blocks()[b].region;
    proceed_[b] = 0;  // stays 0 if the hook throws
    proceed_[b] = service_.after_backward(ids_[b], all.block(r.row0, r.col0, r.rows, r.cols), t) ? 1 : 0;
  }
}

template <linalg::Real T>
void ServicedTensor<T>::update(std::span<T> params, std::span<const T> grads, Step t) {
  check_size(params.size(), "params");
  check_size(grads.size(), "grads");
  if (proceed_step_ != t)
    throw std::logic_error("serviced tensor " + source_ + ": update of step " + std::to_string(t) +
                           " without after_backward");
  const optim::MatrixShape shape = tensor_.matrix_shape();
  const linalg::MatrixView<T> w_all(params.data(), shape.rows, shape.cols);
  const linalg::ConstMatrixView<T> g_all(grads.data(), shape.rows, shape.cols);
  for (std::size_t b = 0; b < ids_.size(); ++b) {
    if (!proceed_[b]) continue;
    const optim::BlockRegion& r = tensor_.blocks()[b].region;
    service_.apply(ids_[b], w_all.block(r.row0, r.col0, r.rows, r.cols), g_all.block(r.row0, r.col0, r.rows, r.cols),
                   t);
  }
}

template class ServicedTensor<float>;
template class ServicedTensor<double>;

}  // namespace asteria::runtime

#include "core/runtime/driver/operand_staging.hpp"

#include <stdexcept>

namespace asteria::runtime {

template <linalg::Real T>
OperandStaging<T>::OperandStaging(ops::Device& model_side, ops::Device& state_side,
                                  linalg::ConstMatrixView<T> gradient, linalg::MatrixView<T> weights)
    : model_side_(model_side), state_side_(state_side), model_weights_(weights) {
  if (&model_side == &state_side) throw std::logic_error("OperandStaging: the model and the state share a device");
  gradient_ = on_state_side(on_host(gradient, host_gradient_), gradient_buffer_);
  if (!weights.empty()) {
    weights_on_host_ = on_host(weights, host_weights_);
    weights_ = on_state_side(weights_on_host_, weights_buffer_);
  }
}

template <linalg::Real T>
linalg::MatrixView<T> OperandStaging<T>::on_host(linalg::ConstMatrixView<T> view, std::vector<T>& keep) {
  if (view.empty()) return {};
  if (model_side_.host_addressable()) return {const_cast<T*>(view.data()), view.rows(), view.cols(), view.stride()};
  keep.resize(static_cast<std::size_t>(view.rows() * view.cols()));
  linalg::MatrixView<T> host(keep.data(), view.rows(), view.cols());
  model_side_.download(view, host);
  return host;
}

template <linalg::Real T>
linalg::MatrixView<T> OperandStaging<T>::on_state_side(linalg::MatrixView<T> host, ops::Buffer& keep) {
  if (host.empty() || state_side_.host_addressable()) return host;
  keep = state_side_.template matrix<T>(host.rows(), host.cols());
  const linalg::MatrixView<T> staged = keep.template view<T>();
  state_side_.upload(linalg::ConstMatrixView<T>(host), staged);
  return staged;
}

template <linalg::Real T>
void OperandStaging<T>::write_back() {
  if (weights_.empty()) return;
  if (!state_side_.host_addressable()) state_side_.download(linalg::ConstMatrixView<T>(weights_), weights_on_host_);
  if (!model_side_.host_addressable()) model_side_.upload(linalg::ConstMatrixView<T>(weights_on_host_), model_weights_);
}

template class OperandStaging<float>;
template class OperandStaging<double>;

}  // namespace asteria::runtime

#include "core/runtime/driver/training_model.hpp"

#include <stdexcept>
#include <string>

#include "core/common/error.hpp"

namespace asteria::runtime {

std::vector<index> tensor_shape(const LayerSpec& layer) {
  return layer.vector ? std::vector<index>{layer.cols} : std::vector<index>{layer.rows, layer.cols};
}

std::string_view to_string(ModelPass pass) noexcept {
  switch (pass) {
    case ModelPass::layer_by_layer: return "layer_by_layer";
    case ModelPass::whole_step: return "whole_step";
    case ModelPass::per_micro_batch: return "per_micro_batch";
  }
  return "layer_by_layer";
}

ModelPass parse_model_pass(std::string_view text, const std::string& source, const std::string& field) {
  for (ModelPass pass : {ModelPass::layer_by_layer, ModelPass::whole_step, ModelPass::per_micro_batch})
    if (text == to_string(pass)) return pass;
  throw InputError(source, field,
                   "layer_by_layer, whole_step or per_micro_batch, found '" + std::string(text) + "'");
}

template <linalg::Real T>
void TrainingModel<T>::forward_pass(std::size_t l, int m, Step t) {
  throw std::logic_error("training model: forward_pass(" + std::to_string(l) + ", " + std::to_string(m) + ", " +
                         std::to_string(t) + ") on a model whose pass is " + std::string(to_string(pass())));
}

template <linalg::Real T>
void TrainingModel<T>::backward_pass(std::size_t l, int m, Step t) {
  throw std::logic_error("training model: backward_pass(" + std::to_string(l) + ", " + std::to_string(m) + ", " +
                         std::to_string(t) + ") on a model whose pass is " + std::string(to_string(pass())));
}

template <linalg::Real T>
std::span<T> TrainingModel<T>::gradient_bucket(std::size_t first, std::size_t last) {
  if (first != last) return {};
  const linalg::MatrixView<T> g = mutable_gradient_matrix(first);
  if (!g.contiguous()) return {};
  return {g.data(), static_cast<std::size_t>(g.rows() * g.cols())};
}

template class TrainingModel<float>;
template class TrainingModel<double>;

}  // namespace asteria::runtime

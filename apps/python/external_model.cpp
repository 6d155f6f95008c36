#include "apps/python/external_model.hpp"

#include <stdexcept>

#include "core/common/error.hpp"

namespace asteria::python {

ExternalModel::ExternalModel(const std::vector<ParameterShape>& parameters) {
  for (std::size_t i = 0; i < parameters.size(); ++i) {
    const ParameterShape& p = parameters[i];
    const std::string field = "parameter " + std::to_string(i) + (p.name.empty() ? "" : " (" + p.name + ")");
    std::int64_t count = 1;
    for (const std::int64_t extent : p.shape) {
      if (extent < 0) throw InputError("asteria.torch", field, "a shape of extents >= 0");
      count *= extent;
    }
    if (count == 0) throw InputError("asteria.torch", field, "a tensor with elements, found an empty one");
    runtime::LayerSpec layer;
    layer.name = p.name.empty() ? "param" + std::to_string(i) : p.name;
    layer.vector = p.shape.size() <= 1;
    layer.rows = layer.vector ? 1 : static_cast<linalg::index>(p.shape.front());
    layer.cols = static_cast<linalg::index>(count) / layer.rows;
    layers_.push_back(std::move(layer));
  }
  weights_.assign(layers_.size(), nullptr);
  gradients_.assign(layers_.size(), nullptr);
}

std::size_t ExternalModel::element_count(std::size_t l) const {
  const runtime::LayerSpec& s = layers_.at(l);
  return static_cast<std::size_t>(s.rows) * static_cast<std::size_t>(s.cols);
}

void ExternalModel::bind(std::span<float* const> weights, std::span<float* const> gradients) {
  if (weights.size() != layers_.size() || gradients.size() != layers_.size())
    throw std::invalid_argument("ExternalModel::bind: one weight and one gradient per parameter");
  weights_.assign(weights.begin(), weights.end());
  gradients_.assign(gradients.begin(), gradients.end());
}

linalg::MatrixView<float> ExternalModel::weight_matrix(std::size_t l) {
  const runtime::LayerSpec& s = layers_.at(l);
  if (weights_[l] == nullptr) throw std::logic_error("ExternalModel: no memory bound for " + s.name);
  return {weights_[l], s.rows, s.cols};
}

linalg::ConstMatrixView<float> ExternalModel::gradient_matrix(std::size_t l) const {
  const runtime::LayerSpec& s = layers_.at(l);
  if (gradients_[l] == nullptr) throw std::logic_error("ExternalModel: no gradient bound for " + s.name);
  return {gradients_[l], s.rows, s.cols};
}

linalg::MatrixView<float> ExternalModel::mutable_gradient_matrix(std::size_t l) {
  const runtime::LayerSpec& s = layers_.at(l);
  if (gradients_[l] == nullptr) throw std::logic_error("ExternalModel: no gradient bound for " + s.name);
  return {gradients_[l], s.rows, s.cols};
}

}  // namespace asteria::python

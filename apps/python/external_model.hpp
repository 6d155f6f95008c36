#pragma once
// A model whose parameters and gradients live in memory the caller owns (a PyTorch model's CPU
// tensors): the step driver's TrainingModel over borrowed pointers. The caller computes the
// gradients (its own backward) before each step, so the driver's backward bodies do nothing; the
// layers are the parameters in the caller's order, each viewed as the optimizer views a tensor
// (optim::tensor_view: the first dimension by the product of the others; order <= 1 a vector).
// Zero-copy: bind() hands the current addresses for the next step.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/runtime/driver/training_model.hpp"

namespace asteria::python {

struct ParameterShape {
  std::string name;
  std::vector<std::int64_t> shape;  // any order; 0-d is a scalar
};

class ExternalModel final : public runtime::TrainingModel<float> {
 public:
  // Throws InputError naming the parameter for an empty tensor or a negative extent.
  explicit ExternalModel(const std::vector<ParameterShape>& parameters);

  // The parameters' and gradients' memory for the next step, one pointer each, in parameter
  // order, each holding element_count(l) floats, row-major and contiguous.
  void bind(std::span<float* const> weights, std::span<float* const> gradients);
  std::size_t element_count(std::size_t l) const;

  std::size_t layer_count() const override { return layers_.size(); }
  const runtime::LayerSpec& layer(std::size_t l) const override { return layers_.at(l); }
  linalg::MatrixView<float> weight_matrix(std::size_t l) override;
  linalg::ConstMatrixView<float> gradient_matrix(std::size_t l) const override;
  linalg::MatrixView<float> mutable_gradient_matrix(std::size_t l) override;
  void compute_gradient(std::size_t, optim::Step) override {}  // the caller's backward did it
  runtime::ModelPass pass() const noexcept override { return runtime::ModelPass::whole_step; }

 private:
  std::vector<runtime::LayerSpec> layers_;
  std::vector<float*> weights_;
  std::vector<float*> gradients_;
};

}  // namespace asteria::python

#pragma once
// A model whose weights and gradients live in an emulated accelerator's memory (as a CUDA
// model's do in GPU memory): a SyntheticModel computes the gradients on the host and they are
// copied into memory the host may only reach through the accelerator (disguised addresses).
#include <algorithm>
#include <vector>

#include "tests/common/emulated_accelerator.hpp"
#include "tests/driver/driver_test_support.hpp"

namespace asteria::runtime::test {

template <linalg::Real T>
class DeviceResidentModel final : public TrainingModel<T> {
 public:
  explicit DeviceResidentModel(const SyntheticModelSpec& spec) : inner_(spec) {
    for (std::size_t l = 0; l < inner_.layer_count(); ++l) {
      weights_.emplace_back(inner_.weights(l).begin(), inner_.weights(l).end());
      gradients_.emplace_back(inner_.gradient(l).size());
    }
  }
  std::size_t layer_count() const override { return inner_.layer_count(); }
  const LayerSpec& layer(std::size_t l) const override { return inner_.layer(l); }
  linalg::MatrixView<T> weight_matrix(std::size_t l) override { return on_device(weights_.at(l), l); }
  linalg::ConstMatrixView<T> gradient_matrix(std::size_t l) const override {
    return const_cast<DeviceResidentModel*>(this)->on_device(const_cast<std::vector<T>&>(gradients_.at(l)), l);
  }
  linalg::MatrixView<T> mutable_gradient_matrix(std::size_t l) override { return on_device(gradients_.at(l), l); }
  void compute_gradient(std::size_t l, Step t) override {
    std::copy(weights_[l].begin(), weights_[l].end(), inner_.weights(l).begin());
    inner_.compute_gradient(l, t);
    std::copy(inner_.gradient(l).begin(), inner_.gradient(l).end(), gradients_[l].begin());
  }
  platform::Tier tensor_tier() const noexcept override { return platform::Tier::device; }
  // The weights as the host sees them (what a download would give).
  Weights<T> host_weights() const { return weights_; }

 private:
  linalg::MatrixView<T> on_device(std::vector<T>& values, std::size_t l) {
    const LayerSpec& s = inner_.layer(l);
    return {asteria::test::disguise(values.data()), s.rows, s.cols};
  }
  SyntheticModel<T> inner_;
  Weights<T> weights_;
  Weights<T> gradients_;
};

}  // namespace asteria::runtime::test

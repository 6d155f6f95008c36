#pragma once
// A synthetic network that drives the runtime without a training framework: a stack of layers,
// each one weight matrix with a modelled forward and backward cost on the device, and gradients
// from a seeded generator.
//
// Gradients have a fixed low-rank-plus-noise structure, G_t = U A_t Vᵀ + σ E_t per layer:
// U (rows x r) and V (cols x r) are fixed per layer, A_t (r x r) and the noise E_t change every
// step. Second-order statistics then look like a trained network's (a few strong directions over
// a noise floor) rather than white noise, which matters because refresh costs (eigh
// convergence, power-iteration QR) depend on the spectrum. Everything is a pure function of
// (seed, layer, step): two models with the same spec produce the same bits.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/linalg/matrix.hpp"
#include "core/optim/block_optimizer.hpp"
#include "core/platform/cost.hpp"
#include "core/platform/execution.hpp"
#include "core/runtime/driver/training_model.hpp"

namespace asteria::runtime {

struct GradientSpec {
  std::uint64_t seed = 1;
  int rank = 8;        // r of the low-rank part (clamped to min(rows, cols))
  double noise = 0.1;  // σ: standard deviation of the noise relative to the low-rank part's
  // Data-parallel rank: each rank draws its own per-step samples (the mixing and the noise, as
  // each sees its own data); the low-rank factors and the initial weights are the replicas'.
  int data_rank = 0;
};

struct SyntheticModelSpec {
  std::vector<LayerSpec> layers;
  GradientSpec gradients;
};

// A layer's forward and backward costs for a matrix multiply of `forward_flops` (backward: twice
// the flops, as dX and dW are two products of the forward's size). Bytes are the weights read.
LayerSpec make_layer(std::string name, index rows, index cols, double forward_flops, std::size_t bytes_per_value);

// Throws InputError naming `source` for an empty stack, a non-positive dimension, negative
// costs, a rank < 1 or a negative noise level.
void validate(const SyntheticModelSpec& spec, const std::string& source);

// One layer's gradient stream.
template <linalg::Real T>
class GradientGenerator {
 public:
  GradientGenerator(const GradientSpec& spec, std::size_t layer, index rows, index cols);
  // Writes G_t of this layer (t >= 1) into `out` (rows x cols).
  void fill(Step t, linalg::MatrixView<T> out) const;

 private:
  std::uint64_t seed_;
  std::uint64_t sample_seed_;  // seed_ for rank 0, the rank's own otherwise
  std::size_t layer_;
  double noise_scale_;
  linalg::Matrix<T> left_;   // U: rows x r
  linalg::Matrix<T> right_;  // V: cols x r, columns scaled by a decaying spectrum
};

// With values (or refresh) numerics weights and gradients exist (seeded); with shapes only the
// layer specs do (a data-free simulation of a model too large to hold): weights() and
// gradient() are then empty and compute_gradient() does nothing.

template <linalg::Real T>
class SyntheticModel final : public TrainingModel<T> {
 public:
  // Validates; weights start seeded.
  explicit SyntheticModel(SyntheticModelSpec spec, platform::Numerics numerics = platform::Numerics::values);
  bool holds_values() const noexcept { return values_; }

  std::size_t layer_count() const noexcept override { return spec_.layers.size(); }
  const LayerSpec& layer(std::size_t l) const override { return spec_.layers.at(l); }
  const SyntheticModelSpec& spec() const noexcept { return spec_; }

  // The layer's weights and gradient buffer, row-major rows x cols.
  std::span<T> weights(std::size_t l) { return weights_.at(l); }
  std::span<const T> weights(std::size_t l) const { return weights_.at(l); }
  std::span<T> gradient(std::size_t l) { return gradient_bucket(l, l); }
  std::span<const T> gradient(std::size_t l) const {
    return {gradients_.data() + gradient_offsets_.at(l), gradient_offsets_.at(l + 1) - gradient_offsets_.at(l)};
  }
  linalg::MatrixView<T> weight_matrix(std::size_t l) override;
  linalg::ConstMatrixView<T> gradient_matrix(std::size_t l) const override;
  linalg::MatrixView<T> mutable_gradient_matrix(std::size_t l) override;
  // Every gradient is kept in one array, layer after layer (empty with shapes only).
  std::span<T> gradient_bucket(std::size_t first, std::size_t last) override {
    return {gradients_.data() + gradient_offsets_.at(first), gradients_.data() + gradient_offsets_.at(last + 1)};
  }

  // The backward numerics of layer l at step t: fills gradient(l) with G_t.
  void compute_gradient(std::size_t l, Step t) override;

  std::size_t parameter_count() const noexcept;

 private:
  SyntheticModelSpec spec_;
  bool values_;
  std::vector<std::vector<T>> weights_;
  std::vector<T> gradients_;                   // every layer's, in layer order
  std::vector<std::size_t> gradient_offsets_;  // of layer l in gradients_; the total last
  std::vector<GradientGenerator<T>> generators_;
};

}  // namespace asteria::runtime

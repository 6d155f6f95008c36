#include "core/runtime/driver/synthetic_model.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/common/error.hpp"
#include "core/linalg/blas.hpp"

namespace asteria::runtime {

namespace {

// Counter-based randomness: every value is a hash of its coordinates, so any element of any
// step can be produced independently and in any order.
std::uint64_t mix(std::uint64_t z) noexcept {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::uint64_t key(std::uint64_t seed, std::uint64_t stream, std::uint64_t a, std::uint64_t b = 0) noexcept {
  return mix(mix(mix(seed ^ mix(stream)) ^ a) ^ b);
}

double uniform01(std::uint64_t h) noexcept { return static_cast<double>(h >> 11) * 0x1.0p-53; }

double standard_normal(std::uint64_t h) noexcept {  // Box-Muller
  const double u1 = 1.0 - uniform01(mix(h));        // (0, 1]
  const double u2 = uniform01(mix(h ^ 0xD1B54A32D192ED03ull));
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

// Independent streams of one seed.
enum Stream : std::uint64_t { left_factor = 1, right_factor = 2, mixing = 3, noise = 4, initial_weights = 5 };

std::string layer_source(const std::string& source, std::size_t l) { return source + ": layer " + std::to_string(l); }

}  // namespace

LayerSpec make_layer(std::string name, index rows, index cols, double forward_flops, std::size_t bytes_per_value) {
  LayerSpec layer;
  layer.name = std::move(name);
  layer.rows = rows;
  layer.cols = cols;
  const double weight_bytes = static_cast<double>(rows) * static_cast<double>(cols) * static_cast<double>(bytes_per_value);
  layer.forward = platform::Cost{platform::WorkKind::gemm, forward_flops, weight_bytes, std::max(rows, cols)};
  layer.backward = platform::Cost{platform::WorkKind::gemm, 2.0 * forward_flops, 2.0 * weight_bytes, std::max(rows, cols)};
  return layer;
}

void validate(const SyntheticModelSpec& spec, const std::string& source) {
  if (spec.layers.empty()) throw InputError(source, "layers", "expected at least one layer");
  for (std::size_t l = 0; l < spec.layers.size(); ++l) {
    const LayerSpec& layer = spec.layers[l];
    if (layer.rows < 1 || layer.cols < 1)
      throw InputError(layer_source(source, l), "shape",
                       "expected rows and cols >= 1, found " + std::to_string(layer.rows) + "x" +
                           std::to_string(layer.cols));
    for (const platform::Costs* costs : {&layer.forward, &layer.backward})
      for (const platform::Cost& cost : costs->pieces())
        if (!(cost.flops >= 0.0) || !(cost.bytes >= 0.0) || !std::isfinite(cost.flops) || !std::isfinite(cost.bytes))
          throw InputError(layer_source(source, l), "cost", "expected finite flops and bytes >= 0");
  }
  if (spec.gradients.rank < 1) throw InputError(source, "gradient rank", "expected an integer >= 1");
  if (spec.gradients.data_rank < 0) throw InputError(source, "data_rank", "expected an integer >= 0");
  if (!(spec.gradients.noise >= 0.0) || !std::isfinite(spec.gradients.noise))
    throw InputError(source, "gradient noise", "expected a finite value >= 0");
}

template <linalg::Real T>
GradientGenerator<T>::GradientGenerator(const GradientSpec& spec, std::size_t layer, index rows, index cols)
    : seed_(spec.seed),
      sample_seed_(spec.data_rank == 0 ? spec.seed : mix(spec.seed ^ mix(static_cast<std::uint64_t>(spec.data_rank)))),
      layer_(layer), noise_scale_(spec.noise * std::numbers::sqrt3) {
  const index r = std::max<index>(1, std::min({static_cast<index>(spec.rank), rows, cols}));
  left_ = linalg::Matrix<T>(rows, r);
  right_ = linalg::Matrix<T>(cols, r);
  // Spectrum 1, 1/2, 1/3, ... and a normalization that gives the low-rank part unit variance
  // per element (Var = r · Σ d_k² for U, A, V with unit-variance entries).
  double spectrum = 0.0;
  for (index k = 0; k < r; ++k) spectrum += 1.0 / static_cast<double>((k + 1) * (k + 1));
  const double normalization = 1.0 / std::sqrt(static_cast<double>(r) * spectrum);
  for (index i = 0; i < rows; ++i)
    for (index k = 0; k < r; ++k)
      left_.view()(i, k) = static_cast<T>(standard_normal(key(seed_, left_factor, layer_, static_cast<std::uint64_t>(i * r + k))));
  for (index j = 0; j < cols; ++j)
    for (index k = 0; k < r; ++k)
      right_.view()(j, k) = static_cast<T>(
          standard_normal(key(seed_, right_factor, layer_, static_cast<std::uint64_t>(j * r + k))) * normalization /
          static_cast<double>(k + 1));
}

template <linalg::Real T>
void GradientGenerator<T>::fill(Step t, linalg::MatrixView<T> out) const {
  const index rows = left_.rows();
  const index cols = right_.rows();
  const index r = left_.cols();
  linalg::Matrix<T> mixing_t(r, r);
  const auto step = static_cast<std::uint64_t>(t);
  for (index k = 0; k < r; ++k)
    for (index l = 0; l < r; ++l)
      mixing_t.view()(k, l) =
          static_cast<T>(standard_normal(key(sample_seed_, mixing, layer_, step * 1'000'003ull + static_cast<std::uint64_t>(k * r + l))));
  linalg::Matrix<T> left_mixed(rows, r);
  linalg::gemm<T>(T(1), left_.view(), linalg::Op::none, mixing_t.view(), linalg::Op::none, T(0), left_mixed.view());
  linalg::gemm<T>(T(1), left_mixed.view(), linalg::Op::none, right_.view(), linalg::Op::transpose, T(0), out);
  if (noise_scale_ == 0.0) return;
  const std::uint64_t base = key(sample_seed_, noise, layer_, step);
  for (index i = 0; i < rows; ++i) {
    T* row = out.row(i).data();
    const std::uint64_t row_base = mix(base ^ static_cast<std::uint64_t>(i));
    for (index j = 0; j < cols; ++j) {
      const double u = uniform01(mix(row_base ^ (static_cast<std::uint64_t>(j) << 20)));
      row[j] += static_cast<T>((2.0 * u - 1.0) * noise_scale_);  // uniform with variance σ²
    }
  }
}

template <linalg::Real T>
SyntheticModel<T>::SyntheticModel(SyntheticModelSpec spec, platform::Numerics numerics)
    : spec_(std::move(spec)), values_(numerics != platform::Numerics::shapes) {
  validate(spec_, "synthetic model");
  gradient_offsets_.assign(spec_.layers.size() + 1, 0);
  if (!values_) {
    weights_.resize(spec_.layers.size());
    return;
  }
  for (std::size_t l = 0; l < spec_.layers.size(); ++l)
    gradient_offsets_[l + 1] =
        gradient_offsets_[l] + static_cast<std::size_t>(spec_.layers[l].rows * spec_.layers[l].cols);
  gradients_.assign(gradient_offsets_.back(), T(0));
  for (std::size_t l = 0; l < spec_.layers.size(); ++l) {
    const LayerSpec& layer = spec_.layers[l];
    const auto count = static_cast<std::size_t>(layer.rows * layer.cols);
    std::vector<T> w(count);
    const double scale = 1.0 / std::sqrt(static_cast<double>(layer.cols));
    for (std::size_t i = 0; i < count; ++i)
      w[i] = static_cast<T>(scale * standard_normal(key(spec_.gradients.seed, initial_weights, l, i)));
    weights_.push_back(std::move(w));
    generators_.emplace_back(spec_.gradients, l, layer.rows, layer.cols);
  }
}

template <linalg::Real T>
linalg::MatrixView<T> SyntheticModel<T>::weight_matrix(std::size_t l) {
  const LayerSpec& s = layer(l);
  return {weights_.at(l).data(), s.rows, s.cols};
}

template <linalg::Real T>
linalg::ConstMatrixView<T> SyntheticModel<T>::gradient_matrix(std::size_t l) const {
  const LayerSpec& s = layer(l);
  return {gradients_.data() + gradient_offsets_.at(l), s.rows, s.cols};
}

template <linalg::Real T>
linalg::MatrixView<T> SyntheticModel<T>::mutable_gradient_matrix(std::size_t l) {
  const LayerSpec& s = layer(l);
  return {gradients_.data() + gradient_offsets_.at(l), s.rows, s.cols};
}

template <linalg::Real T>
void SyntheticModel<T>::compute_gradient(std::size_t l, Step t) {
  if (!values_) return;
  const LayerSpec& s = layer(l);
  generators_.at(l).fill(t, linalg::MatrixView<T>(gradients_.data() + gradient_offsets_[l], s.rows, s.cols));
}

template <linalg::Real T>
std::size_t SyntheticModel<T>::parameter_count() const noexcept {
  std::size_t n = 0;
  for (const LayerSpec& layer : spec_.layers) n += static_cast<std::size_t>(layer.rows * layer.cols);
  return n;
}

template class GradientGenerator<float>;
template class GradientGenerator<double>;
template class SyntheticModel<float>;
template class SyntheticModel<double>;

}  // namespace asteria::runtime

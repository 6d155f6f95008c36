#include "apps/python/external_model.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "core/common/error.hpp"

namespace asteria::python {

namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The device work of one pass over `tokens` tokens through a parameter of rows x cols (fp32
// values, as a CPU loop computes them): what a replay charges, and what calibration fits.
void declare_costs(runtime::LayerSpec& layer, ParameterUse use, double tokens) {
  using platform::Cost;
  using platform::WorkKind;
  if (tokens <= 0.0) return;
  const double rows = static_cast<double>(layer.rows), cols = static_cast<double>(layer.cols);
  const double n = rows * cols;
  const std::int64_t d = layer.cols;
  switch (use) {
    case ParameterUse::matmul:  // y = x Wᵀ: the input's and output's activations and the weights
      layer.forward = Cost{WorkKind::gemm, 2.0 * tokens * n, 4.0 * (n + tokens * (rows + cols)), d};
      layer.backward = Cost{WorkKind::gemm, 4.0 * tokens * n, 8.0 * (n + tokens * (rows + cols)), d};
      break;
    case ParameterUse::lookup:  // a row read per token; the backward adds the rows' gradients
      layer.forward = Cost{WorkKind::elementwise, 0.0, 8.0 * tokens * cols, d};
      layer.backward = Cost{WorkKind::elementwise, tokens * cols, 12.0 * tokens * cols, d};
      break;
    case ParameterUse::elementwise:  // scale or shift of each token's n values (a norm's few flops)
      layer.forward = Cost{WorkKind::elementwise, 4.0 * tokens * n, 8.0 * tokens * n, d};
      layer.backward = Cost{WorkKind::elementwise, 8.0 * tokens * n, 16.0 * tokens * n, d};
      break;
  }
}

}  // namespace

ParameterUse parse_parameter_use(const std::string& text, const std::string& field) {
  if (text == "matmul") return ParameterUse::matmul;
  if (text == "lookup") return ParameterUse::lookup;
  if (text == "elementwise") return ParameterUse::elementwise;
  throw InputError("asteria.torch", field, "matmul, lookup or elementwise, found '" + text + "'");
}

ExternalModel::ExternalModel(const std::vector<ParameterShape>& parameters, double tokens_per_step, bool hooked,
                             int micro_batches)
    : hooked_(hooked), micro_batches_(micro_batches) {
  if (micro_batches < 1) throw InputError("asteria.torch", "micro_batches", "at least 1");
  if (!(tokens_per_step >= 0.0)) throw InputError("asteria.torch", "tokens_per_step", "a count >= 0");
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
    declare_costs(layer, p.use, tokens_per_step);
    layers_.push_back(std::move(layer));
  }
  weights_.assign(layers_.size(), nullptr);
  gradients_.assign(layers_.size(), nullptr);
  forwards_done_.assign(layers_.size(), 0);
  backwards_done_.assign(layers_.size(), 0);
  if (hooked_) {
    staged_.resize(layers_.size());
    for (std::size_t l = 0; l < layers_.size(); ++l) staged_[l].resize(element_count(l));
  }
}

std::size_t ExternalModel::element_count(std::size_t l) const {
  const runtime::LayerSpec& s = layers_.at(l);
  return static_cast<std::size_t>(s.rows) * static_cast<std::size_t>(s.cols);
}

void ExternalModel::bind(std::span<float* const> weights, std::span<float* const> gradients) {
  if (weights.size() != layers_.size() || gradients.size() != layers_.size())
    throw std::invalid_argument("ExternalModel::bind: one weight and one gradient per parameter");
  std::lock_guard lock(mutex_);
  weights_.assign(weights.begin(), weights.end());
  gradients_.assign(gradients.begin(), gradients.end());
}

void ExternalModel::begin_step(std::span<float* const> weights) {
  if (weights.size() != layers_.size()) throw std::invalid_argument("ExternalModel::begin_step: one weight per parameter");
  std::lock_guard lock(mutex_);
  weights_.assign(weights.begin(), weights.end());
  std::fill(gradients_.begin(), gradients_.end(), nullptr);
  std::fill(forwards_done_.begin(), forwards_done_.end(), 0);
  std::fill(backwards_done_.begin(), backwards_done_.end(), 0);
  aborted_.clear();
  step_began_ = last_pass_end_ = now_seconds();
}

void ExternalModel::forward_done(std::size_t l, int micro_batch) {
  {
    std::lock_guard lock(mutex_);
    forwards_done_.at(l) = std::max(forwards_done_.at(l), micro_batch + 1);
  }
  changed_.notify_all();
}

void ExternalModel::backward_done(std::size_t l, int micro_batch, float* gradient) {
  {
    std::lock_guard lock(mutex_);
    gradients_.at(l) = gradient;
    // A layer's backward follows its forward: a forward no hook reported is over too.
    forwards_done_.at(l) = std::max(forwards_done_.at(l), micro_batch + 1);
    backwards_done_.at(l) = std::max(backwards_done_.at(l), micro_batch + 1);
    last_pass_end_ = now_seconds();
  }
  changed_.notify_all();
}

void ExternalModel::all_done(std::span<float* const> gradients) {
  if (gradients.size() != layers_.size()) throw std::invalid_argument("ExternalModel::all_done: one gradient per parameter");
  {
    std::lock_guard lock(mutex_);
    // Passes no hook reported end here: the loop's compute ran until now.
    if (std::any_of(backwards_done_.begin(), backwards_done_.end(), [&](int done) { return done < micro_batches_; }))
      last_pass_end_ = now_seconds();
    for (std::size_t l = 0; l < layers_.size(); ++l) {
      // A layer its hook reported keeps that gradient: the driver may be reading it now.
      if (gradients[l] != nullptr && backwards_done_[l] < micro_batches_) gradients_[l] = gradients[l];
      forwards_done_[l] = backwards_done_[l] = micro_batches_;
    }
  }
  changed_.notify_all();
}

void ExternalModel::abort(const std::string& reason) {
  {
    std::lock_guard lock(mutex_);
    aborted_ = reason.empty() ? "the step was abandoned" : reason;
  }
  changed_.notify_all();
}

void ExternalModel::wait_for(const std::vector<int>& done, std::size_t l, int m, const char* pass) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return done[l] > m || !aborted_.empty(); });
  if (done[l] <= m)
    throw std::runtime_error(std::string(pass) + " of " + layers_[l].name + " never came: " + aborted_);
}

void ExternalModel::forward_pass(std::size_t l, int m, optim::Step) { wait_for(forwards_done_, l, m, "the forward"); }

void ExternalModel::backward_pass(std::size_t l, int m, optim::Step) {
  wait_for(backwards_done_, l, m, "the backward");
  if (m + 1 < micro_batches_) return;
  // The layer's gradient is complete: its update writes the staged copy from here on.
  float* weights = nullptr;
  {
    std::lock_guard lock(mutex_);
    weights = weights_[l];
  }
  if (weights == nullptr) throw std::logic_error("ExternalModel: no memory bound for " + layers_[l].name);
  std::copy_n(weights, staged_[l].size(), staged_[l].data());
}

void ExternalModel::write_back_weights() {
  for (std::size_t l = 0; l < layers_.size(); ++l) std::copy(staged_[l].begin(), staged_[l].end(), weights_[l]);
}

void ExternalModel::stage_weights() {
  for (std::size_t l = 0; l < layers_.size(); ++l) std::copy_n(weights_[l], staged_[l].size(), staged_[l].data());
}

std::optional<platform::Seconds> ExternalModel::take_compute_seconds() {
  if (!hooked_) return std::nullopt;
  // Called once the step's last backward pass is over.
  std::lock_guard lock(mutex_);
  return last_pass_end_ - step_began_;
}

linalg::MatrixView<float> ExternalModel::weight_matrix(std::size_t l) {
  const runtime::LayerSpec& s = layers_.at(l);
  if (hooked_) return {staged_[l].data(), s.rows, s.cols};
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

#include "core/model/gpt_training_model.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "core/common/error.hpp"
#include "core/workload/runtime_stack.hpp"

namespace asteria::model {

namespace {

std::string call(const char* what, std::size_t l, int m, runtime::Step t) {
  return std::string("GptTrainingModel: ") + what + "(" + std::to_string(l) + ", " + std::to_string(m) + ", " +
         std::to_string(t) + ")";
}

}  // namespace

template <linalg::Real T>
GptTrainingModel<T>::GptTrainingModel(Gpt<T>& gpt) : gpt_(gpt) {
  const workload::WorkloadModel wl = workload::build_workload(gpt_.config());
  layers_ = workload::runtime_stack(wl).layers;
  // The driver addresses tensors by layer index: the stack must list the model's tensors in order.
  if (layers_.size() != gpt_.tensor_count())
    throw std::logic_error("GptTrainingModel: the runtime stack has " + std::to_string(layers_.size()) +
                           " layers for " + std::to_string(gpt_.tensor_count()) + " tensors");
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    const workload::WeightSpec& w = gpt_.tensor(l);
    if (layers_[l].name != w.name || layers_[l].rows != w.rows || layers_[l].cols != w.cols)
      throw std::logic_error("GptTrainingModel: layer " + std::to_string(l) + " is '" + layers_[l].name +
                             "', tensor is '" + w.name + "'");
  }

  // Each unit runs in the body of its last tensor (in forward order); a unit without tensors
  // with the unit before it. Units must own consecutive layers for that to respect the order.
  const int units = gpt_.unit_count();
  std::vector<std::size_t> owner(static_cast<std::size_t>(units), layers_.size());
  for (std::size_t l = 0; l < layers_.size(); ++l) {
    const int u = gpt_.unit_of_tensor(l);
    if (l > 0 && u < gpt_.unit_of_tensor(l - 1))
      throw std::logic_error("GptTrainingModel: layer " + std::to_string(l) + " ('" + layers_[l].name +
                             "') belongs to an earlier unit than the layer before it");
    owner[static_cast<std::size_t>(u)] = l;
  }
  for (std::size_t u = 1; u < owner.size(); ++u)
    if (owner[u] == layers_.size()) owner[u] = owner[u - 1];
  forward_units_.assign(layers_.size(), {});
  backward_units_.assign(layers_.size(), {});
  for (int u = 0; u < units; ++u) forward_units_[owner[static_cast<std::size_t>(u)]].push_back(u);
  for (int u = units; u-- > 0;) backward_units_[owner[static_cast<std::size_t>(u)]].push_back(u);
}

template <linalg::Real T>
void GptTrainingModel<T>::set_batch(std::span<const TokenId> tokens, int batch) {
  const auto per_sequence = static_cast<std::size_t>(gpt_.config().sequence_length) + 1;
  if (batch < 1 || tokens.size() != static_cast<std::size_t>(batch) * per_sequence)
    throw InputError("tokens", "batch", "expected " + std::to_string(batch) + " sequences of " +
                                            std::to_string(per_sequence) + " tokens, found " +
                                            std::to_string(tokens.size()) + " tokens");
  tokens_.assign(tokens.begin(), tokens.end());
  batch_ = batch;
  micro_batches_ = 1;
  pass_ = runtime::ModelPass::whole_step;
}

template <linalg::Real T>
void GptTrainingModel<T>::set_batch(std::span<const TokenId> tokens, int batch, int micro_batches) {
  if (micro_batches < 1 || batch < 1 || batch % micro_batches != 0)
    throw InputError("tokens", "micro_batches",
                     "expected a count >= 1 that divides the batch (" + std::to_string(batch) + " sequences), found " +
                         std::to_string(micro_batches));
  set_batch(tokens, batch);
  micro_batches_ = micro_batches;
  pass_ = runtime::ModelPass::per_micro_batch;
}

template <linalg::Real T>
void GptTrainingModel<T>::compute_gradient(std::size_t l, runtime::Step t) {
  if (pass_ == runtime::ModelPass::per_micro_batch)
    throw std::logic_error("GptTrainingModel: compute_gradient(" + std::to_string(l) + ", " + std::to_string(t) +
                           ") on a per_micro_batch model (the driver calls forward_pass and backward_pass)");
  if (t == computed_step_) return;  // this step's forward and backward already ran
  if (batch_ < 1) throw std::logic_error("GptTrainingModel: no batch set before step " + std::to_string(t));
  loss_ = gpt_.forward_backward(tokens_, batch_);
  computed_step_ = t;
}

template <linalg::Real T>
void GptTrainingModel<T>::begin_step(runtime::Step t) {
  if (in_step_)
    for (std::size_t m = 0; m < backwarded_.size(); ++m)
      if (backwarded_[m] != layers_.size())
        throw std::logic_error("GptTrainingModel: step " + std::to_string(t) + " begins before step " +
                               std::to_string(step_) + " ended: micro-batch " + std::to_string(m) + " ran " +
                               std::to_string(backwarded_[m]) + " of " + std::to_string(layers_.size()) +
                               " backward passes");
  if (batch_ < 1) throw std::logic_error("GptTrainingModel: no batch set before step " + std::to_string(t));
  gpt_.begin_step(tokens_, batch_, micro_batches_);
  in_step_ = true;
  step_ = t;
  step_micro_batches_ = micro_batches_;
  forwarded_.assign(static_cast<std::size_t>(micro_batches_), 0);
  backwarded_.assign(static_cast<std::size_t>(micro_batches_), 0);
}

template <linalg::Real T>
void GptTrainingModel<T>::check_micro_batch(const char* what, std::size_t l, int m, runtime::Step t) const {
  if (l >= layers_.size())
    throw std::out_of_range(call(what, l, m, t) + ": expected a layer below " + std::to_string(layers_.size()));
  if (m < 0 || m >= step_micro_batches_)
    throw std::out_of_range(call(what, l, m, t) + ": expected a micro-batch in [0, " +
                            std::to_string(step_micro_batches_) + ") (set_batch's count)");
}

template <linalg::Real T>
void GptTrainingModel<T>::forward_pass(std::size_t l, int m, runtime::Step t) {
  if (pass_ != runtime::ModelPass::per_micro_batch) return runtime::TrainingModel<T>::forward_pass(l, m, t);
  if (!in_step_ || t != step_) begin_step(t);
  check_micro_batch("forward_pass", l, m, t);
  std::size_t& done = forwarded_[static_cast<std::size_t>(m)];
  if (l != done)
    throw std::logic_error(call("forward_pass", l, m, t) +
                           (l < done ? " ran twice"
                                     : " before forward_pass of layer " + std::to_string(done) +
                                           " (a micro-batch's forwards run in layer order)"));
  for (int u : forward_units_[l]) gpt_.forward_unit(u, m);
  ++done;
  if (done == layers_.size() && gpt_.step_loss_ready()) loss_ = gpt_.step_loss();
}

template <linalg::Real T>
void GptTrainingModel<T>::backward_pass(std::size_t l, int m, runtime::Step t) {
  if (pass_ != runtime::ModelPass::per_micro_batch) return runtime::TrainingModel<T>::backward_pass(l, m, t);
  if (!in_step_ || t != step_)
    throw std::logic_error(call("backward_pass", l, m, t) + " outside the step in progress" +
                           (in_step_ ? " (" + std::to_string(step_) + ")" : std::string(" (none)")));
  check_micro_batch("backward_pass", l, m, t);
  const auto mb = static_cast<std::size_t>(m);
  if (forwarded_[mb] != layers_.size())
    throw std::logic_error(call("backward_pass", l, m, t) + " before every forward_pass of micro-batch " +
                           std::to_string(m) + " (" + std::to_string(forwarded_[mb]) + " of " +
                           std::to_string(layers_.size()) + " ran)");
  const std::size_t done = backwarded_[mb];
  const std::size_t expected = layers_.size() - done;  // one past the layer expected
  if (l + 1 != expected)
    throw std::logic_error(call("backward_pass", l, m, t) +
                           (l + 1 > expected ? std::string(" ran twice")
                                             : " before backward_pass of layer " + std::to_string(expected - 1) +
                                                   " (a micro-batch's backwards run in reverse layer order)"));
  for (int u : backward_units_[l]) gpt_.backward_unit(u, m);
  ++backwarded_[mb];
}

template class GptTrainingModel<float>;
template class GptTrainingModel<double>;

}  // namespace asteria::model

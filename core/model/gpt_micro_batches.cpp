// MicroBatchStep: the ordering checks, the per-micro-batch passes and the fixed-order fold of
// each tensor's partial gradients.
#include "core/model/gpt_micro_batches.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace asteria::model {

template <linalg::Real T>
std::size_t PartialPool<T>::acquire(std::size_t elements) {
  // The smallest free buffer that fits; else grow the largest free one; else a new one.
  const std::size_t none = buffers_.size();
  std::size_t best = none;
  std::size_t largest = none;
  for (std::size_t b = 0; b < buffers_.size(); ++b) {
    if (busy_[b]) continue;
    const std::size_t size = buffers_[b].size();
    if (size >= elements && (best == none || size < buffers_[best].size())) best = b;
    if (largest == none || size > buffers_[largest].size()) largest = b;
  }
  if (best == none && largest != none) {
    buffers_[largest].resize(elements);
    best = largest;
  }
  if (best == none) {
    buffers_.emplace_back(elements);
    busy_.push_back(false);
    best = buffers_.size() - 1;
  }
  busy_[best] = true;
  return best;
}

template <linalg::Real T>
void MicroBatchStep<T>::configure(const GptState<T>& s) {
  const WeightIndex& w = s.index;
  unit_tensors_.assign(w.layers.size() + 2, {});
  unit_tensors_.front().push_back(w.embedding);
  for (std::size_t l = 0; l < w.layers.size(); ++l) {
    const LayerWeightIndex& x = w.layers[l];
    for (std::size_t i : {x.attn_norm, x.q, x.k, x.v, x.o, x.mlp_norm, x.in, x.up, x.down})
      if (i != kNoWeight) unit_tensors_[l + 1].push_back(i);
  }
  if (w.final_norm != kNoWeight) unit_tensors_.back().push_back(w.final_norm);
  unit_tensors_.back().push_back(w.head);  // the embedding when tied: written by two units
  writers_.assign(s.specs.size(), 0);
  unit_of_.assign(s.specs.size(), -1);
  for (std::size_t u = unit_tensors_.size(); u-- > 0;)
    for (std::size_t i : unit_tensors_[u]) {
      ++writers_[i];
      unit_of_[i] = static_cast<int>(u);
    }
  targets_.assign(s.specs.size(), nullptr);
}

template <linalg::Real T>
void MicroBatchStep<T>::begin(GptState<T>& s, std::span<const TokenId> tokens, int batch, int micro_batches) {
  prepare_micro_batches(s.config, workspaces_, tokens, batch, micro_batches);  // throws before any change
  for (std::ptrdiff_t id : buffer_)
    if (id >= 0) pool_.release(static_cast<std::size_t>(id));  // an unfinished step's partials
  const auto count = static_cast<std::size_t>(micro_batches);
  count_ = micro_batches;
  global_tokens_ = static_cast<linalg::index>(count) * workspaces_.slices.front().tokens;
  forwarded_.assign(count, 0);
  backwarded_.assign(count, 0);
  losses_.assign(count, 0.0);
  pending_.resize(writers_.size() * count);
  for (std::size_t i = 0; i < writers_.size(); ++i)
    std::fill_n(pending_.begin() + static_cast<std::ptrdiff_t>(i * count), count, writers_[i]);
  buffer_.assign(writers_.size() * count, -1);
  folded_.assign(writers_.size(), 0);
  begun_ = true;
}

namespace {

// "Gpt: forward of unit 3 for micro-batch 1", the start of an ordering error. Built only when
// throwing: a pass allocates nothing.
std::string describe(const char* what, int unit, int m) {
  return std::string("Gpt: ") + what + " of unit " + std::to_string(unit) + " for micro-batch " + std::to_string(m);
}

}  // namespace

template <linalg::Real T>
void MicroBatchStep<T>::check(const char* what, int unit, int m) const {
  if (!begun_) throw std::logic_error(describe(what, unit, m) + " with no micro-batched step begun (begin_step)");
  if (unit < 0 || unit >= unit_count())
    throw std::out_of_range(describe(what, unit, m) + ": expected a unit in [0, " + std::to_string(unit_count()) + ")");
  if (m < 0 || m >= count_)
    throw std::out_of_range(describe(what, unit, m) + ": expected a micro-batch in [0, " + std::to_string(count_) +
                            ")");
}

template <linalg::Real T>
void MicroBatchStep<T>::forward(GptState<T>& s, int unit, int m) {
  check("forward", unit, m);
  const int done = forwarded_[static_cast<std::size_t>(m)];
  if (done != unit) {
    if (done > unit) throw std::logic_error(describe("forward", unit, m) + " already ran in this step");
    throw std::logic_error(describe("forward", unit, m) + " before the forward of unit " + std::to_string(done) +
                           " (a micro-batch's units run forward in order)");
  }
  Workspace<T>& ws = workspaces_.slices[static_cast<std::size_t>(m)];
  if (unit == 0) {
    embedding_forward(s, ws);
  } else if (unit + 1 < unit_count()) {
    decoder_forward(s, static_cast<std::size_t>(unit - 1), ws);
  } else {
    losses_[static_cast<std::size_t>(m)] = head_forward(s, ws);
  }
  ++forwarded_[static_cast<std::size_t>(m)];
}

template <linalg::Real T>
void MicroBatchStep<T>::backward(GptState<T>& s, int unit, int m) {
  check("backward", unit, m);
  const auto mb = static_cast<std::size_t>(m);
  if (forwarded_[mb] != unit_count())
    throw std::logic_error(describe("backward", unit, m) + " before all its forwards (" +
                           std::to_string(forwarded_[mb]) + " of " + std::to_string(unit_count()) + " units ran)");
  const int expected = unit_count() - 1 - backwarded_[mb];
  if (unit != expected) {
    if (unit > expected) throw std::logic_error(describe("backward", unit, m) + " already ran in this step");
    throw std::logic_error(describe("backward", unit, m) + " before the backward of unit " + std::to_string(expected) +
                           " (a micro-batch's units run backward from the last)");
  }

  const std::vector<std::size_t>& tensors = unit_tensors_[static_cast<std::size_t>(unit)];
  for (std::size_t i : tensors) {
    if (m == 0) {  // g_0 is the fold's start: written in place
      targets_[i] = s.gradients.data() + s.offsets[i];
      continue;
    }
    std::ptrdiff_t& id = buffer_[slot(i, m)];
    if (id < 0) id = static_cast<std::ptrdiff_t>(pool_.acquire(static_cast<std::size_t>(s.specs[i].elements())));
    targets_[i] = pool_.data(static_cast<std::size_t>(id));
  }
  const Workspace<T>& ws = workspaces_.slices[mb];
  if (unit == 0) {
    embedding_backward<T>(s, ws, targets_);
  } else if (unit + 1 < unit_count()) {
    decoder_backward<T>(s, static_cast<std::size_t>(unit - 1), ws, targets_);
  } else {
    // Scaled by the global batch's tokens: the summed partials are the gradient of its mean loss.
    head_backward<T>(s, ws, T(1) / static_cast<T>(global_tokens_), targets_);
  }
  ++backwarded_[mb];
  for (std::size_t i : tensors)
    if (--pending_[slot(i, m)] == 0) fold(s, i);
}

template <linalg::Real T>
void MicroBatchStep<T>::fold(GptState<T>& s, std::size_t i) {
  T* acc = s.gradients.data() + s.offsets[i];
  const auto elements = static_cast<std::size_t>(s.specs[i].elements());
  int& next = folded_[i];
  while (next < count_ && pending_[slot(i, next)] == 0) {
    if (next > 0) {
      std::ptrdiff_t& id = buffer_[slot(i, next)];
      const T* part = pool_.data(static_cast<std::size_t>(id));
      for (std::size_t e = 0; e < elements; ++e) acc[e] += part[e];
      pool_.release(static_cast<std::size_t>(id));
      id = -1;
    }
    ++next;
  }
}

template <linalg::Real T>
bool MicroBatchStep<T>::loss_ready() const noexcept {
  return begun_ && std::ranges::all_of(forwarded_, [&](int done) { return done == unit_count(); });
}

template <linalg::Real T>
double MicroBatchStep<T>::loss() const {
  if (!loss_ready()) throw std::logic_error("Gpt: step_loss before every micro-batch's forward has run");
  double total = 0.0;
  for (double part : losses_) total += part;  // ascending micro-batches, whatever the schedule
  return total / static_cast<double>(global_tokens_);
}

template <linalg::Real T>
bool MicroBatchStep<T>::gradient_ready(std::size_t i) const noexcept {
  return begun_ && i < folded_.size() && folded_[i] == count_;
}

template class PartialPool<float>;
template class PartialPool<double>;
template class MicroBatchStep<float>;
template class MicroBatchStep<double>;

}  // namespace asteria::model

#pragma once
// A decoder-only transformer with its own forward and backward, the readable reference that
// faster implementations (CUDA) are checked against.
//
// Shape: workload::ModelConfig. Token embedding; rotary position embedding (RoPE) on queries
// and keys; `layers` pre-norm blocks x + attn(norm(x)), then h + mlp(norm(h)), with causal
// multi-head attention (softmax(q kᵀ / sqrt(head_dim)) v) and a GELU (tanh form) or SwiGLU MLP;
// final norm; output head (the token embedding when tied); mean cross-entropy of next-token
// targets. Norms are RMSNorm (eps 1e-5) with a learned gain when config.norm_weights, without
// one otherwise. No biases.
//
// Parameters are exactly workload::build_workload(config).weights: same names, shapes
// (row-major, out_features x in_features; embedding vocab x d_model; a norm gain 1 x width) and
// order, so a simulation and a training run of one config see the same optimizer blocks.
//
// Numerics in T (float for training, double for gradient checks); matrix products through
// linalg::gemm (OpenBLAS, multithreaded). Gradients are overwritten by each backward, never
// accumulated across steps. Nothing here allocates per step once the first step has sized the
// buffers for the largest batch seen (and, micro-batched, the partials a schedule keeps waiting).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/linalg/matrix.hpp"
#include "core/workload/model_config.hpp"
#include "core/workload/workload_model.hpp"

namespace asteria::model {

using TokenId = std::int32_t;

template <linalg::Real T>
class Gpt {
 public:
  // Throws InputError(config.name, field, expectation) for what this model does not implement:
  // kv_heads != heads (grouped-query attention), qk_norm, an odd head_dim (RoPE rotates pairs).
  // Weights start at seeded values: matrices N(0, 0.02²) (output projections attn.o and
  // mlp.down / mlp.fc2 scaled by 1/sqrt(2·layers)), norm gains 1.
  Gpt(const workload::ModelConfig& config, std::uint64_t seed);
  ~Gpt();
  Gpt(Gpt&&) noexcept;
  Gpt& operator=(Gpt&&) noexcept;

  const workload::ModelConfig& config() const noexcept;
  // The parameter tensors, in workload order.
  std::size_t tensor_count() const noexcept;
  const workload::WeightSpec& tensor(std::size_t i) const;
  std::span<T> parameter(std::size_t i);
  std::span<const T> parameter(std::size_t i) const;
  std::span<T> gradient(std::size_t i);
  std::span<const T> gradient(std::size_t i) const;
  linalg::MatrixView<T> parameter_matrix(std::size_t i);          // rows x cols of tensor(i)
  linalg::ConstMatrixView<T> gradient_matrix(std::size_t i) const;
  linalg::MatrixView<T> gradient_matrix(std::size_t i);
  std::size_t parameter_count() const noexcept;

  // `tokens` holds `batch` sequences of sequence_length + 1 ids each (row-major): inputs are
  // positions [0, L), targets [1, L + 1). Any batch >= 1 and any length 1 <= L <=
  // config.sequence_length (RoPE needs no table of positions). Throws InputError (source
  // "tokens") for a size that does not match or an id outside [0, vocab).
  //
  // Forward and backward: returns the mean loss and overwrites every gradient.
  double forward_backward(std::span<const TokenId> tokens, int batch);
  // Forward only (validation): the mean loss; gradients untouched.
  double loss(std::span<const TokenId> tokens, int batch);

  // A step as (unit, micro-batch) passes, in whatever order a schedule runs them. Units: 0 the
  // embedding, 1 + l decoder layer l, unit_count() - 1 the final norm + head + loss. Each pass
  // computes what forward_backward computes for that unit on micro-batch m's slice.
  //
  // begin_step checks `tokens` as forward_backward does (InputError, source "tokens"), and that
  // micro_batches >= 1 divides batch (field "micro_batches"); micro-batch m is sequences
  // [m·b, (m+1)·b) with b = batch / micro_batches. It sizes one activation workspace per
  // micro-batch (the arena only grows) and starts the step's gradients afresh.
  //
  // Order: a micro-batch's forwards in unit order, then its backwards from the last unit down,
  // each once; micro-batches interleave freely. Anything else throws std::logic_error
  // (std::out_of_range for a unit or micro-batch that does not exist) and changes nothing.
  //
  // Gradients: each micro-batch's loss gradient is scaled by 1 / (tokens of the whole batch), so
  // the step's gradient is that of the mean loss over the batch. Tensor i's gradient is
  // g_0 + g_1 + ... + g_{M-1} added in ascending micro-batch order whatever order the backwards
  // ran in (bit-identical across schedules), complete once every micro-batch's backward that
  // writes it has run (gradient_ready). With one micro-batch it equals forward_backward bit for
  // bit. forward_backward ends a micro-batched step in progress.
  void begin_step(std::span<const TokenId> tokens, int batch, int micro_batches);
  int unit_count() const noexcept;  // config().layers + 2
  // The unit holding tensor i (a tied embedding: 0; its gradient is also written by the last).
  int unit_of_tensor(std::size_t i) const;
  void forward_unit(int unit, int m);
  void backward_unit(int unit, int m);
  bool gradient_ready(std::size_t i) const noexcept;
  // Mean loss over the whole batch (micro-batches summed in ascending order); std::logic_error
  // before every micro-batch's forward has run (step_loss_ready).
  double step_loss() const;
  bool step_loss_ready() const noexcept;

  // Model FLOPs of one forward + backward on `batch` sequences of length L (matmuls and
  // attention, 3x the forward), for throughput and MFU figures.
  double step_flops(int batch, int sequence_length) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Bytes of the activations and backward scratch a step of `batch` sequences of `length` tokens
// lays out (the workspace arena of Gpt<T>, element_bytes = sizeof(T); micro-batches of a step
// together hold as much), counted by the layout code itself, before anything is allocated;
// +inf when the counts pass 2^62 elements.
double workspace_bytes(const workload::ModelConfig& config, linalg::index batch, linalg::index length,
                       std::size_t element_bytes);

extern template class Gpt<float>;
extern template class Gpt<double>;

}  // namespace asteria::model

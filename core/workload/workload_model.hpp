#pragma once
// The work of one training step of a pre-norm decoder-only transformer, derived from its
// ModelConfig alone: every weight's shape, and per layer the device work of forward and
// backward (flops, bytes touched) and the activation memory kept for backward. A simulator
// charges time from these Costs; the optimizer side is in optimizer_blocks.hpp.
//
// Model choices (dominant terms, stated so a reader can redo them by hand), with T = B·S
// tokens per micro-batch (B sequences of length S), d = d_model, k = kv_heads·head_dim,
// f = mlp_hidden, V = vocab:
//   * a matmul with a p-parameter weight costs 2·T·p flops forward;
//   * attention scores QKᵀ and the weighted sum of values cost 2·B·S²·d each without a mask;
//     with the causal mask, fused kernels (FlashAttention) skip the masked half, so we charge
//     half of it: 2·B·S²·d in all per layer forward;
//   * backward = 2 × forward flops (input gradient and weight gradient, each a forward's size);
//   * elementwise work (norms, rotary embedding, activation functions, residual adds, the
//     attention softmax, the loss) is a second piece of each layer, kind elementwise: its flops
//     with an exp, tanh or erf counted as kTranscendentalFlops (see below), and the activation
//     traffic (the bytes of the saved activations), so GEMM efficiency is charged to GEMMs only;
//     backward = 2 × forward, as for the matmuls;
//   * saved activations per layer (elements, at activation_bytes): layer input, attention norm
//     output, q, k, v, attention output, residual, MLP norm output, and the MLP's hidden
//     tensors (SwiGLU: gate, up and their product; GELU: fc1 output and its GELU), plus the
//     pre-norm q and k under qk_norm; the attention kernel keeps an fp32 log-sum-exp per
//     query and head instead of the S×S score matrix;
//   * bytes touched forward: the layer's weights at activation_bytes (the compute copy) plus
//     every saved activation written once and read once; backward: the weights again, their
//     gradients written (gradient_bytes), the saved activations read and their gradients
//     written;
//   * embedding: a gather (forward) and a scatter-add into a dense gradient (backward), both
//     memory bound (kind elementwise); it keeps the int64 token ids;
//   * head: final norm, the V×d output projection and the loss, keeping the final norm's input
//     and output and the logits.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/platform/cost.hpp"
#include "core/workload/model_config.hpp"

namespace asteria::workload {

using platform::kTranscendentalFlops;

// Layer index of the token embedding; the decoder layers are 0 .. layers−1 and `layers` is the
// final norm and output head.
inline constexpr int kEmbeddingLayer = -1;

struct WeightSpec {
  std::string name;  // "layer3.attn.q", "embedding", "final_norm", "head"
  count rows = 0;    // PyTorch layout: out_features x in_features (embedding: vocab x d_model)
  count cols = 0;    // a norm gain (order 1) is 1 x width
  int order = 2;     // 2: matrix; 1: vector (norm gains, which the optimizers hand to AdamW)
  int layer = 0;     // kEmbeddingLayer, a decoder layer, or config.layers (final norm, head)

  count elements() const noexcept { return rows * cols; }
};

struct LayerWork {
  std::string name;  // "embedding", "layer0" ..., "head"
  int layer = 0;
  // Decoder layers and head: a gemm piece (dimension d_model: the matmuls and attention, reading
  // the weights) and an elementwise piece (the rest, moving the activations); embedding: one
  // elementwise piece.
  platform::Costs forward;
  platform::Costs backward;
  // Indices into WorkloadModel::weights of the weights this layer owns: their gradients are
  // complete once its backward has run. Every weight is owned by exactly one layer; a tied
  // embedding is owned by the embedding layer (its backward runs last), though the head reads it.
  std::vector<std::size_t> weights;
  count activation_bytes = 0;  // kept from forward for backward, per micro-batch
};

struct WorkloadTotals {
  count parameters = 0;         // elements of all weights (a tied matrix once)
  count matrix_parameters = 0;  // elements of the order-2 weights
  count tokens = 0;             // per step (micro_batch x sequence_length)
  double forward_flops = 0.0;
  double backward_flops = 0.0;
  double flops_per_step = 0.0;  // forward + backward
  count activation_bytes = 0;   // sum over layers
  count parameter_bytes = 0;    // master weights
  count gradient_bytes = 0;
};

struct WorkloadModel {
  ModelConfig config;
  std::vector<WeightSpec> weights;  // in forward order
  std::vector<LayerWork> layers;    // embedding, layer0 .. layer{L-1}, head
  WorkloadTotals totals;

  // Index of the weight called `name`; throws asteria::InputError when there is none.
  std::size_t weight_index(std::string_view name) const;
};

// Validates the config (see model_config.hpp) and derives the step.
WorkloadModel build_workload(const ModelConfig& config);

}  // namespace asteria::workload

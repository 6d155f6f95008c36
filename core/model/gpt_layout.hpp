#pragma once
// What every implementation of the transformer (Gpt<T> here, GptCuda under core/real/cuda)
// shares so that they accept the same configs, find the same weights and start from the same
// values: the support check, the index of each layer's weights, the flat parameter layout and
// the seeded initial weights.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/linalg/matrix.hpp"
#include "core/workload/model_config.hpp"
#include "core/workload/workload_model.hpp"

namespace asteria::model {

inline constexpr std::size_t kNoWeight = std::numeric_limits<std::size_t>::max();

// Indices into the weight list; kNoWeight for a norm gain that the config leaves out.
struct LayerWeightIndex {
  std::size_t attn_norm = kNoWeight;
  std::size_t q = kNoWeight;
  std::size_t k = kNoWeight;
  std::size_t v = kNoWeight;
  std::size_t o = kNoWeight;
  std::size_t mlp_norm = kNoWeight;
  std::size_t in = kNoWeight;    // mlp.gate (SwiGLU) or mlp.fc1 (GELU)
  std::size_t up = kNoWeight;    // mlp.up (SwiGLU only)
  std::size_t down = kNoWeight;  // mlp.down (SwiGLU) or mlp.fc2 (GELU)
};

// Where each weight of the model sits in `work.weights`.
struct WeightIndex {
  std::vector<LayerWeightIndex> layers;
  std::size_t embedding = kNoWeight;
  std::size_t final_norm = kNoWeight;  // kNoWeight without norm_weights
  std::size_t head = kNoWeight;        // the embedding's index when tied
};
WeightIndex index_weights(const workload::WorkloadModel& work);

// Throws InputError(config.name, field, expectation) for what the transformer does not
// implement beyond what workload::validate accepts: kv_heads != heads (grouped-query
// attention), qk_norm, an odd head_dim (RoPE rotates pairs).
void check_supported(const workload::ModelConfig& config);

// Model FLOPs of one forward + backward of `batch` sequences of `sequence_length` tokens, in the
// convention of workload::build_workload (workload_model.hpp), so measured throughput and
// simulated step time count the same work. With n = batch · L tokens:
//   * each matmul with a p-element weight: 2·n·p forward (the head's V x d counts even when tied);
//   * attention per layer: QKᵀ and PV are 2·batch·L²·d each without a mask; the causal mask
//     halves them (what a fused kernel does), so 2·batch·L²·d in all;
//   * norms, activations, softmax, residuals, embedding gather: not counted;
//   * forward + backward = 3 x forward (backward: input and weight gradients, a forward each).
double step_flops(const workload::ModelConfig& config, int batch, int sequence_length);

// Start of each tensor in the flat parameter (and gradient) array, and the total.
std::vector<std::size_t> tensor_offsets(const std::vector<workload::WeightSpec>& specs, std::size_t* total);

// The initial weights in one flat array at tensor_offsets: matrices N(0, 0.02²), output
// projections (attn.o, mlp.down, mlp.fc2) scaled by 1/sqrt(2·layers) so the residual stream's
// variance does not grow with depth (GPT-2); norm gains 1. Drawn in double from
// NormalStream(seed), tensor by tensor in workload order, and rounded once, so float and double
// models (and devices) of one seed hold the same rounded weights.
template <linalg::Real T>
std::vector<T> initial_parameters(const workload::ModelConfig& config, const std::vector<workload::WeightSpec>& specs,
                                  std::uint64_t seed);

}  // namespace asteria::model

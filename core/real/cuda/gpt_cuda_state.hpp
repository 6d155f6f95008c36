#pragma once
// Internal state of GptCuda: device weights and gradients, the index of each layer's weights,
// the RoPE table, and the activation workspace; the passes are free functions over it, each in
// its own file (gpt_cuda_forward.cpp, gpt_cuda_backward.cpp).
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/real/cuda/gpt_cuda_device.hpp"
#include "core/real/cuda/gpt_cuda_host.hpp"
#include "core/real/cuda/gpt_cuda_kernels.hpp"

namespace asteria::real::cuda {

// What one decoder layer keeps from forward for backward (device pointers into the arena).
// q, k and v are head-major, (batch, heads, L, head_dim), q and k already rotated; everything
// else is tokens x width (d = d_model, f = mlp_hidden).
struct CudaLayerActivations {
  float* input = nullptr;         // residual stream entering the layer (d)
  float* attn_in = nullptr;       // attention norm output (d)
  float* attn_inv_rms = nullptr;  // one per token
  float* q = nullptr;
  float* k = nullptr;
  float* v = nullptr;
  float* probs = nullptr;         // batch · heads matrices L x L
  float* attn_out = nullptr;      // heads concatenated, before the output projection (d)
  float* middle = nullptr;        // residual stream after attention (d)
  float* mlp_in = nullptr;        // MLP norm output (d)
  float* mlp_inv_rms = nullptr;
  float* hidden_in = nullptr;     // gate (SwiGLU) or fc1 output (GELU) (f)
  float* hidden_up = nullptr;     // up (SwiGLU only) (f)
  float* hidden_act = nullptr;    // (f)
};

// Activations and scratch for the current (batch, L); the arena only grows.
struct CudaWorkspace {
  std::int64_t batch = 0;
  std::int64_t length = 0;
  std::int64_t tokens = 0;
  DeviceArray<float> arena;
  std::vector<CudaLayerActivations> layers;
  float* final_in = nullptr;
  float* final_out = nullptr;
  float* final_inv_rms = nullptr;
  float* logits = nullptr;       // becomes the logits gradient in backward
  float* log_sum_exp = nullptr;
  // Scratch: three tokens x d and three head-major buffers, used by forward (projections before
  // the layout change) and backward (gradients of q, k, v in both layouts).
  float* token_a = nullptr;
  float* token_b = nullptr;
  float* token_c = nullptr;
  float* head_a = nullptr;
  float* head_b = nullptr;
  float* head_c = nullptr;
  float* d_residual = nullptr;   // gradient of the residual stream (d)
  float* d_norm = nullptr;       // gradient of a norm output (d)
  float* d_hidden_in = nullptr;  // (f)
  float* d_hidden_up = nullptr;  // (f, SwiGLU only)
  float* d_probs = nullptr;      // batch · heads matrices L x L
  float* gain_partials = nullptr;

  TokenUpload upload;                 // host side of the step's ids
  DeviceArray<std::int32_t> ids;      // device copy of upload.values
  DeviceArray<double> row_loss;       // one per token, then the total at [tokens]
};

struct GptCudaState {
  // Declared first so it is destroyed last, after every buffer that work on its stream uses.
  CudaContext context;
  workload::ModelConfig config;
  std::vector<workload::WeightSpec> specs;
  std::vector<std::size_t> offsets;
  std::size_t total = 0;
  WeightIndex index;
  DeviceArray<float> values;
  DeviceArray<float> gradients;
  DeviceArray<float> rope_cos;  // sequence_length x head_dim/2
  DeviceArray<float> rope_sin;
  CudaWorkspace workspace;
  std::string device_name;

  const float* weight(std::size_t i) const { return values.data() + offsets[i]; }
  float* gradient(std::size_t i) { return gradients.data() + offsets[i]; }
  // A norm gain, or null when the norm has none.
  const float* gain(std::size_t i) const { return i == model::kNoWeight ? nullptr : weight(i); }
  float* gain_gradient(std::size_t i) { return i == model::kNoWeight ? nullptr : gradient(i); }
  kernels::Rotation rotation() const { return {rope_cos.data(), rope_sin.data()}; }
  kernels::AttentionDims attention_dims() const {
    return {workspace.batch, workspace.length, config.heads, config.head_dim()};
  }
  cudaStream_t stream() const { return context.stream(); }
  cublasHandle_t blas() const { return context.blas(); }
};

// Checks `tokens` (InputError, source "tokens"), sizes the workspace and uploads the ids.
void prepare_workspace(GptCudaState& state, std::span<const model::TokenId> tokens, int batch);

// Enqueues the forward pass; the summed loss lands in workspace.row_loss[tokens].
void enqueue_forward(GptCudaState& state);
// Enqueues the backward pass, overwriting every gradient.
void enqueue_backward(GptCudaState& state);
// Waits for the stream and returns the mean loss of the last forward.
double read_mean_loss(GptCudaState& state);

}  // namespace asteria::real::cuda

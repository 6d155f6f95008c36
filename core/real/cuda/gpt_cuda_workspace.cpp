// Token checks, the upload of one step's ids, and the device activation layout.
#include <algorithm>

#include "core/real/cuda/gpt_cuda_state.hpp"

namespace asteria::real::cuda {

namespace {

// 256-byte starts keep every buffer aligned for coalesced access and cuBLAS.
constexpr std::int64_t kAlignFloats = 64;

std::int64_t aligned(std::int64_t elements) { return (elements + kAlignFloats - 1) / kAlignFloats * kAlignFloats; }

// Points every buffer of the workspace at consecutive ranges handed out by take(elements).
template <class Take>
void lay_out(CudaWorkspace& ws, const workload::ModelConfig& c, std::int64_t batch, std::int64_t length, Take take) {
  const std::int64_t n = batch * length;
  const std::int64_t d = c.d_model;
  const std::int64_t f = c.mlp_hidden;
  const std::int64_t attention = batch * c.heads * length * length;
  const bool swiglu = c.mlp == workload::MlpKind::swiglu;
  for (CudaLayerActivations& a : ws.layers) {
    a.input = take(n * d);
    a.attn_in = take(n * d);
    a.attn_inv_rms = take(n);
    a.q = take(n * d);
    a.k = take(n * d);
    a.v = take(n * d);
    a.probs = take(attention);
    a.attn_out = take(n * d);
    a.middle = take(n * d);
    a.mlp_in = take(n * d);
    a.mlp_inv_rms = take(n);
    a.hidden_in = take(n * f);
    a.hidden_up = swiglu ? take(n * f) : nullptr;
    a.hidden_act = take(n * f);
  }
  ws.final_in = take(n * d);
  ws.final_out = take(n * d);
  ws.final_inv_rms = take(n);
  ws.logits = take(n * c.vocab);
  ws.log_sum_exp = take(n);
  ws.token_a = take(n * d);
  ws.token_b = take(n * d);
  ws.token_c = take(n * d);
  ws.head_a = take(n * d);
  ws.head_b = take(n * d);
  ws.head_c = take(n * d);
  ws.d_residual = take(n * d);
  ws.d_norm = take(n * d);
  ws.d_hidden_in = take(n * f);
  ws.d_hidden_up = swiglu ? take(n * f) : nullptr;
  ws.d_probs = take(attention);
  ws.gain_partials = take(kernels::gain_partial_rows() * d);
}

}  // namespace

void prepare_workspace(GptCudaState& state, std::span<const model::TokenId> tokens, int batch) {
  const workload::ModelConfig& c = state.config;
  const std::int64_t length = check_tokens(c, tokens, batch);
  CudaWorkspace& ws = state.workspace;
  const std::int64_t n = batch * length;

  stage_tokens(tokens, batch, length, ws.upload);
  ws.ids.reserve_discarding(ws.upload.values.size());
  // From pageable memory the call returns once the host array has been staged, so the upload
  // may be refilled by the next step without waiting for the copy.
  check_cuda(cudaMemcpyAsync(ws.ids.data(), ws.upload.values.data(), ws.upload.values.size() * sizeof(std::int32_t),
                             cudaMemcpyHostToDevice, state.stream()),
             "upload token ids");
  ws.row_loss.reserve_discarding(static_cast<std::size_t>(n) + 1);
  if (ws.batch == batch && ws.length == length) return;  // same layout as the last step

  std::int64_t needed = 0;
  lay_out(ws, c, batch, length, [&](std::int64_t elements) -> float* {
    needed += aligned(elements);
    return nullptr;
  });
  if (ws.arena.size() < static_cast<std::size_t>(needed)) {
    state.context.synchronize("wait before growing the workspace");  // earlier work may still use it
    ws.batch = ws.length = ws.tokens = 0;  // no layout points into the arena until it is rebuilt
    ws.arena.reserve_discarding(static_cast<std::size_t>(needed));
  }
  std::int64_t used = 0;
  lay_out(ws, c, batch, length, [&](std::int64_t elements) -> float* {
    float* at = ws.arena.data() + used;
    used += aligned(elements);
    return at;
  });
  ws.batch = batch;
  ws.length = length;
  ws.tokens = n;
}

}  // namespace asteria::real::cuda

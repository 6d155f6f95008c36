// Host-side pieces of GptCuda: the same checks, weights and FLOP convention as core/model.
#include "core/real/cuda/gpt_cuda_host.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "core/common/error.hpp"
#include "core/model/normal_stream.hpp"

namespace asteria::real::cuda {

namespace {

constexpr double kInitStd = 0.02;

bool ends_with(const std::string& name, const std::string& suffix) {
  return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_output_projection(const std::string& name) {
  return ends_with(name, ".attn.o") || ends_with(name, ".mlp.down") || ends_with(name, ".mlp.fc2");
}

}  // namespace

void check_supported(const workload::ModelConfig& c) {
  const std::string source = c.name.empty() ? std::string("model") : c.name;
  if (c.kv_heads != c.heads)
    throw InputError(source, "kv_heads",
                     "expected kv_heads equal to heads (" + std::to_string(c.heads) +
                         "): grouped-query attention is not implemented, found " + std::to_string(c.kv_heads));
  if (c.qk_norm) throw InputError(source, "qk_norm", "expected false: QK-norm is not implemented");
  if (c.head_dim() % 2 != 0)
    throw InputError(source, "heads",
                     "expected an even head_dim (d_model / heads) for RoPE's pairs, found " +
                         std::to_string(c.head_dim()));
}

WeightIndex index_weights(const workload::WorkloadModel& work) {
  const workload::ModelConfig& c = work.config;
  const auto find = [&](const std::string& name) { return work.weight_index(name); };
  WeightIndex index;
  index.embedding = find("embedding");
  if (c.norm_weights) index.final_norm = find("final_norm");
  index.head = c.tied_embeddings ? index.embedding : find("head");
  index.layers.resize(static_cast<std::size_t>(c.layers));
  for (std::size_t l = 0; l < index.layers.size(); ++l) {
    const std::string p = "layer" + std::to_string(l) + ".";
    model::LayerWeightIndex& w = index.layers[l];
    if (c.norm_weights) {
      w.attn_norm = find(p + "attn_norm");
      w.mlp_norm = find(p + "mlp_norm");
    }
    w.q = find(p + "attn.q");
    w.k = find(p + "attn.k");
    w.v = find(p + "attn.v");
    w.o = find(p + "attn.o");
    if (c.mlp == workload::MlpKind::swiglu) {
      w.in = find(p + "mlp.gate");
      w.up = find(p + "mlp.up");
      w.down = find(p + "mlp.down");
    } else {
      w.in = find(p + "mlp.fc1");
      w.down = find(p + "mlp.fc2");
    }
  }
  return index;
}

std::vector<std::size_t> tensor_offsets(const std::vector<workload::WeightSpec>& specs, std::size_t* total) {
  std::vector<std::size_t> offsets;
  offsets.reserve(specs.size());
  std::size_t at = 0;
  for (const workload::WeightSpec& spec : specs) {
    offsets.push_back(at);
    at += static_cast<std::size_t>(spec.elements());
  }
  if (total != nullptr) *total = at;
  return offsets;
}

// Drawn in double and rounded once, tensor by tensor in workload order: Gpt<float>'s values.
std::vector<float> initial_parameters(const workload::ModelConfig& config,
                                      const std::vector<workload::WeightSpec>& specs, std::uint64_t seed) {
  std::size_t total = 0;
  const std::vector<std::size_t> offsets = tensor_offsets(specs, &total);
  std::vector<float> values(total);
  model::NormalStream normal(seed);
  const double output_scale = 1.0 / std::sqrt(2.0 * static_cast<double>(config.layers));
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const workload::WeightSpec& spec = specs[i];
    float* at = values.data() + offsets[i];
    if (spec.order == 1) {
      std::fill_n(at, spec.elements(), 1.0f);
      continue;
    }
    const double std_dev = kInitStd * (is_output_projection(spec.name) ? output_scale : 1.0);
    for (workload::count e = 0; e < spec.elements(); ++e) at[e] = static_cast<float>(std_dev * normal.next());
  }
  return values;
}

std::int64_t check_tokens(const workload::ModelConfig& c, std::span<const model::TokenId> tokens, int batch) {
  if (batch < 1) throw InputError("tokens", "batch", "expected at least 1 sequence, found " + std::to_string(batch));
  const auto size = static_cast<std::int64_t>(tokens.size());
  const std::int64_t length = size / batch - 1;
  if (size % batch != 0 || length < 1 || length > c.sequence_length)
    throw InputError("tokens", "size",
                     "expected batch (" + std::to_string(batch) + ") x (L + 1) ids with 1 <= L <= sequence_length (" +
                         std::to_string(c.sequence_length) + "), found " + std::to_string(size) + " ids");
  for (std::size_t i = 0; i < tokens.size(); ++i)
    if (tokens[i] < 0 || tokens[i] >= c.vocab)
      throw InputError("tokens", "id",
                       "expected ids in [0, " + std::to_string(c.vocab) + "), found " + std::to_string(tokens[i]) +
                           " at position " + std::to_string(i));
  return length;
}

void stage_tokens(std::span<const model::TokenId> tokens, int batch, std::int64_t length, TokenUpload& upload) {
  const std::int64_t n = batch * length;
  // Positions sorted by id (stable: ascending within an id) give the scatter plan.
  std::vector<std::int32_t> order(static_cast<std::size_t>(n));
  std::vector<std::int32_t> inputs(static_cast<std::size_t>(n));
  std::vector<std::int32_t> targets(static_cast<std::size_t>(n));
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t i = 0; i < length; ++i) {
      const auto t = static_cast<std::size_t>(b * length + i);
      inputs[t] = tokens[static_cast<std::size_t>(b * (length + 1) + i)];
      targets[t] = tokens[static_cast<std::size_t>(b * (length + 1) + i + 1)];
    }
  std::iota(order.begin(), order.end(), 0);
  std::ranges::stable_sort(order, {}, [&](std::int32_t t) { return inputs[static_cast<std::size_t>(t)]; });

  std::vector<std::int32_t> ids;
  std::vector<std::int32_t> starts;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::int32_t id = inputs[static_cast<std::size_t>(order[k])];
    if (ids.empty() || ids.back() != id) {
      ids.push_back(id);
      starts.push_back(static_cast<std::int32_t>(k));
    }
  }
  starts.push_back(static_cast<std::int32_t>(n));

  upload.tokens = n;
  upload.distinct = static_cast<std::int64_t>(ids.size());
  std::vector<std::int32_t>& v = upload.values;
  v.clear();
  v.reserve(static_cast<std::size_t>(3 * n + 2 * upload.distinct + 1));
  v.insert(v.end(), inputs.begin(), inputs.end());
  v.insert(v.end(), targets.begin(), targets.end());
  v.insert(v.end(), ids.begin(), ids.end());
  v.insert(v.end(), starts.begin(), starts.end());
  v.insert(v.end(), order.begin(), order.end());
}

// See Gpt::step_flops (core/model/gpt.cpp) for the convention.
double model_step_flops(const workload::ModelConfig& c, int batch, int sequence_length) {
  const double n = static_cast<double>(batch) * sequence_length;
  const double d = static_cast<double>(c.d_model);
  const double kv = static_cast<double>(c.kv_dim());
  const double f = static_cast<double>(c.mlp_hidden);
  const double mlp_matrices = c.mlp == workload::MlpKind::swiglu ? 3.0 : 2.0;
  const double layer_weights = 2.0 * d * d + 2.0 * kv * d + mlp_matrices * f * d;
  const double attention = 2.0 * static_cast<double>(batch) * sequence_length * sequence_length * d;
  const double layer = 2.0 * n * layer_weights + attention;
  const double head = 2.0 * n * static_cast<double>(c.vocab) * d;
  return 3.0 * (static_cast<double>(c.layers) * layer + head);
}

}  // namespace asteria::real::cuda

#include "core/model/gpt_layout.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/common/error.hpp"
#include "core/model/normal_stream.hpp"

namespace asteria::model {

namespace {

constexpr double kInitStd = 0.02;

bool is_output_projection(const std::string& name) {
  const auto ends_with = [&](const std::string& suffix) {
    return name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  return ends_with(".attn.o") || ends_with(".mlp.down") || ends_with(".mlp.fc2");
}

}  // namespace

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
    LayerWeightIndex& w = index.layers[l];
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

template <linalg::Real T>
std::vector<T> initial_parameters(const workload::ModelConfig& config, const std::vector<workload::WeightSpec>& specs,
                                  std::uint64_t seed) {
  std::size_t total = 0;
  const std::vector<std::size_t> offsets = tensor_offsets(specs, &total);
  std::vector<T> values(total);
  NormalStream normal(seed);
  const double output_scale = 1.0 / std::sqrt(2.0 * static_cast<double>(config.layers));
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const workload::WeightSpec& spec = specs[i];
    T* at = values.data() + offsets[i];
    if (spec.order == 1) {
      std::fill_n(at, spec.elements(), T(1));
      continue;
    }
    const double std_dev = kInitStd * (is_output_projection(spec.name) ? output_scale : 1.0);
    for (workload::count e = 0; e < spec.elements(); ++e) at[e] = static_cast<T>(std_dev * normal.next());
  }
  return values;
}

template std::vector<float> initial_parameters<float>(const workload::ModelConfig&,
                                                      const std::vector<workload::WeightSpec>&, std::uint64_t);
template std::vector<double> initial_parameters<double>(const workload::ModelConfig&,
                                                        const std::vector<workload::WeightSpec>&, std::uint64_t);

double step_flops(const workload::ModelConfig& c, int batch, int sequence_length) {
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

}  // namespace asteria::model

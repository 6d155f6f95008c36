#include "core/workload/workload_model.hpp"

#include "core/common/error.hpp"

namespace asteria::workload {
namespace {

using platform::Cost;
using platform::WorkKind;

constexpr double kLogSumExpBytes = 4.0;  // fp32 per query and head, kept by fused attention
constexpr double kTokenIdBytes = 8.0;    // int64 token ids kept by the embedding

// Builds the weights and layers of one model in forward order.
class WorkloadBuilder {
 public:
  explicit WorkloadBuilder(const ModelConfig& c)
      : c_(c),
        tokens_(static_cast<double>(c.tokens())),
        d_(static_cast<double>(c.d_model)),
        activation_(static_cast<double>(c.activation_bytes)),
        gradient_(static_cast<double>(c.gradient_bytes)) {}

  WorkloadModel build() {
    model_.config = c_;
    add_embedding();
    for (int l = 0; l < static_cast<int>(c_.layers); ++l) add_decoder_layer(l);
    add_head();
    sum_totals();
    return std::move(model_);
  }

 private:
  std::size_t add_weight(std::string name, count rows, count cols, int order, int layer) {
    model_.weights.push_back({std::move(name), rows, cols, order, layer});
    return model_.weights.size() - 1;
  }

  // Elements of the weights a layer owns.
  double owned_elements(const LayerWork& work) const {
    double total = 0.0;
    for (std::size_t w : work.weights) total += static_cast<double>(model_.weights[w].elements());
    return total;
  }

  void add_embedding() {
    LayerWork work{"embedding", kEmbeddingLayer, {}, {}, {}, 0};
    work.weights.push_back(add_weight("embedding", c_.vocab, c_.d_model, 2, kEmbeddingLayer));
    const double rows_moved = tokens_ * d_;
    const double dense_gradient = static_cast<double>(c_.vocab) * d_ * gradient_;
    // Gather: read T rows, write the layer input. Scatter-add: read the input gradient, add
    // each row into a dense weight gradient (zeroed and written whole).
    work.forward = Cost{WorkKind::elementwise, 0.0, 2.0 * rows_moved * activation_, c_.d_model};
    work.backward = Cost{WorkKind::elementwise, rows_moved, rows_moved * activation_ + dense_gradient, c_.d_model};
    work.activation_bytes = static_cast<count>(tokens_ * kTokenIdBytes);
    model_.layers.push_back(std::move(work));
  }

  void add_decoder_layer(int l) {
    const std::string prefix = "layer" + std::to_string(l);
    LayerWork work{prefix, l, {}, {}, {}, 0};
    const count d = c_.d_model;
    const count kv = c_.kv_dim();
    const count f = c_.mlp_hidden;
    auto own = [&](const std::string& suffix, count rows, count cols, int order) {
      work.weights.push_back(add_weight(prefix + "." + suffix, rows, cols, order, l));
    };
    if (c_.norm_weights) own("attn_norm", 1, d, 1);
    own("attn.q", d, d, 2);
    own("attn.k", kv, d, 2);
    own("attn.v", kv, d, 2);
    if (c_.qk_norm) {
      own("attn.q_norm", 1, d, 1);
      own("attn.k_norm", 1, kv, 1);
    }
    own("attn.o", d, d, 2);
    if (c_.norm_weights) own("mlp_norm", 1, d, 1);
    double matrix_elements = 2.0 * static_cast<double>(d * d + kv * d);
    double hidden_saved = 0.0;  // MLP hidden tensors kept, in units of T·f
    if (c_.mlp == MlpKind::swiglu) {
      own("mlp.gate", f, d, 2);
      own("mlp.up", f, d, 2);
      own("mlp.down", d, f, 2);
      matrix_elements += 3.0 * static_cast<double>(f * d);
      hidden_saved = 3.0;  // gate, up, silu(gate)·up
    } else {
      own("mlp.fc1", f, d, 2);
      own("mlp.fc2", d, f, 2);
      matrix_elements += 2.0 * static_cast<double>(f * d);
      hidden_saved = 2.0;  // fc1 output, its GELU
    }

    const double batch = static_cast<double>(c_.micro_batch);
    const double seq = static_cast<double>(c_.sequence_length);
    const double kvd = static_cast<double>(kv);
    const double causal_attention = 2.0 * batch * seq * seq * d_;  // half of QKᵀ and PV
    const double forward_flops = 2.0 * tokens_ * matrix_elements + causal_attention;

    // Saved: input, attention norm output, q, attention output, residual, MLP norm output
    // (6·d), k and v (2·kv), the MLP hidden tensors, pre-norm q and k under QK-norm.
    double saved_elements = tokens_ * (6.0 * d_ + 2.0 * kvd + hidden_saved * static_cast<double>(f));
    if (c_.qk_norm) saved_elements += tokens_ * (d_ + kvd);
    const double log_sum_exp = batch * static_cast<double>(c_.heads) * seq * kLogSumExpBytes;
    const double saved_bytes = saved_elements * activation_ + log_sum_exp;
    work.activation_bytes = static_cast<count>(saved_bytes);

    // Elementwise flops per token: two RMS norms (4 per element), the rotary embedding of q and
    // k (3 per element), the causal softmax over S/2 scores per query and head (4 and an exp per
    // score), the MLP activation (SwiGLU's silu: 4 and an exp per hidden element; GELU's tanh
    // form: 8 and a tanh), two residual adds.
    const double heads = static_cast<double>(c_.heads);
    const double hidden = static_cast<double>(f);
    double per_token = 8.0 * d_ + 3.0 * (d_ + kvd) + heads * seq / 2.0 * (4.0 + kTranscendentalFlops) + 2.0 * d_;
    per_token += hidden * (c_.mlp == MlpKind::swiglu ? 4.0 + kTranscendentalFlops : 8.0 + kTranscendentalFlops);
    if (c_.qk_norm) per_token += 4.0 * (d_ + kvd);
    const double elementwise_flops = tokens_ * per_token;

    const double weights = owned_elements(work);
    work.forward = {Cost{WorkKind::gemm, forward_flops, weights * activation_, d},
                    Cost{WorkKind::elementwise, elementwise_flops, 2.0 * saved_bytes, d}};
    work.backward = {Cost{WorkKind::gemm, 2.0 * forward_flops, weights * (activation_ + gradient_), d},
                     Cost{WorkKind::elementwise, 2.0 * elementwise_flops, 2.0 * saved_bytes, d}};
    model_.layers.push_back(std::move(work));
  }

  void add_head() {
    const int l = static_cast<int>(c_.layers);
    LayerWork work{"head", l, {}, {}, {}, 0};
    if (c_.norm_weights) work.weights.push_back(add_weight("final_norm", 1, c_.d_model, 1, l));
    if (!c_.tied_embeddings) work.weights.push_back(add_weight("head", c_.vocab, c_.d_model, 2, l));
    const double head_elements = static_cast<double>(c_.vocab) * d_;  // read whether tied or not
    const double norm_elements = c_.norm_weights ? d_ : 0.0;
    const double forward_flops = 2.0 * tokens_ * head_elements;
    // Saved: final norm input and output, logits.
    const double saved_bytes = tokens_ * (2.0 * d_ + static_cast<double>(c_.vocab)) * activation_;
    work.activation_bytes = static_cast<count>(saved_bytes);
    const double weights = head_elements + norm_elements;
    // Elementwise flops per token: the final RMS norm (4 per element) and the loss's softmax over
    // the vocabulary (4 and an exp per logit).
    const double vocab = static_cast<double>(c_.vocab);
    const double elementwise_flops = tokens_ * (4.0 * d_ + vocab * (4.0 + kTranscendentalFlops));
    work.forward = {Cost{WorkKind::gemm, forward_flops, weights * activation_, c_.d_model},
                    Cost{WorkKind::elementwise, elementwise_flops, 2.0 * saved_bytes, c_.d_model}};
    work.backward = {Cost{WorkKind::gemm, 2.0 * forward_flops, weights * (activation_ + gradient_), c_.d_model},
                     Cost{WorkKind::elementwise, 2.0 * elementwise_flops, 2.0 * saved_bytes, c_.d_model}};
    model_.layers.push_back(std::move(work));
  }

  void sum_totals() {
    WorkloadTotals& t = model_.totals;
    for (const WeightSpec& w : model_.weights) {
      t.parameters += w.elements();
      if (w.order == 2) t.matrix_parameters += w.elements();
    }
    for (const LayerWork& work : model_.layers) {
      // Model flops, the matmuls' (the convention of MFU): elementwise work is not counted.
      for (const Cost& piece : work.forward.pieces())
        if (piece.kind == WorkKind::gemm) t.forward_flops += piece.flops;
      for (const Cost& piece : work.backward.pieces())
        if (piece.kind == WorkKind::gemm) t.backward_flops += piece.flops;
      t.activation_bytes += work.activation_bytes;
    }
    t.flops_per_step = t.forward_flops + t.backward_flops;
    t.tokens = c_.tokens();
    t.parameter_bytes = t.parameters * c_.parameter_bytes;
    t.gradient_bytes = t.parameters * c_.gradient_bytes;
  }

  const ModelConfig& c_;
  double tokens_;
  double d_;
  double activation_;
  double gradient_;
  WorkloadModel model_;
};

}  // namespace

std::size_t WorkloadModel::weight_index(std::string_view name) const {
  for (std::size_t i = 0; i < weights.size(); ++i)
    if (weights[i].name == name) return i;
  throw InputError(config.name, "weight", "no weight named '" + std::string(name) + "'");
}

WorkloadModel build_workload(const ModelConfig& config) {
  validate(config, config.name.empty() ? std::string("model") : config.name);
  return WorkloadBuilder(config).build();
}

}  // namespace asteria::workload

#pragma once
// The shape of a decoder-only transformer and of its training step, read from a YAML file
// (experiments/models/*.yaml). Only sizes: enough to derive every weight's shape, the work of
// one step and the optimizer state, never the numerics.
//
// Fields (YAML keys equal the member names; unknown keys are an error):
//   required  name, layers, d_model, heads, mlp_hidden, vocab, sequence_length, micro_batch
//   optional  kv_heads (= heads), mlp (swiglu | gelu; swiglu), tied_embeddings (false),
//             norm_weights (true), qk_norm (false), activation_bytes (2), parameter_bytes (4),
//             gradient_bytes (4), origin ("")
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace asteria::workload {

using count = std::int64_t;

enum class MlpKind {
  swiglu,  // down(silu(gate(x)) ⊙ up(x)): three mlp_hidden x d_model matrices
  gelu,    // fc2(gelu(fc1(x))): two
};

std::string_view to_string(MlpKind kind) noexcept;

struct ModelConfig {
  std::string name;
  count layers = 0;
  count d_model = 0;
  count heads = 0;
  count kv_heads = 0;    // grouped-query attention when < heads
  count mlp_hidden = 0;  // width of one MLP branch (SwiGLU: of gate and of up)
  MlpKind mlp = MlpKind::swiglu;
  count vocab = 0;
  count sequence_length = 0;
  count micro_batch = 0;  // sequences per step and rank
  bool tied_embeddings = false;  // the output head reuses the token embedding
  bool norm_weights = true;      // learned gains in the norms (false: non-parametric norms)
  bool qk_norm = false;          // learned norms on queries and keys (OLMo-2)
  count activation_bytes = 2;    // per element of activations and of the compute copy of weights
  count parameter_bytes = 4;     // per element of the master weights (and of optimizer state)
  count gradient_bytes = 4;      // per element of weight gradients
  std::string origin;            // where the numbers come from

  count head_dim() const noexcept { return d_model / heads; }
  count kv_dim() const noexcept { return kv_heads * head_dim(); }
  count tokens() const noexcept { return micro_batch * sequence_length; }
};

// Parses and validates; `source` names the text in errors (a file path). Throws
// asteria::InputError(source, field, expectation) for a YAML syntax error (field "yaml", with
// the line), a missing or unknown field, a value of the wrong type, a non-positive size, heads
// not dividing d_model, kv_heads not dividing heads, an unknown mlp kind, an element size
// other than 1, 2, 4 or 8 bytes, text that is not UTF-8, more than 10000 layers, or a model of
// more than 2^48 weights or 2^48 activations per micro-batch (so that every count and byte size
// derived from it fits in 64 bits).
ModelConfig parse_model_config(std::string_view yaml_text, const std::string& source);

// Reads and parses a file; an unreadable file is an InputError too.
ModelConfig load_model_config(const std::filesystem::path& path);

// Where the shipped model files live (<repo>/experiments/models).
std::filesystem::path shipped_models_dir();
// Names of the shipped models (file stems), sorted.
std::vector<std::string> shipped_model_names();

// `name_or_path` if it names an existing file, otherwise the shipped model of that name.
// An InputError lists the shipped names when neither exists.
ModelConfig find_model_config(const std::string& name_or_path);

// Throws InputError naming `source` when `config` breaks a rule parse_model_config checks.
void validate(const ModelConfig& config, const std::string& source);

}  // namespace asteria::workload

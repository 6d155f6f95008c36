#include "core/workload/model_config.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <fstream>
#include <sstream>

#include "core/common/error.hpp"
#include "core/common/number_text.hpp"
#include "core/common/shipped_files.hpp"
#include "core/common/utf8.hpp"


namespace asteria::workload {
namespace {

constexpr std::array<std::string_view, 17> kKnownFields = {
    "name", "layers", "d_model", "heads", "kv_heads", "mlp_hidden", "mlp", "vocab", "sequence_length",
    "micro_batch", "tied_embeddings", "norm_weights", "qk_norm", "activation_bytes", "parameter_bytes",
    "gradient_bytes", "origin"};

std::string known_fields_list() {
  std::string list;
  for (std::string_view f : kKnownFields) list += (list.empty() ? "" : ", ") + std::string(f);
  return list;
}

// Reads the fields of one YAML mapping, naming the file and the field in every error.
class FieldReader {
 public:
  FieldReader(const YAML::Node& root, const std::string& source) : root_(root), source_(source) {}

  std::string text(const char* field, bool required, std::string fallback = {}) const {
    const YAML::Node node = root_[field];
    if (!node) return missing(field, required, std::move(fallback), "a string");
    if (!node.IsScalar()) throw InputError(source_, field, "expected a string");
    if (const auto at = utf8_error_at(node.Scalar()))
      throw InputError(source_, field,
                       "expected UTF-8 text, found an invalid byte sequence at byte " + std::to_string(*at + 1));
    return node.Scalar();
  }

  count integer(const char* field, bool required, count fallback = 0) const {
    const YAML::Node node = root_[field];
    if (!node) return missing(field, required, fallback, "a positive integer");
    const std::string value = node.IsScalar() ? node.Scalar() : std::string();
    count parsed = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
    if (!node.IsScalar() || value.empty() || error != std::errc() || end != value.data() + value.size())
      throw InputError(source_, field, "expected a positive integer, found '" + value + "'");
    if (parsed <= 0) throw InputError(source_, field, "expected a positive integer, found " + value);
    return parsed;
  }

  bool boolean(const char* field, bool fallback) const {
    const YAML::Node node = root_[field];
    if (!node) return fallback;
    bool value = false;
    if (!node.IsScalar() || !YAML::convert<bool>::decode(node, value))
      throw InputError(source_, field,
                       "expected true or false, found '" + (node.IsScalar() ? node.Scalar() : "") + "'");
    return value;
  }

 private:
  template <typename V>
  V missing(const char* field, bool required, V fallback, const char* what) const {
    if (required) throw InputError(source_, field, std::string("missing; expected ") + what);
    return fallback;
  }

  const YAML::Node& root_;
  const std::string& source_;
};

MlpKind parse_mlp_kind(const std::string& value, const std::string& source) {
  if (value == "swiglu") return MlpKind::swiglu;
  if (value == "gelu") return MlpKind::gelu;
  throw InputError(source, "mlp", "expected swiglu or gelu, found '" + value + "'");
}

// Bounds far past any real model (GPT-3: 96 layers, 1.75e11 weights) that keep the workload
// model's counts and byte sizes inside 64-bit integers, and its per-layer objects in memory.
constexpr count kMaxLayers = 10000;
constexpr double kMaxElements = 0x1p48;  // 2.8e14, times at most 8 bytes per element

void require_element_size(count bytes, const char* field, const std::string& source) {
  if (bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8)
    throw InputError(source, field, "expected 1, 2, 4 or 8 bytes per element, found " + std::to_string(bytes));
}

}  // namespace

std::string_view to_string(MlpKind kind) noexcept {
  return kind == MlpKind::swiglu ? "swiglu" : "gelu";
}

void validate(const ModelConfig& c, const std::string& source) {
  if (c.name.empty()) throw InputError(source, "name", "expected a non-empty string");
  const std::pair<const char*, count> sizes[] = {
      {"layers", c.layers}, {"d_model", c.d_model}, {"heads", c.heads},
      {"kv_heads", c.kv_heads}, {"mlp_hidden", c.mlp_hidden}, {"vocab", c.vocab},
      {"sequence_length", c.sequence_length}, {"micro_batch", c.micro_batch}};
  for (const auto& [field, value] : sizes)
    if (value <= 0) throw InputError(source, field, "expected a positive integer, found " + std::to_string(value));
  if (c.d_model % c.heads != 0)
    throw InputError(source, "heads", "expected a divisor of d_model (" + std::to_string(c.d_model) + "), found " +
                                          std::to_string(c.heads));
  if (c.heads % c.kv_heads != 0)
    throw InputError(source, "kv_heads", "expected a divisor of heads (" + std::to_string(c.heads) + "), found " +
                                             std::to_string(c.kv_heads));
  require_element_size(c.activation_bytes, "activation_bytes", source);
  require_element_size(c.parameter_bytes, "parameter_bytes", source);
  require_element_size(c.gradient_bytes, "gradient_bytes", source);
  if (c.layers > kMaxLayers)
    throw InputError(source, "layers",
                     "expected at most " + std::to_string(kMaxLayers) + " layers, found " + std::to_string(c.layers));
  // In floating point, where these products cannot overflow; upper bounds of what
  // build_workload counts (kv_dim <= d_model).
  const auto d = static_cast<double>(c.d_model);
  const auto f = static_cast<double>(c.mlp_hidden);
  const auto vocab = static_cast<double>(c.vocab);
  const auto layers = static_cast<double>(c.layers);
  const double weights = layers * (4.0 * d * d + 3.0 * f * d + 4.0 * d) + 2.0 * vocab * d + d;
  if (weights > kMaxElements)
    throw InputError(source, "layers, d_model, mlp_hidden, vocab",
                     "expected at most 2^48 weights (layers x (4 d_model^2 + 3 d_model x mlp_hidden) + 2 vocab x "
                     "d_model), found about " + significant(weights, 3));
  const double activations = static_cast<double>(c.micro_batch) * static_cast<double>(c.sequence_length) *
                             (layers * (10.0 * d + 3.0 * f) + 2.0 * d + vocab);
  if (activations > kMaxElements)
    throw InputError(source, "micro_batch, sequence_length",
                     "expected at most 2^48 activations per micro-batch (micro_batch x sequence_length x (layers x "
                     "(10 d_model + 3 mlp_hidden) + 2 d_model + vocab)), found about " + significant(activations, 3));
}

ModelConfig parse_model_config(std::string_view yaml_text, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::ParserException& e) {
    // yaml-cpp counts lines from 0.
    throw InputError(source, "yaml", "syntax error at line " + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  if (!root.IsMap()) throw InputError(source, "yaml", "expected a mapping of model fields at the top level");
  // yaml-cpp keeps both copies of a repeated key and answers lookups with the first, silently.
  std::vector<std::string> seen;
  for (const auto& entry : root) {
    const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : std::string("?");
    if (std::find(kKnownFields.begin(), kKnownFields.end(), key) == kKnownFields.end())
      throw InputError(source, key, "unknown field; expected one of " + known_fields_list());
    if (std::find(seen.begin(), seen.end(), key) != seen.end())
      throw InputError(source, key,
                       "given once, found twice (the second at line " + std::to_string(entry.first.Mark().line + 1) +
                           ")");
    seen.push_back(key);
  }

  const FieldReader read(root, source);
  ModelConfig c;
  c.name = read.text("name", true);
  c.layers = read.integer("layers", true);
  c.d_model = read.integer("d_model", true);
  c.heads = read.integer("heads", true);
  c.kv_heads = read.integer("kv_heads", false, c.heads);
  c.mlp_hidden = read.integer("mlp_hidden", true);
  c.mlp = parse_mlp_kind(read.text("mlp", false, "swiglu"), source);
  c.vocab = read.integer("vocab", true);
  c.sequence_length = read.integer("sequence_length", true);
  c.micro_batch = read.integer("micro_batch", true);
  c.tied_embeddings = read.boolean("tied_embeddings", false);
  c.norm_weights = read.boolean("norm_weights", true);
  c.qk_norm = read.boolean("qk_norm", false);
  c.activation_bytes = read.integer("activation_bytes", false, 2);
  c.parameter_bytes = read.integer("parameter_bytes", false, 4);
  c.gradient_bytes = read.integer("gradient_bytes", false, 4);
  c.origin = read.text("origin", false);
  validate(c, source);
  return c;
}

ModelConfig load_model_config(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string(), "file", "expected a readable model file");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_model_config(text.str(), path.string());
}

std::filesystem::path shipped_models_dir() { return shipped_path("experiments/models"); }

std::vector<std::string> shipped_model_names() {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(shipped_models_dir(), error))
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

ModelConfig find_model_config(const std::string& name_or_path) {
  std::error_code error;
  if (std::filesystem::is_regular_file(name_or_path, error)) return load_model_config(name_or_path);
  const std::filesystem::path shipped = shipped_models_dir() / (name_or_path + ".yaml");
  if (name_or_path.find('/') == std::string::npos && std::filesystem::is_regular_file(shipped, error))
    return load_model_config(shipped);
  std::string names;
  for (const std::string& n : shipped_model_names()) names += (names.empty() ? "" : ", ") + n;
  throw InputError("model", name_or_path,
                   "expected a model file or one of the shipped models (" +
                       (names.empty() ? "none in " + shipped_models_dir().string() : names) + ")");
}

}  // namespace asteria::workload

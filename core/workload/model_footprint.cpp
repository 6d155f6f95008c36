#include "core/workload/model_footprint.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "core/common/error.hpp"
#include "core/common/number_text.hpp"
#include "core/optim/shape_model.hpp"
#include "core/optim/factory.hpp"
#include "core/optim/tensor_optimizer.hpp"
#include "core/workload/workload_model.hpp"

namespace asteria::workload {
namespace {

using optim::index;

// Past this many elements a size no longer fits 64-bit arithmetic, let alone memory.
constexpr double kHugeElements = 0x1p60;

// The weights of a one-layer copy of the config, each with how many times the model holds it:
// decoder layer 0 stands for every decoder layer (all alike), the rest appears once.
struct CountedWeight {
  WeightSpec weight;
  double copies = 1.0;
};

std::vector<CountedWeight> counted_weights(const ModelConfig& config) {
  ModelConfig one = config;
  one.layers = 1;
  one.micro_batch = 1;  // weights only: a huge batch is the caller's to name
  const WorkloadModel model = build_workload(one);
  std::vector<CountedWeight> weights;
  for (const WeightSpec& w : model.weights)
    weights.push_back({w, w.layer == 0 ? static_cast<double>(config.layers) : 1.0});
  return weights;
}

double elements(const WeightSpec& w) { return static_cast<double>(w.rows) * static_cast<double>(w.cols); }

// State bytes and blocks of one tensor, by the blocking the optimizer uses (optim::block_grid:
// the view, the blocks' optimizer, their side), each distinct block shape computed once.
OptimizerStateSize tensor_state(const WeightSpec& w, optim::OptimizerKind kind, const optim::Hyperparameters& hp,
                                std::size_t element_bytes) {
  if (elements(w) > kHugeElements) return {1.0, std::numeric_limits<double>::infinity()};
  const std::vector<index> shape = w.order <= 1 ? std::vector<index>{w.rows * w.cols} : std::vector<index>{w.rows, w.cols};
  const optim::BlockGrid grid = optim::block_grid(kind, hp, shape);
  OptimizerStateSize size;
  for (const optim::BlockShapeCount& s : optim::block_shapes(grid)) {
    size.blocks += s.count;
    size.bytes += s.count * static_cast<double>(optim::state_bytes(grid.kind, grid.hp, s.rows, s.cols, element_bytes));
  }
  return size;
}

// A whole count, written out ("5", "400000"), rounded down.
std::string count_text(double value) { return std::to_string(static_cast<long long>(std::floor(value))); }

// The shape field whose weights dominate the footprint: the one to make smaller.
std::string dominant_shape_field(const ModelConfig& config) {
  double by_d_model = 0.0, by_mlp = 0.0, by_vocab = 0.0;
  for (const CountedWeight& w : counted_weights(config)) {
    const double e = elements(w.weight) * w.copies;
    const std::string& name = w.weight.name;
    if (name == "embedding" || name == "head") by_vocab += e;
    else if (name.find(".mlp.") != std::string::npos) by_mlp += e;
    else by_d_model += e;
  }
  if (by_vocab >= by_d_model && by_vocab >= by_mlp) return "vocab";
  return by_mlp > by_d_model ? "mlp_hidden" : "d_model";
}

}  // namespace

ModelFootprint weights_footprint(const ModelConfig& config, std::size_t element_bytes) {
  double total = 0.0;
  for (const CountedWeight& w : counted_weights(config)) total += elements(w.weight) * w.copies;
  ModelFootprint f;
  f.weights = total * static_cast<double>(element_bytes);
  f.gradients = f.weights;
  return f;
}

OptimizerStateSize optimizer_state_size(const ModelConfig& config, optim::OptimizerKind kind,
                                        const optim::Hyperparameters& hp, std::size_t element_bytes) {
  optim::validate(hp, config.name + " optimizer");
  OptimizerStateSize total;
  for (const CountedWeight& w : counted_weights(config)) {
    const OptimizerStateSize one = tensor_state(w.weight, kind, hp, element_bytes);
    total.blocks += one.blocks * w.copies;
    total.bytes += one.bytes * w.copies;
  }
  return total;
}

std::string bytes_text(double bytes) {
  if (!std::isfinite(bytes)) return "more than 1e18 B";
  static constexpr std::array<const char*, 7> kUnits = {"B", "KB", "MB", "GB", "TB", "PB", "EB"};
  std::size_t unit = 0;
  while (unit + 1 < kUnits.size() && std::fabs(bytes) >= 1000.0) {
    bytes /= 1000.0;
    ++unit;
  }
  return significant(bytes, 3) + " " + kUnits[unit];
}

void check_footprint(const ModelFootprint& f, const ModelConfig& config, const MemoryLimit& limit,
                     const FootprintNames& names) {
  const double needed = f.total();
  if (needed <= limit.bytes) return;
  std::string parts;
  const auto part = [&parts](const std::string& what, double bytes) {
    if (bytes > 0.0) parts += (parts.empty() ? "" : ", ") + what + " " + bytes_text(bytes);
  };
  part("weights", f.weights);
  part("gradients", f.gradients);
  part("activations", f.activations);
  part(names.state_label, f.optimizer_state);
  if (f.optimizer_state > 0.0 && !names.state_note.empty()) parts += " (" + names.state_note + ")";
  const std::string fit = " that fits in memory, at most " + bytes_text(limit.bytes) + " (" + limit.what + "); ";
  const std::string need = " need " + bytes_text(needed) + " for " + names.holder + " (" + parts + ")";
  if (names.ranks > 1.0 && needed / names.ranks <= limit.bytes) {
    throw InputError(names.ranks_source, names.ranks_field,
                     "expected ranks that fit in memory, at most " + bytes_text(limit.bytes) + " (" + limit.what +
                         "), so at most " + count_text(limit.bytes / (needed / names.ranks)) + "; " +
                         count_text(names.ranks) + " ranks (" + names.ranks_note + ") need " +
                         bytes_text(needed) + ", " + bytes_text(needed / names.ranks) + " each (" + parts + ")");
  }
  if (f.activations > f.weights + f.gradients + f.optimizer_state) {
    throw InputError(names.batch_source, names.batch_field,
                     "expected a batch" + fit + std::to_string(config.micro_batch) + " sequences of " +
                         std::to_string(config.sequence_length) + " tokens (" + names.batch_note + ")" + need);
  }
  throw InputError(names.model_source, dominant_shape_field(config),
                   "expected a model" + fit + "layers " + std::to_string(config.layers) + ", d_model " +
                       std::to_string(config.d_model) + ", mlp_hidden " + std::to_string(config.mlp_hidden) +
                       ", vocab " + std::to_string(config.vocab) + need);
}

}  // namespace asteria::workload

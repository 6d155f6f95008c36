#pragma once
// What the step driver trains: a stack of driver layers, each one parameter tensor (a matrix, or
// a vector seen as 1 x cols) with the modelled device cost of its forward and backward pass. A
// framework integration implements it over its own model; SyntheticModel (seeded gradients) and
// model::GptTrainingModel (a real transformer) are the two here.
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/linalg/matrix.hpp"
#include "core/optim/block_optimizer.hpp"
#include "core/platform/cost.hpp"
#include "core/platform/memory.hpp"
#include "core/platform/time.hpp"

namespace asteria::runtime {

using linalg::index;
using optim::Step;

struct LayerSpec {
  std::string name;          // "layer3"
  index rows = 0;
  index cols = 0;
  platform::Costs forward;   // device work of the layer's forward pass (no numerics: modelled)
  platform::Costs backward;  // and of its backward pass
  // A 1-D parameter (a norm's scale, a bias) seen as 1 x cols: optimized by the AdamW fallback
  // of tensors of order <= 1, as a framework integration would.
  bool vector = false;
  // Bytes of the layer's weights as its forward reads them (the compute copy: what a fetch moves
  // when weights rest off the device); 0: rows · cols values of the model's type.
  double weight_bytes = 0.0;
  // Bytes of the activation checkpoint kept for the layer's backward over the whole step (split
  // over the micro-batches): what moves when checkpoints rest off the device.
  double checkpoint_bytes = 0.0;
};

// The layer's tensor as its optimizer blocks it: {cols} for a vector, {rows, cols} otherwise.
std::vector<index> tensor_shape(const LayerSpec& layer);

// How a model computes a step's gradients: layer_by_layer (each layer's backward body computes
// its own), or whole_step (the first backward body of a step runs the whole forward and backward
// pass; the later ones find their gradients ready). A trace records it, so that a replay charges
// the step's compute where the model spent it. per_micro_batch: the model computes each (layer,
// micro-batch) pass in the body of the plan's op for it (TrainingModel::forward_pass and
// backward_pass), in whatever order the schedule issues them.
enum class ModelPass { layer_by_layer, whole_step, per_micro_batch };
std::string_view to_string(ModelPass pass) noexcept;
// "layer_by_layer", "whole_step" or "per_micro_batch"; InputError naming `source` and `field`
// otherwise.
ModelPass parse_model_pass(std::string_view text, const std::string& source, const std::string& field);

template <linalg::Real T>
class TrainingModel {
 public:
  virtual ~TrainingModel() = default;

  virtual std::size_t layer_count() const = 0;
  virtual const LayerSpec& layer(std::size_t l) const = 0;
  // Layer l's parameters and gradient, rows x cols of layer(l).
  virtual linalg::MatrixView<T> weight_matrix(std::size_t l) = 0;
  virtual linalg::ConstMatrixView<T> gradient_matrix(std::size_t l) const = 0;
  // The same gradient, writable: data-parallel training replaces it in place by the ranks'
  // average (the reduce op) before the optimizer reads it. Row-major and contiguous.
  virtual linalg::MatrixView<T> mutable_gradient_matrix(std::size_t l) = 0;
  // Layers first..last's gradients (first <= last) as one span in layer order: a gradient bucket
  // that one collective reduces (plan::BucketInfo), in the memory of tensor_tier(). Empty when
  // the model does not keep them in one array; the driver then gives every layer a bucket of its
  // own. The default: a layer's own contiguous gradient, and empty for several layers.
  virtual std::span<T> gradient_bucket(std::size_t first, std::size_t last);
  // The backward numerics of layer l at step t: afterwards gradient_matrix(l) holds its
  // gradient. The driver calls it once per layer and step, last layer first, as the body of
  // the layer's backward work (on the device stream), and updates layer l's parameters before
  // calling it for layer l - 1 (with data-parallel ranks after it: a layer's update waits for
  // its gradient's all-reduce, which overlaps the next backward, and the backward of layer l - 1
  // never reads layer l's parameters): a model whose backward is not layer by layer computes
  // every gradient at the first call of a step. With micro-batches the call is the body of the
  // layer's last backward op: the micro-batches shape the step's time, not its numbers (a model
  // that computes each micro-batch is per_micro_batch, below).
  virtual void compute_gradient(std::size_t l, Step t) = 0;
  virtual ModelPass pass() const noexcept { return ModelPass::layer_by_layer; }
  // The memory tier whose math device (Platform::math) addresses the views of weight_matrix and
  // gradient_matrix: host memory by default; the device tier for a model whose tensors live in an
  // accelerator's memory. A block whose optimizer state rests where another device computes has
  // its gradient and weights staged between the two (runtime/driver/operand_staging.hpp).
  virtual platform::Tier tensor_tier() const noexcept { return platform::Tier::host; }
  // The forward and backward seconds the model measured itself since the last call, for a model
  // timed on its device (asteria train's): the driver reports them as the step's compute_s in
  // place of the modelled time. None (the default): the plan's modelled compute is the figure.
  virtual std::optional<platform::Seconds> take_compute_seconds() { return std::nullopt; }

  // Models whose pass() is per_micro_batch (the others are never called here):
  //   forward_pass(l, m, t)   the body of the plan's forward op of layer l and micro-batch m;
  //   backward_pass(l, m, t)  the body of its backward op.
  // The driver calls them on the device stream, every layer and micro-batch of step t once, in
  // the plan's order: a micro-batch's forward passes in layer order, then its backward passes in
  // reverse order, any interleaving of micro-batches (horizontal, vertical, snake). Layer l's
  // gradient (gradient_matrix) is complete after its last backward_pass of the step and is the
  // sum of the micro-batches' gradients added in ascending micro-batch order, whatever order they
  // were computed in, so two schedules of the same micro-batches give bit-identical gradients.
  // A layer's weights may change (its update) after its last backward_pass of a step and before
  // its first forward_pass of the next, never in between. compute_gradient is not called.
  virtual void forward_pass(std::size_t l, int m, Step t);
  virtual void backward_pass(std::size_t l, int m, Step t);
};

extern template class TrainingModel<float>;
extern template class TrainingModel<double>;

}  // namespace asteria::runtime

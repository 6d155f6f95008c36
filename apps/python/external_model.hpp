#pragma once
// A model whose parameters and gradients live in memory the caller owns (a PyTorch model's CPU
// tensors): the step driver's TrainingModel over borrowed pointers. The layers are the parameters
// in the caller's order, each viewed as the optimizer views a tensor (optim::tensor_view: the
// first dimension by the product of the others; order <= 1 a vector). Zero-copy.
//
// Two ways a step's gradients come:
//   after the loop's backward (whole_step): step() binds every tensor (bind()) and runs the
//     step; the forward and backward ops are markers;
//   from the loop's hooks (per_micro_batch, `hooked`): the step starts at the loop's first
//     forward (begin_step), and the plan's forward and backward op of (layer, micro-batch) end
//     when the caller reports that pass done (forward_done, backward_done: a module's forward
//     hook, a parameter's gradient hook), so the layer's optimizer work (statistics, refresh
//     snapshots, its update) runs while the rest of the loop's backward does, and each op's span
//     in a trace is the loop's own pass, measured. The updates write a staged copy of the weights
//     (taken once the layer's gradient is complete), handed to the caller's tensors by
//     write_back_weights() at step(): the caller's parameters change in step() only, as
//     torch.optim's contract says, and no backward still running reads an updated weight.
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/runtime/driver/training_model.hpp"

namespace asteria::python {

// How the loop's forward uses a parameter: what its declared device costs are.
enum class ParameterUse {
  matmul,       // a Linear's weight: 2 flops per element and token forward, 4 backward
  lookup,       // an Embedding's table: rows read per token (bytes, no flops)
  elementwise,  // a norm's scale, a bias: a few flops per element and token
};
// "matmul", "lookup" or "elementwise"; InputError naming `field` otherwise.
ParameterUse parse_parameter_use(const std::string& text, const std::string& field);

struct ParameterShape {
  std::string name;
  std::vector<std::int64_t> shape;  // any order; 0-d is a scalar
  ParameterUse use = ParameterUse::matmul;
};

class ExternalModel final : public runtime::TrainingModel<float> {
 public:
  // Throws InputError naming the parameter for an empty tensor or a negative extent.
  // `tokens_per_step` > 0: each layer declares the device costs of its passes over that many
  // tokens (a trace's replay charges them); 0: none declared. `micro_batches`: the loop's forward
  // and backward passes per step (hooked only).
  ExternalModel(const std::vector<ParameterShape>& parameters, double tokens_per_step, bool hooked, int micro_batches);

  // The parameters' and gradients' memory for the next step, one pointer each, in parameter
  // order, each holding element_count(l) floats, row-major and contiguous.
  void bind(std::span<float* const> weights, std::span<float* const> gradients);
  std::size_t element_count(std::size_t l) const;
  bool hooked() const noexcept { return hooked_; }

  // Hooked steps, called from the caller's thread while the step runs on the driver's:
  void begin_step(std::span<float* const> weights);              // before the loop's first forward
  void forward_done(std::size_t l, int micro_batch);               // its forward pass of l is over
  void backward_done(std::size_t l, int micro_batch, float* gradient);  // l's gradient after it
  // step(): every pass no hook reported is over, with these gradients (null: keep the hooked one).
  void all_done(std::span<float* const> gradients);
  void abort(const std::string& reason);  // passes still waited for fail with `reason`
  void write_back_weights();              // the staged weights into the caller's tensors
  void stage_weights();                   // and back (before a checkpoint reads them)

  std::size_t layer_count() const override { return layers_.size(); }
  const runtime::LayerSpec& layer(std::size_t l) const override { return layers_.at(l); }
  linalg::MatrixView<float> weight_matrix(std::size_t l) override;
  linalg::ConstMatrixView<float> gradient_matrix(std::size_t l) const override;
  linalg::MatrixView<float> mutable_gradient_matrix(std::size_t l) override;
  void compute_gradient(std::size_t, optim::Step) override {}  // the caller's backward did it
  void forward_pass(std::size_t l, int m, optim::Step t) override;
  void backward_pass(std::size_t l, int m, optim::Step t) override;
  runtime::ModelPass pass() const noexcept override {
    return hooked_ ? runtime::ModelPass::per_micro_batch : runtime::ModelPass::whole_step;
  }
  // Hooked: the loop's forward and backward seconds of the step (begin_step to its last pass).
  std::optional<platform::Seconds> take_compute_seconds() override;

 private:
  // Waits until `done[l]` passes micro-batch m (or the step is aborted: throws).
  void wait_for(const std::vector<int>& done, std::size_t l, int m, const char* pass);

  std::vector<runtime::LayerSpec> layers_;
  std::vector<float*> weights_;
  std::vector<float*> gradients_;
  bool hooked_ = false;
  int micro_batches_ = 1;
  // Hooked steps: passes reported per layer, the staged weights, the loop's measured seconds.
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<int> forwards_done_;
  std::vector<int> backwards_done_;
  std::vector<std::vector<float>> staged_;
  std::string aborted_;
  double step_began_ = 0.0;
  double last_pass_end_ = 0.0;
};

}  // namespace asteria::python

#pragma once
// The memory a run's numerics hold, estimated from a model config's shapes before anything is
// allocated: the weights and their gradients, the step's activations, the optimizer's state and
// blocks. Closed forms (every decoder layer has layer 0's shapes), so even an absurd config
// (d_model: 4194304, layers: 10^8) costs nothing to check, where allocating it ends in
// std::bad_alloc, or the machine's OOM killer, after seconds or minutes of work.
#include <cstddef>
#include <optional>
#include <string>

#include "core/optim/hyperparameters.hpp"
#include "core/workload/model_config.hpp"

namespace asteria::workload {

// Bytes; doubles, so that sizes past 2^64 compare instead of wrapping around.
struct ModelFootprint {
  double weights = 0.0;
  double gradients = 0.0;
  double activations = 0.0;  // what the caller's model lays out for its batch (0: none)
  double optimizer_state = 0.0;

  double total() const noexcept { return weights + gradients + activations + optimizer_state; }
};

// The weights and gradients of `config` at `element_bytes` per value (the numerics' precision,
// e.g. sizeof(float), not the config's parameter_bytes); activations and state 0.
ModelFootprint weights_footprint(const ModelConfig& config, std::size_t element_bytes);

// Blocks and state bytes of `kind` over the config's weights, as optim::plan_blocks cuts them
// (matrices by hp.max_precond_dim for the matrix methods, AdamW for tensors of order <= 1) with
// optim::state_bytes per block: the figures optimizer_blocks() adds up, without listing blocks.
struct OptimizerStateSize {
  double blocks = 0.0;
  double bytes = 0.0;
};
OptimizerStateSize optimizer_state_size(const ModelConfig& config, optim::OptimizerKind kind,
                                        const optim::Hyperparameters& hp, std::size_t element_bytes);

// What the memory check names and compares against.
struct MemoryLimit {
  double bytes = 0.0;
  std::string what;  // "the machine's physical memory", "--host-budget"
};
struct FootprintNames {
  std::string model_source;  // the model config, in errors about its shape fields
  // Named when the activations dominate: {source, field, how the batch was chosen}, e.g.
  // {"command line", "--batch", "--batch, or the model config's micro_batch"}.
  std::string batch_source = "command line";
  std::string batch_field = "--batch";
  std::string batch_note = "--batch, or the model config's micro_batch";
  // What holds the footprint, for the message: "one rank's model", "4 ranks".
  std::string holder = "the run";
  // Ranks the footprint adds up (simulated units in one process): when one fits and all do not,
  // their count is named instead, with how it was chosen.
  double ranks = 1.0;
  std::string ranks_source = "command line";
  std::string ranks_field = "--units";
  std::string ranks_note = "--units or --nodes";
  std::string state_label = "optimizer state";  // what ModelFootprint::optimizer_state counts
  std::string state_note;                        // said after it, in parentheses (empty: nothing)
};

// Throws InputError when footprint.total() exceeds limit.bytes, saying the bytes needed (and of
// what), the bytes available and which input to change: the rank count when one rank would fit,
// the batch when activations dominate, otherwise the config's shape field whose weights
// dominate (d_model, mlp_hidden or vocab).
void check_footprint(const ModelFootprint& footprint, const ModelConfig& config, const MemoryLimit& limit,
                     const FootprintNames& names);

// "80.2 GB": bytes in powers of 1000, three significant digits.
std::string bytes_text(double bytes);

}  // namespace asteria::workload

#pragma once
// Memory checks made before a run allocates anything: a model config (or a --batch) that needs
// more than the machine holds is an InputError naming the field or the option, the bytes needed
// and the bytes available, where it used to end in std::bad_alloc or the OOM killer after
// seconds or minutes of work. Estimates: core/workload/model_footprint.hpp.
#include <cstddef>
#include <optional>

#include "core/optim/hyperparameters.hpp"
#include "core/platform/execution.hpp"
#include "core/workload/model_config.hpp"
#include "core/workload/model_footprint.hpp"

namespace asteria::cli {

// The memory this process may use: the physical memory (sysconf), or the cgroup's limit where
// one is set and lower.
workload::MemoryLimit machine_memory();

// What one of `ranks_on_node` processes that share a machine's memory may use: an equal share.
workload::MemoryLimit share_of_node(workload::MemoryLimit limit, int ranks_on_node);

// `asteria train`: one rank's model (weights, gradients and, when `activations_on_host`, the
// activations of config.micro_batch sequences of config.sequence_length) in float and, with an
// optimizer, its whole state in float: the driver builds every block's state in host memory
// before the store places it (data-parallel ranks too, sharded or not).
struct TrainOptimizer {
  optim::OptimizerKind kind = optim::OptimizerKind::soap;
  optim::Hyperparameters hp;
};
void check_train_memory(const workload::ModelConfig& config, bool activations_on_host,
                        const std::optional<TrainOptimizer>& optimizer,
                        const workload::MemoryLimit& limit = machine_memory());

// Simulated or synthetic runs of a model config's weights on `units` ranks in this process:
// with values (numerics values or refresh) each holds the weights, gradients and optimizer
// state in float (the state at most `state_budget` bytes per rank, what its store may hold);
// data-free, each holds kSimulatedBytesPerBlock of bookkeeping per optimizer block.
struct StackRun {
  int units = 1;
  platform::Numerics numerics = platform::Numerics::shapes;
  optim::OptimizerKind optimizer = optim::OptimizerKind::soap;
  optim::Hyperparameters hp;
  double state_budget = 0.0;  // bytes per rank; 0: no bound but the state's own size
  std::string model_source;   // --model as given
  std::string units_option = "--units";  // what chose `units`, named when one rank fits and all do not
  std::string units_note = "--units or --nodes";
};
void check_stack_memory(const workload::ModelConfig& config, const StackRun& run,
                        const workload::MemoryLimit& limit = machine_memory());

// What one optimizer block of a data-free simulation holds per simulated unit (its BlockSpec,
// the step plan's operations, the store's entry, the service's job records), a lower bound so
// that the check never refuses a run that would fit: asteria sim --model olmo-1b, peak RSS less
// the 0.3 GB of the tiny model: --max-precond-dim 256 (17960 blocks) 6.3 KB per block on one
// unit, 7.3 KB per block and unit on 4; --max-precond-dim 128 (71824 blocks) 23 KB per block.
inline constexpr double kSimulatedBytesPerBlock = 6e3;

}  // namespace asteria::cli

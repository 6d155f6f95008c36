#include "apps/asteria/memory_check.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "core/common/number_text.hpp"
#include "core/model/gpt.hpp"

namespace asteria::cli {
namespace {

// A cgroup's memory limit in bytes (v2 memory.max, else v1 memory.limit_in_bytes); 0: none.
double cgroup_limit() {
  for (const char* file : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream in(file);
    double bytes = 0.0;
    if (in >> bytes && bytes > 0.0) return bytes;  // "max" (no limit) does not read as a number
  }
  return 0.0;
}

}  // namespace

workload::MemoryLimit machine_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  const double physical =
      pages > 0 && page_size > 0 ? static_cast<double>(pages) * static_cast<double>(page_size) : 0.0;
  const double cgroup = cgroup_limit();
  if (cgroup > 0.0 && (physical == 0.0 || cgroup < physical)) return {cgroup, "this process's cgroup memory limit"};
  if (physical == 0.0) return {1e300, "unknown physical memory"};  // nothing to check against
  return {physical, "the machine's physical memory"};
}

workload::MemoryLimit share_of_node(workload::MemoryLimit limit, int ranks_on_node) {
  if (ranks_on_node <= 1) return limit;
  limit.bytes /= ranks_on_node;
  limit.what += ", shared by the " + std::to_string(ranks_on_node) + " ranks on this node";
  return limit;
}

void check_train_memory(const workload::ModelConfig& config, bool activations_on_host,
                        const std::optional<TrainOptimizer>& optimizer, const workload::MemoryLimit& limit) {
  workload::ModelFootprint f = workload::weights_footprint(config, sizeof(float));
  if (activations_on_host)
    f.activations = model::workspace_bytes(config, config.micro_batch, config.sequence_length, sizeof(float));
  workload::FootprintNames names;
  names.model_source = config.name;
  names.holder = "one rank's model";
  if (optimizer) {
    f.optimizer_state = workload::optimizer_state_size(config, optimizer->kind, optimizer->hp, sizeof(float)).bytes;
    names.state_note = "--optimizer " + std::string(optim::to_string(optimizer->kind)) +
                       (optimizer->kind == optim::OptimizerKind::adamw || optimizer->kind == optim::OptimizerKind::muon
                            ? std::string()
                            : ", --max-precond-dim " + std::to_string(optimizer->hp.max_precond_dim)) +
                       "; built in host memory before it is placed";
  }
  workload::check_footprint(f, config, limit, names);
}

void check_stack_memory(const workload::ModelConfig& config, const StackRun& run, const workload::MemoryLimit& limit) {
  const workload::OptimizerStateSize state =
      workload::optimizer_state_size(config, run.optimizer, run.hp, sizeof(float));
  const double units = std::max(1, run.units);
  workload::ModelFootprint f;
  if (run.numerics == platform::Numerics::shapes) {
    // Data-free: no tensor holds bytes, the bookkeeping per block does.
    f.optimizer_state = state.blocks * units * kSimulatedBytesPerBlock;
  } else {
    f = workload::weights_footprint(config, sizeof(float));
    f.optimizer_state = run.state_budget > 0.0 ? std::min(state.bytes, run.state_budget) : state.bytes;
    f.weights *= units;
    f.gradients *= units;
    f.optimizer_state *= units;
  }
  workload::FootprintNames names;
  names.model_source = run.model_source;
  names.holder = std::to_string(run.units) + (run.units == 1 ? " rank" : " ranks");
  names.ranks = units;
  names.ranks_field = run.units_option;
  names.ranks_note = run.units_note;
  if (run.numerics == platform::Numerics::shapes) {
    names.state_label = "bookkeeping of the optimizer blocks";
    names.state_note = "data-free: " + significant(state.blocks, 3) + " blocks per rank at " +
                       workload::bytes_text(kSimulatedBytesPerBlock) + " each; a larger --max-precond-dim makes fewer";
  }
  workload::check_footprint(f, config, limit, names);
}

}  // namespace asteria::cli

#include "core/workload/optimizer_blocks.hpp"

#include "core/common/error.hpp"
#include "core/optim/shape_model.hpp"
#include "core/optim/tensor_optimizer.hpp"

namespace asteria::workload {
namespace {

using optim::OptimizerKind;
using platform::Cost;

double flops_of(const std::vector<Cost>& pieces) {
  double total = 0.0;
  for (const Cost& c : pieces) total += c.flops;
  return total;
}

}  // namespace

std::size_t state_bytes(OptimizerKind kind, index rows, index cols, std::size_t element_bytes) {
  return optim::state_bytes(kind, optim::default_hyperparameters(kind), rows, cols, element_bytes);
}

std::vector<Cost> refresh_costs(OptimizerKind kind, const optim::Hyperparameters& hp, index rows, index cols,
                                std::size_t element_bytes, bool first) {
  return optim::refresh_cost(kind, hp, rows, cols, element_bytes, first);
}

std::vector<BlockSpec> optimizer_blocks(const WorkloadModel& model, OptimizerKind kind,
                                        const optim::Hyperparameters& hp, std::size_t element_bytes) {
  const std::string source = model.config.name + " optimizer";
  optim::validate(hp, source);
  if (element_bytes == 0) throw InputError(source, "element_bytes", "expected a positive size");
  std::vector<BlockSpec> blocks;
  for (std::size_t w = 0; w < model.weights.size(); ++w) {
    const WeightSpec& weight = model.weights[w];
    const std::vector<index> shape =
        weight.order <= 1 ? std::vector<index>{weight.elements()} : std::vector<index>{weight.rows, weight.cols};
    // The blocking optim::TensorOptimizer uses, so the two can never disagree.
    const std::vector<optim::BlockPlan> plan = optim::plan_blocks(kind, hp, shape);
    const bool vector = optim::tensor_view(kind, hp, shape).vector;
    for (std::size_t b = 0; b < plan.size(); ++b) {
      const optim::BlockRegion& r = plan[b].region;
      const OptimizerKind block_kind = plan[b].kind;
      const optim::Hyperparameters& block_hp = plan[b].hp;
      BlockSpec spec;
      spec.weight = w;
      spec.label = weight.name + " block " + std::to_string(b);
      spec.row0 = r.row0;
      spec.col0 = r.col0;
      spec.rows = r.rows;
      spec.cols = r.cols;
      spec.fallback = vector && block_kind == OptimizerKind::adamw;
      spec.kind = block_kind;
      spec.state_bytes = optim::state_bytes(block_kind, block_hp, r.rows, r.cols, element_bytes);
      spec.first_refresh = optim::refresh_cost(block_kind, block_hp, r.rows, r.cols, element_bytes, true);
      spec.warm_refresh = optim::refresh_cost(block_kind, block_hp, r.rows, r.cols, element_bytes, false);
      const optim::PhaseCosts phases = optim::phase_costs(block_kind, r.rows, r.cols, element_bytes);
      spec.accumulate = phases.accumulate;
      spec.apply = phases.apply;
      spec.publish = phases.publish;
      blocks.push_back(std::move(spec));
    }
  }
  return blocks;
}

std::vector<BlockSpec> optimizer_blocks(const WorkloadModel& model, OptimizerKind kind, index max_precond_dim) {
  optim::Hyperparameters hp = optim::default_hyperparameters(kind);
  hp.max_precond_dim = max_precond_dim;
  return optimizer_blocks(model, kind, hp, static_cast<std::size_t>(model.config.parameter_bytes));
}

OptimizerTotals summarize(const std::vector<BlockSpec>& blocks) {
  OptimizerTotals t;
  t.blocks = blocks.size();
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    const BlockSpec& spec = blocks[b];
    t.state_bytes += spec.state_bytes;
    (spec.fallback ? t.fallback_blocks : t.matrix_blocks) += 1;
    if (spec.state_bytes > t.largest_block_bytes) {
      t.largest_block = b;
      t.largest_block_bytes = spec.state_bytes;
    }
    t.first_refresh_flops += flops_of(spec.first_refresh);
    t.warm_refresh_flops += flops_of(spec.warm_refresh);
  }
  return t;
}

}  // namespace asteria::workload

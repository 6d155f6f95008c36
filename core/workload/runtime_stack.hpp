#pragma once
// A workload model as the step driver's stack: one driver layer per weight, in forward order,
// so each weight's optimizer hooks run as soon as its own gradient exists (as a framework's
// per-parameter backward hooks fire). A transformer layer's forward and backward cost is split
// over the weights it owns in proportion to their elements, so the step's total is unchanged.
// Also the driver's shape model: state bytes and refresh costs of a block from its shape alone.
#include "core/runtime/driver/driver_options.hpp"
#include "core/runtime/driver/synthetic_model.hpp"
#include "core/workload/workload_model.hpp"

namespace asteria::workload {

runtime::SyntheticModelSpec runtime_stack(const WorkloadModel& model, const runtime::GradientSpec& gradients = {});

// State bytes (workload::state_bytes), first and warm refresh costs (workload::refresh_costs)
// and the bytes a refresh job holds, for blocks whose values are `element_bytes` wide.
runtime::ShapeModel shape_model(std::size_t element_bytes);

// Bytes a refresh job of this block holds while in flight (snapshot and result), as the real
// jobs allocate them.
std::size_t refresh_job_bytes(optim::OptimizerKind kind, linalg::index rows, linalg::index cols,
                              std::size_t element_bytes);

}  // namespace asteria::workload

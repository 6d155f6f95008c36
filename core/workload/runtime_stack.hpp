#pragma once
// A workload model as the step driver's stack: one driver layer per weight, in forward order,
// so each weight's optimizer hooks run as soon as its own gradient exists (as a framework's
// per-parameter backward hooks fire). A transformer layer's forward and backward cost is split
// over the weights it owns in proportion to their elements, so the step's total is unchanged.
#include <cstddef>

#include "core/linalg/matrix.hpp"
#include "core/optim/hyperparameters.hpp"
#include "core/runtime/driver/synthetic_model.hpp"
#include "core/workload/workload_model.hpp"

namespace asteria::workload {

runtime::SyntheticModelSpec runtime_stack(const WorkloadModel& model, const runtime::GradientSpec& gradients = {});

// Bytes a refresh job of this block holds while in flight (snapshot and result), as the real
// jobs report them (optim::refresh_job_bytes under the default hyperparameters of `kind`).
std::size_t refresh_job_bytes(optim::OptimizerKind kind, linalg::index rows, linalg::index cols,
                              std::size_t element_bytes);

}  // namespace asteria::workload

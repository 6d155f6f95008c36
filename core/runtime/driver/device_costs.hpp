#pragma once
// The device cost of each optimizer's every-step phases now lives with the optimizers
// (optim::phase_costs in core/optim/shape_model.hpp, the single source shared with shape-only
// runs); these names forward to it so the driver's callers keep compiling. Using-declarations
// rather than wrapper functions: a wrapper of the same signature would make unqualified calls
// ambiguous, since argument-dependent lookup also finds optim::phase_costs.
#include "core/optim/shape_model.hpp"

namespace asteria::runtime {

using optim::PhaseCosts;
using optim::phase_costs;
using optim::combine;

}  // namespace asteria::runtime

#pragma once
// What the cheap, every-step phases of each optimizer cost on the device, per m x n block, so a
// device model (or a simulator) can charge time for them when their numerics are not run. The
// counts follow ALGORITHMS.md; they are models (dominant terms, symmetric products at half the
// cost of a general one), not measurements.
#include <cstddef>

#include "core/linalg/matrix.hpp"
#include "core/optim/hyperparameters.hpp"
#include "core/platform/cost.hpp"

namespace asteria::runtime {

struct PhaseCosts {
  platform::Cost accumulate;  // statistics update (AdamW: none, its moments move in apply)
  platform::Cost apply;       // the update with the active preconditioner
  platform::Cost publish;     // installing a finished refresh (copy; SOAP also rotates m)
};

PhaseCosts phase_costs(optim::OptimizerKind kind, linalg::index rows, linalg::index cols, std::size_t bytes_per_value);

// Sum of two costs; kind and dimension of the one with more flops (as a c·n³ model wants).
platform::Cost combine(const platform::Cost& a, const platform::Cost& b);

}  // namespace asteria::runtime

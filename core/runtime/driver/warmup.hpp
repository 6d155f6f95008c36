#pragma once
// How long a run's warm-up should be so that its measured steps are steady state.
#include "core/optim/hyperparameters.hpp"
#include "core/optim/block_optimizer.hpp"

namespace asteria::runtime {

// The first step whose publication point installs a refresh when refreshes are published S
// steps after the synchronous schedule (one gradient per step): from then on updates use a
// preconditioner, and warm-started refreshes (SOAP, KL-Shampoo) start from a real basis. Read off
// the optimizer's own schedule (optim::refresh_due_after, optim::activation_delay). 0 when the
// optimizer has no refresh within `horizon` steps.
optim::Step first_publication_step(optim::OptimizerKind kind, const optim::Hyperparameters& hp, int staleness,
                                   optim::Step horizon = 100000);

}  // namespace asteria::runtime

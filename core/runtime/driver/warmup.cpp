#include "core/runtime/driver/warmup.hpp"

#include "core/optim/shape_model.hpp"

namespace asteria::runtime {

optim::Step first_publication_step(optim::OptimizerKind kind, const optim::Hyperparameters& hp, int staleness,
                                   optim::Step horizon) {
  for (optim::Step t = 1; t <= horizon; ++t)
    if (optim::refresh_due_after(kind, hp, t)) return t + optim::activation_delay(kind) + staleness;
  return 0;
}

}  // namespace asteria::runtime

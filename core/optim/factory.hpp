#pragma once
// Builds the block optimizer of a kind for one block.
#include <memory>

#include "core/optim/block_optimizer.hpp"
#include "core/optim/hyperparameters.hpp"

namespace asteria::optim {

template <Real T>
std::unique_ptr<BlockOptimizer<T>> make_block_optimizer(OptimizerKind kind, const Hyperparameters& hp, index rows,
                                                        index cols);

// Hyperparameters of the AdamW that handles tensors of order <= 1 under `kind`
// (biases, norms): the optimizer's own betas and epsilon, except Shampoo, whose AdaGrad-style
// beta2 = 1 is not an Adam setting (its graft betas are used), and Muon (aux_adamw_lr).
Hyperparameters vector_fallback_hyperparameters(OptimizerKind kind, const Hyperparameters& hp);

}  // namespace asteria::optim

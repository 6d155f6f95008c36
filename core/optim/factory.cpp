#include "core/optim/factory.hpp"

#include "core/common/error.hpp"
#include "core/optim/adamw.hpp"
// factory-includes (one line per optimizer)
#include "core/optim/kl_shampoo.hpp"
#include "core/optim/soap.hpp"
#include "core/optim/muon.hpp"
#include "core/optim/shampoo.hpp"

namespace asteria::optim {

template <Real T>
std::unique_ptr<BlockOptimizer<T>> make_block_optimizer(OptimizerKind kind, const Hyperparameters& hp, index rows,
                                                        index cols) {
  switch (kind) {
    case OptimizerKind::adamw: return std::make_unique<AdamWBlock<T>>(hp, rows, cols);
    case OptimizerKind::shampoo: return std::make_unique<ShampooBlock<T>>(hp, rows, cols);
    case OptimizerKind::soap: return std::make_unique<SoapBlock<T>>(hp, rows, cols);
    case OptimizerKind::kl_shampoo: return std::make_unique<KlShampooBlock<T>>(hp, rows, cols);
    case OptimizerKind::muon: return std::make_unique<MuonBlock<T>>(hp, rows, cols);
  }
  throw Error("optimizer '" + std::string(to_string(kind)) + "' is not available in this build");
}

Hyperparameters vector_fallback_hyperparameters(OptimizerKind kind, const Hyperparameters& hp) {
  Hyperparameters fallback = hp;
  if (kind == OptimizerKind::shampoo) {
    fallback.beta2 = hp.graft_beta2;
    fallback.eps = hp.graft_eps;
  } else if (kind == OptimizerKind::muon) {
    fallback = default_hyperparameters(OptimizerKind::adamw);
    fallback.lr = hp.aux_adamw_lr;
    fallback.beta1 = 0.9;
    fallback.beta2 = 0.95;
    fallback.eps = 1e-10;
    fallback.weight_decay = hp.weight_decay;
  }
  return fallback;
}

template std::unique_ptr<BlockOptimizer<float>> make_block_optimizer<float>(OptimizerKind, const Hyperparameters&,
                                                                            index, index);
template std::unique_ptr<BlockOptimizer<double>> make_block_optimizer<double>(OptimizerKind, const Hyperparameters&,
                                                                              index, index);

}  // namespace asteria::optim

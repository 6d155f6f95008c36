#pragma once
// A step set-up shared by the drivers of one process that run the same model with the same
// options: a simulation's units, each a rank with its own driver. set_up_step walks every
// block's optimizer (its cut, state layout, refresh costs) and the owners of sharded blocks weigh
// every block; for OLMo-2-7B that is ~1,900 blocks per unit, paid once instead of once per unit
// (at 1,024 simulated GPUs most of the start-up), and held once (a copy per unit took 2 GB). The
// first driver's set-up is kept; every later one checks that its inputs (the layers, the
// optimizer kind and the set-up's options) are the first's and shares it (std::logic_error otherwise: sharing drivers of unlike models is a
// programming error). The drivers' hyperparameters and schedule come from the one DriverOptions
// that holds this object, so they are alike by construction.
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "core/optim/hyperparameters.hpp"
#include "core/runtime/driver/step_setup.hpp"
#include "core/runtime/driver/training_model.hpp"

namespace asteria::runtime {

class SharedStepSetup {
 public:
  // set_up_step(layers, kind, hp, options), computed by the first caller.
  std::shared_ptr<const StepSetup> get(std::span<const LayerSpec> layers, optim::OptimizerKind kind,
                                       const optim::Hyperparameters& hp, const StepSetupOptions& options);
  // The set-up's StepSetup::block_owners(ranks), computed once per rank count.
  const std::vector<int>& block_owners(int ranks);

 private:
  std::shared_ptr<const StepSetup> setup_;
  std::vector<LayerSpec> layers_;
  optim::OptimizerKind kind_{};
  StepSetupOptions options_;
  std::map<int, std::vector<int>> owners_;
};

}  // namespace asteria::runtime

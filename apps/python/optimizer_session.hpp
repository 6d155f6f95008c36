#pragma once
// One optimizer of the runtime over a caller's parameters: the settings of `asteria train` (the
// run schema's, read from its option words, so a setting means the same as on the command line
// and a bad one is an InputError naming it), the real backend (host workers, tiers, NVMe), and a
// step driver whose model is the caller's memory (external_model.hpp). Each step() runs the
// driver's step with the gradients the caller's backward left in place and writes the new
// parameters where they are.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "apps/asteria/run_platform.hpp"
#include "apps/python/external_model.hpp"
#include "core/runtime/driver/step_driver.hpp"

namespace asteria::python {

class OptimizerSession {
 public:
  // `arguments`: option words as asteria train takes them ("--optimizer", "soap", "--lr", "3e-3").
  OptimizerSession(const std::vector<std::string>& arguments, const std::vector<ParameterShape>& parameters);
  ~OptimizerSession();
  OptimizerSession(const OptimizerSession&) = delete;
  OptimizerSession& operator=(const OptimizerSession&) = delete;

  // One step over these tensors (element_count(l) floats each, contiguous, in parameter order).
  runtime::StepRecord step(std::span<float* const> weights, std::span<float* const> gradients);
  std::size_t element_count(std::size_t l) const { return model_.element_count(l); }
  std::size_t parameter_count() const { return model_.layer_count(); }
  std::size_t block_count() const { return driver_->block_count(); }
  // "soap: 12 blocks, placement tiered, S = 5, 4 host workers; real backend ..."
  const std::string& description() const noexcept { return description_; }
  void finish();  // waits for work in flight (the destructor does too)

  // The whole optimizer (weights, every block's state wherever it rests, refreshes in flight
  // finished and saved with their results) as a checkpoint in `dir` (core/checkpoint's format),
  // between steps; and back, on a session of the same parameters, optimizer and settings that has
  // run no step, into these tensors' memory (InputError naming the checkpoint and what differs).
  void save(const std::string& dir, std::span<float* const> weights, std::span<float* const> gradients);
  void restore(const std::string& dir, std::span<float* const> weights, std::span<float* const> gradients);
  std::int64_t steps_done() const noexcept { return driver_->steps_done(); }

 private:
  cli::RunConfig spec_;
  ExternalModel model_;
  std::unique_ptr<cli::RunPlatform> platform_;
  std::unique_ptr<runtime::StepDriver<float>> driver_;
  std::string description_;
};

}  // namespace asteria::python

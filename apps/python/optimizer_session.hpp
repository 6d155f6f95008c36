#pragma once
// One optimizer of the runtime over a caller's parameters: the settings of `asteria train` (the
// run schema's, read from its option words, so a setting means the same as on the command line
// and a bad one is an InputError naming it), the real backend (host workers, tiers, NVMe), and a
// step driver whose model is the caller's memory (external_model.hpp). Each step() runs the
// driver's step with the gradients the caller's backward left in place and writes the new
// parameters where they are; a hooked session's step runs alongside the caller's forward and
// backward, from begin_step() to step(), driven by the passes the caller's hooks report. With
// the trace settings (trace, out) the run's native trace (apps/asteria/run_trace.hpp) and its
// replay metadata are written by finish().
#include <cstdint>
#include <future>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "apps/asteria/run_platform.hpp"
#include "apps/asteria/run_trace.hpp"
#include "apps/python/external_model.hpp"
#include "core/runtime/driver/step_driver.hpp"

namespace asteria::python {

class OptimizerSession {
 public:
  // `arguments`: option words as asteria train takes them ("--optimizer", "soap", "--lr", "3e-3").
  // `tokens_per_step` > 0: the layers declare their passes' device costs (external_model.hpp).
  // `hooked`: the caller reports its passes (begin_step, forward_done, backward_done).
  OptimizerSession(const std::vector<std::string>& arguments, const std::vector<ParameterShape>& parameters,
                   double tokens_per_step = 0.0, bool hooked = false);
  ~OptimizerSession();
  OptimizerSession(const OptimizerSession&) = delete;
  OptimizerSession& operator=(const OptimizerSession&) = delete;

  // One step over these tensors (element_count(l) floats each, contiguous, in parameter order).
  // Hooked: ends the step begin_step() started (or runs one), with these gradients for the
  // passes no hook reported (null: the hooked one), and hands the new weights to the tensors.
  runtime::StepRecord step(std::span<float* const> weights, std::span<float* const> gradients);

  // Hooked sessions, from the caller's training loop (its thread):
  void begin_step(std::span<float* const> weights);  // the loop's first forward of a step
  bool step_in_flight() const noexcept { return in_flight_.valid(); }
  void forward_done(std::size_t parameter, int micro_batch) { model_.forward_done(parameter, micro_batch); }
  void backward_done(std::size_t parameter, int micro_batch, float* gradient) {
    model_.backward_done(parameter, micro_batch, gradient);
  }
  // Abandons a step in flight (the loop failed in its forward or backward): the session is
  // unusable afterwards (the step's optimizer work is half done).
  void abandon_step(const std::string& reason);
  bool hooked() const noexcept { return model_.hooked(); }
  int micro_batches() const noexcept { return spec_.micro_batches; }
  std::size_t element_count(std::size_t l) const { return model_.element_count(l); }
  std::size_t parameter_count() const { return model_.layer_count(); }
  const std::string& parameter_name(std::size_t l) const { return model_.layer(l).name; }
  std::size_t block_count() const { return driver_->block_count(); }
  // "soap: 12 blocks, placement tiered, S = 5, 4 host workers; real backend ..."
  const std::string& description() const noexcept { return description_; }
  void finish();  // waits for work in flight (the destructor does too); writes the trace

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
  std::unique_ptr<cli::TraceSession> trace_;
  std::unique_ptr<cli::RunPlatform> platform_;
  std::unique_ptr<runtime::StepDriver<float>> driver_;
  plan::NumericsSite numerics_site_ = plan::NumericsSite::own_launch;
  std::future<runtime::StepRecord> in_flight_;  // a hooked step, run on its own thread
  std::string broken_;                           // why the session cannot step any more
  bool finished_ = false;
  std::string description_;
};

}  // namespace asteria::python

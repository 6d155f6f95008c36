#pragma once
// A data-true simulation that trains (asteria sim --gradients corpus): every simulated unit holds
// a replica of a byte-level GPT and computes its gradients with the model's own forward and
// backward on its slice of the global batch, the step's plan averages them over the units, and
// the run reports the loss and validation loss against simulated time: the loss curve a real run
// of the same settings gives (bit for bit under deterministic publication, whose results depend
// on S only), with the simulated machine's clock beside it. Under opportunistic publication the
// refreshes the loss sees follow the simulated machine's timing.
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "apps/asteria/run_config_options.hpp"
#include "apps/asteria/run_report.hpp"
#include "apps/asteria/train_models.hpp"
#include "core/data/batch_loader.hpp"
#include "core/data/corpus.hpp"
#include "core/runtime/driver/step_driver.hpp"
#include "core/workload/model_config.hpp"

namespace asteria::cli {

class SimTraining {
 public:
  // `config`: the model as each unit runs it (micro_batch sequences a unit); `total_steps` warm-up
  // included; the spec was validated (--gradients corpus with --numerics values). Checks the model
  // (InputError naming its vocab: a byte-level config), the evaluation settings and this machine's
  // memory for `units` replicas, reads the corpus
  // (files skipped are told on `warnings`, may be null) and builds every unit's model.
  SimTraining(const RunConfig& spec, const workload::ModelConfig& config, int units, int total_steps,
              std::ostream* warnings);
  ~SimTraining();
  SimTraining(const SimTraining&) = delete;
  SimTraining& operator=(const SimTraining&) = delete;

  runtime::TrainingModel<float>& model(int unit);
  // Before step t on `unit`: the unit's slice of step t's global batch.
  void before_step(int unit, int t);
  // After step t on `unit`: keeps its loss (a non-finite one is a NumericalError naming the step);
  // when a validation is due every unit gathers its weights (fsdp: a collective) and unit 0
  // evaluates. Returns unit 0's progress text ("loss 2.31, validation 2.40").
  std::string after_step(int unit, int t, runtime::StepDriver<float>& driver);
  // steps.csv's loss, validation_loss and tokens_per_s columns (the loss: the mean over the
  // units, the global batch's), and the summary's corpus and loss keys.
  void report(RunReport& out) const;

 private:
  struct Unit;
  const RunConfig& spec_;
  int units_;
  int total_steps_;
  int rank_batch_;
  int global_batch_;
  int sequence_length_;
  int micro_batched_;  // 0: the whole batch at the first backward; k: per micro-batch passes
  data::Corpus corpus_;
  data::BatchLoader validation_loader_;
  std::vector<std::unique_ptr<Unit>> units_state_;
  std::vector<std::vector<double>> losses_;  // [step - 1][unit]
  std::vector<double> validation_;           // [step - 1], NaN where none
};

}  // namespace asteria::cli

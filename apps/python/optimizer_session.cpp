#include "apps/python/optimizer_session.hpp"

#include <boost/program_options.hpp>

#include <limits>

#include "apps/asteria/output_dir.hpp"
#include "apps/asteria/replay_metadata.hpp"
#include "apps/asteria/run_config_options.hpp"
#include "core/checkpoint/checkpoint_reader.hpp"
#include "core/checkpoint/checkpoint_writer.hpp"
#include "core/common/error.hpp"
#include "core/run/driver_settings.hpp"

namespace asteria::python {

namespace po = boost::program_options;

namespace {
cli::RunConfig read_settings(const std::vector<std::string>& arguments) {
  po::variables_map values;
  try {
    po::store(po::command_line_parser(arguments).options(cli::run_config_options(cli::RunVerb::train)).run(), values);
    po::notify(values);
  } catch (const po::error& e) {
    throw InputError("asteria.torch", "settings", e.what());
  }
  cli::RunConfig spec = cli::read_run_config(cli::RunVerb::train, values);
  spec.progress = false;
  cli::validate(spec);
  // The caller runs the forward and backward: every update must be done when step() returns.
  if (spec.defer_fraction > 0.0)
    throw InputError("asteria.torch", "defer_fraction",
                     "0 (a deferred update would run inside the next step, after the caller's forward)");
  if (spec.schedule != plan::ScheduleOrder::horizontal)
    throw InputError("asteria.torch", "schedule", "horizontal (the caller's training loop runs the forward and backward)");
  if (spec.trace.enabled && !spec.out)
    throw InputError("asteria.torch", "out", "a directory for the trace (trace=True writes trace.csv and trace.json)");
  if (spec.out) cli::prepare_output(*spec.out, spec.overwrite, "asteria.torch");
  return spec;
}
}  // namespace

OptimizerSession::OptimizerSession(const std::vector<std::string>& arguments,
                                   const std::vector<ParameterShape>& parameters, double tokens_per_step, bool hooked)
    : spec_(read_settings(arguments)), model_(parameters, tokens_per_step, hooked, spec_.micro_batches) {
  // The loop's length is the caller's: the trace's window is what fits its byte bound.
  const int warmup = spec_.warmup_steps.value_or(0);
  trace_ = std::make_unique<cli::TraceSession>(spec_, 1, warmup + 1, std::numeric_limits<std::int32_t>::max());
  platform_ = std::make_unique<cli::RunPlatform>(spec_, cli::DeviceTime{}, trace_->sink(0));
  // Measured time: the caller's forward and backward are the model's to time, not modelled.
  runtime::DriverOptions options = run::driver_options(spec_, warmup, [](const platform::Cost&) { return 0.0; });
  numerics_site_ = options.numerics_site;
  driver_ = std::make_unique<runtime::StepDriver<float>>(platform_->get(), model_, spec_.optimizer, spec_.hp, options);
  trace_->set_plan(0, driver_->plan(), numerics_site_);
  description_ = std::string(optim::to_string(spec_.optimizer)) + ": " + std::to_string(driver_->block_count()) +
                 " blocks over " + std::to_string(model_.layer_count()) + " parameters; optimizer on the " +
                 platform_->description();
}

OptimizerSession::~OptimizerSession() {
  try {
    if (in_flight_.valid()) abandon_step("the optimizer was closed during a step");
    finish();
  } catch (...) {  // a failure was reported by the step that met it
  }
}

void OptimizerSession::begin_step(std::span<float* const> weights) {
  if (!broken_.empty()) throw std::logic_error("asteria.torch: " + broken_);
  if (!model_.hooked()) throw std::logic_error("asteria.torch: begin_step on a session without hooks");
  if (in_flight_.valid()) throw std::logic_error("asteria.torch: a step is in flight already");
  model_.begin_step(weights);
  in_flight_ = std::async(std::launch::async, [this] { return driver_->run_step(); });
}

runtime::StepRecord OptimizerSession::step(std::span<float* const> weights, std::span<float* const> gradients) {
  if (!broken_.empty()) throw std::logic_error("asteria.torch: " + broken_);
  if (!model_.hooked()) {
    model_.bind(weights, gradients);
    return driver_->run_step();
  }
  if (!in_flight_.valid()) begin_step(weights);
  model_.all_done(gradients);
  runtime::StepRecord record;
  try {
    record = in_flight_.get();
  } catch (...) {
    broken_ = "a step failed; make a new optimizer (or load a state_dict into one)";
    throw;
  }
  model_.write_back_weights();
  return record;
}

void OptimizerSession::abandon_step(const std::string& reason) {
  if (!in_flight_.valid()) return;
  model_.abort(reason);
  broken_ = "a step was abandoned (" + reason + "); make a new optimizer (or load a state_dict into one)";
  try {
    in_flight_.get();
  } catch (...) {  // the abandoned passes' failure, expected
  }
}

void OptimizerSession::finish() {
  if (finished_ || !driver_) return;
  finished_ = true;
  driver_->finish();
  if (!trace_->enabled() || driver_->steps_done() == 0) return;
  std::vector<runtime::LayerSpec> layers;
  for (std::size_t l = 0; l < model_.layer_count(); ++l) layers.push_back(model_.layer(l));
  // The run as it went: the loop's steps (a replay runs as many).
  cli::RunConfig ran = spec_;
  const int warmup = spec_.warmup_steps.value_or(0);
  ran.steps = std::max<int>(1, static_cast<int>(driver_->steps_done()) - warmup);
  const cli::TraceOrigin origin{"train", "pytorch", 1, {{"device", "cpu"}, {"front", "asteria.torch"}}};
  trace_->write(*spec_.out, cli::replay_metadata(ran, origin, layers, platform_->host_workers(), warmup, 0,
                                                 /*state_budgets=*/true, model_.pass()));
}

void OptimizerSession::save(const std::string& dir, std::span<float* const> weights,
                            std::span<float* const> gradients) {
  model_.bind(weights, gradients);
  if (model_.hooked()) model_.stage_weights();  // the driver reads the staged copy
  checkpoint::CheckpointWriter writer(dir, driver_->steps_done(),
                                      {{"verb", "asteria.torch"}, {"optimizer", std::string(optim::to_string(spec_.optimizer))}});
  driver_->save(writer);
  writer.commit();
}

void OptimizerSession::restore(const std::string& dir, std::span<float* const> weights,
                               std::span<float* const> gradients) {
  const checkpoint::CheckpointReader reader = checkpoint::CheckpointReader::open_latest(dir);
  const std::string source = reader.slot().string();
  if (!reader.has_meta("verb") || reader.meta("verb") != "asteria.torch")
    throw InputError(source, "meta.verb", "a state_dict of asteria.torch");
  if (reader.meta("optimizer") != optim::to_string(spec_.optimizer))
    throw InputError(source, "meta.optimizer",
                     "the state of " + std::string(optim::to_string(spec_.optimizer)) + ", found " +
                         reader.meta("optimizer") + "'s");
  model_.bind(weights, gradients);
  driver_->restore(reader);
  if (model_.hooked()) model_.write_back_weights();  // restored into the staged copy
}

}  // namespace asteria::python

#include "apps/python/optimizer_session.hpp"

#include <boost/program_options.hpp>

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
  if (spec.schedule != plan::ScheduleOrder::horizontal || spec.micro_batches != 1)
    throw InputError("asteria.torch", "schedule",
                     "horizontal with one micro-batch (the caller's training loop runs the forward and backward)");
  return spec;
}
}  // namespace

OptimizerSession::OptimizerSession(const std::vector<std::string>& arguments,
                                   const std::vector<ParameterShape>& parameters)
    : spec_(read_settings(arguments)), model_(parameters) {
  platform_ = std::make_unique<cli::RunPlatform>(spec_, cli::DeviceTime{}, nullptr);
  // Measured time: the caller's forward and backward are not the driver's to time.
  runtime::DriverOptions options = run::driver_options(spec_, 0, [](const platform::Cost&) { return 0.0; });
  driver_ = std::make_unique<runtime::StepDriver<float>>(platform_->get(), model_, spec_.optimizer, spec_.hp, options);
  description_ = std::string(optim::to_string(spec_.optimizer)) + ": " + std::to_string(driver_->block_count()) +
                 " blocks over " + std::to_string(model_.layer_count()) + " parameters; optimizer on the " +
                 platform_->description();
}

OptimizerSession::~OptimizerSession() {
  try {
    finish();
  } catch (...) {  // a failure was reported by the step that met it
  }
}

runtime::StepRecord OptimizerSession::step(std::span<float* const> weights, std::span<float* const> gradients) {
  model_.bind(weights, gradients);
  return driver_->run_step();
}

void OptimizerSession::finish() {
  if (driver_) driver_->finish();
}

void OptimizerSession::save(const std::string& dir, std::span<float* const> weights,
                            std::span<float* const> gradients) {
  model_.bind(weights, gradients);
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
}

}  // namespace asteria::python

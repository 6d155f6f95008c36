#pragma once
// The command-line form of the run configuration (core/run/run_config.hpp) for synth, sim and
// train: the options, their --help and their reading are generated from the one settings list
// (core/run/run_schema.hpp), so a flag means the same thing in every verb that takes it; a plan
// file's settings (--placement-file) apply here; validate() checks the settings together and
// rejects a combination a verb cannot run with a message that names the option.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "apps/asteria/options.hpp"
#include "core/run/driver_settings.hpp"
#include "core/run/run_config.hpp"
#include "core/run/setting_codecs.hpp"
#include "core/optim/hyperparameters.hpp"
#include "core/plan/schedule.hpp"
#include "core/platform/execution.hpp"
#include "core/runtime/driver/driver_options.hpp"
#include "core/runtime/service/service_options.hpp"
#include "core/runtime/store/store_options.hpp"

namespace asteria::cli {

using run::RunConfig;
using run::RunVerb;
using run::TraceSettings;
using run::default_run_config;
using run::to_string;

// The run options `verb` takes (the shared ones, then its own), with its defaults shown, plus the
// hyperparameter options; nullopt: every verb's (what a replay reads from a trace).
po::options_description run_config_options(std::optional<RunVerb> verb);
// Reads the run options (and hyperparameters) from `values` into a spec from `verb`'s defaults;
// `every_verbs_settings`: other verbs' settings too (a replay reads a trace of any verb into a
// simulation). validate() is called by the verbs once their own settings are read too.
RunConfig read_run_config(RunVerb verb, const po::variables_map& values, bool every_verbs_settings = false);

// The one validation of a spec: every value in its domain, and the settings valid together
// (numerics with time, time with the verb, placement with an NVMe directory, ...). Throws
// InputError naming the option.
void validate(const RunConfig& spec);

// Warns on `err` when the run's --placement-file was made for another machine than its --hw:
// allowed (a what-if), never silent.
void warn_if_planned_elsewhere(const RunConfig& spec, std::string_view verb, std::ostream& err);

// The warm-up and the step driver's options a spec implies (core/run/driver_settings.hpp).
using run::driver_options;
using run::warmup_steps_of;

using run::codec::parse_step_range;

}  // namespace asteria::cli

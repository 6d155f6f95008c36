#pragma once
// A run configuration as command-line arguments, from the schema (run_schema.hpp): what a
// trace records so that its replay rebuilds the run, every recorded setting included.
#include <string>
#include <utility>
#include <vector>

#include "core/run/run_config.hpp"

namespace asteria::run {

// Every recorded setting of `config`'s verb with a value, hyperparameters included:
// "--optimizer", "soap", ..., flags bare when set. Reading them back (with the options of any verb that takes
// them) gives `config`'s recorded settings.
std::vector<std::string> recorded_arguments(const RunConfig& config);

// Every setting `verb` takes with its value as text (flags "true" or "false"; optional settings
// not set are left out), in the schema's order: what summary.json reports of the run.
std::vector<std::pair<std::string, std::string>> setting_values(const RunConfig& config);

// The settings a plan file records (Setting::planned) with their values, in the schema's order:
// ("schedule", "vertical"), ("micro-batches", "4"), ...; switches "true" or "false".
std::vector<std::pair<std::string, std::string>> planned_values(const RunConfig& config);

}  // namespace asteria::run

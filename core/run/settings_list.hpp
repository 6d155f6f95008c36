#pragma once
// The settings of run_schema.hpp as a list, for the rules that ask about them by name: which a
// resumed run may change, which data-parallel ranks may differ in, which a trace records.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/run/run_config.hpp"
#include "core/run/setting.hpp"

namespace asteria::run {

// Every setting, the run's then the hyperparameters, in the schema's order.
std::vector<Setting> all_settings();

// The setting called `name` ("steps"); nullopt when the schema has none.
std::optional<Setting> find_setting(std::string_view name);

// `text` given to the setting `name`, read by its codec and written back in its one form (a
// switch: true or false); InputError("command line", "--name", expectation) when it does not read,
// nullopt when the schema has no such setting.
std::optional<std::string> normalized_value(std::string_view name, const std::string& text);

// Every value of `config` within its setting's range, as its codec reads it back (a configuration
// built in code, or changed after reading, meets what the command line would have required);
// InputError("command line", "--name", expectation) for the first that is not.
void check_ranges(const RunConfig& config);

}  // namespace asteria::run

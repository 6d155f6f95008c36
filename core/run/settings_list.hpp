#pragma once
// The settings of run_schema.hpp as a list, for the rules that ask about them by name: which a
// resumed run may change, which data-parallel ranks may differ in, which a trace records.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

}  // namespace asteria::run

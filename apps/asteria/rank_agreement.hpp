#pragma once
// Data-parallel ranks agree on their settings or stop, all of them, with one message: ranks
// started with different options (a mistyped MPMD line, a job script that varies by rank) would
// otherwise enter different collectives and wait on each other forever. At start-up every rank
// gives the effective value of every option of its verb (given or defaulted, parsed, so "10" and
// "010" agree), less those a rank may set for itself; the ranks exchange a digest of each, and
// where one differs they exchange its values and every rank throws the same InputError naming
// the option and which ranks hold which value. After restoring checkpoints they check the same
// way that all restored the same step.
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <boost/program_options.hpp>

#include "apps/asteria/train_ranks.hpp"

namespace asteria::cli {

struct SettingValue {
  std::string option;  // "steps"
  std::string value;   // its effective value as text; "(unset)" when neither given nor defaulted
};

// The effective value of every option in `options`, in their order, less the `per_rank` ones.
std::vector<SettingValue> effective_settings(const boost::program_options::variables_map& values,
                                             const boost::program_options::options_description& options,
                                             std::span<const std::string_view> per_rank);

// Every rank calls it with its settings (a no-op for one rank). Throws InputError("command line",
// "--OPTION", ...) on every rank when the ranks differ, naming each distinct value and its ranks.
void require_same_settings(const RankPlace& place, std::span<const SettingValue> settings);

// Every rank calls it with its value of `what` (e.g. the step its checkpoint restored). Throws
// InputError(source, field, ...) on every rank when they differ, naming each rank's value.
void require_same_value(const RankPlace& place, std::int64_t value, const std::string& source,
                        const std::string& field, const std::string& what);

}  // namespace asteria::cli

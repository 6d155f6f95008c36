#pragma once
// One setting of a run: what it is called and what it means (Setting), and how its value reads
// from and writes to text (Codec). run_schema.hpp lists every setting once; visitors turn that
// list into command-line options, a reader, the arguments a trace records, the resume rule and
// the data-parallel agreement.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/run/run_config.hpp"

namespace asteria::run {

using Verbs = std::uint8_t;  // bit k: RunVerb k
constexpr Verbs verb_bit(RunVerb verb) { return static_cast<Verbs>(1u << static_cast<unsigned>(verb)); }
constexpr Verbs kEveryVerb = verb_bit(RunVerb::synth) | verb_bit(RunVerb::sim) | verb_bit(RunVerb::train);
// The verbs whose tier budgets come from options (the simulator takes them from the profile).
constexpr Verbs kBudgetVerbs = verb_bit(RunVerb::synth) | verb_bit(RunVerb::train);

struct Setting {
  std::string_view name;        // the option without its dashes: "staleness" (--staleness)
  std::string_view value_name;  // "S" in --help; empty for a flag
  std::string_view help;
  Verbs verbs = kEveryVerb;     // the verbs that take it
  // The run's timing or plan depends on it: a trace records it, and a replay gets it back.
  bool recorded = true;
  // A resumed run may give it another value than its checkpoint's (--steps, --out, ...).
  bool resumable = false;
  // Data-parallel ranks may differ in it (a node's own NVMe directory); all others must agree.
  bool per_rank = false;
  // A hyperparameter: bit k set when OptimizerKind k reads it (0xff: not a hyperparameter).
  std::uint8_t optimizers = 0xff;
  // Where the run's files go or what its console shows (--out, --trace, --no-progress): nothing
  // of the run itself, so a study, which decides these for each of its runs, takes none of them.
  bool output = false;
  // Its value names a file (or a shipped name): given in a study file, a relative path resolves
  // against that file's directory.
  bool file_value = false;
  // A plan file (asteria plan) records it: its placement and prediction hold for this value (the
  // schedule, the blocks' shapes), so a run with the plan takes it unless given the same.
  bool planned = false;

  bool taken_by(RunVerb verb) const noexcept { return (verbs & verb_bit(verb)) != 0; }
};

// How one type of value reads from and writes to text. parse throws
// InputError("command line", option, expectation) for text it does not take; format gives the
// text that parses back to the value (nullopt: an optional that is not set).
template <class T>
struct Codec {
  std::function<T(const std::string& text, const std::string& option)> parse;
  std::function<std::optional<std::string>(const T&)> format;
};

}  // namespace asteria::run

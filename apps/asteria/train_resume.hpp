#pragma once
// `asteria train --resume DIR`: the run continues with the settings saved in its checkpoint.
// The options that only say where and how long it goes on and how it reports may change (the
// settings marked resumable in core/run/run_schema.hpp); every other option given again must
// have the checkpoint's value, so that
// re-running the same command line with --resume added (as a requeued job does) just works.
#include <array>
#include <string>
#include <string_view>

#include <boost/program_options.hpp>

#include "apps/asteria/verbs.hpp"

namespace asteria::cli {

// Whether a resumed run may give option `name` a new value.
bool resumable(std::string_view name);

// The arguments of the resumed run: `saved` (the checkpoint's), less the overridable options
// that `given` sets again and --overwrite, then those of `given`. Throws InputError naming `checkpoint` and the option when `given` sets
// another option to a value other than the checkpoint's.
Args resumed_arguments(const Args& saved, const Args& given, const boost::program_options::options_description& options,
                       const std::string& checkpoint);

// What a checkpoint saves of the command line: `args` without --resume.
Args arguments_to_save(const Args& args, const boost::program_options::options_description& options);

// JSON text of an argument list, and back (InputError naming `source` for anything else).
std::string arguments_text(const Args& args);
Args parse_arguments_text(const std::string& text, const std::string& source);

}  // namespace asteria::cli

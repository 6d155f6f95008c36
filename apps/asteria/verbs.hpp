#pragma once
// The verbs of the `asteria` command line. Each verb lives in its own file, parses its own
// options (Boost.Program_options, long options in kebab-case, --help) and returns an exit
// code; errors are reported on `err`, never by exiting the process.
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace asteria::cli {

using Args = std::vector<std::string>;  // the verb's arguments, without the program and verb names
using VerbMain = int (*)(const Args& args, std::ostream& out, std::ostream& err);

struct Verb {
  std::string_view name;
  std::string_view summary;
  VerbMain main;
};

std::span<const Verb> verbs();

// Dispatches argv-style arguments (without the program name) to a verb.
int run(const Args& args, std::ostream& out, std::ostream& err);

int optim_main(const Args& args, std::ostream& out, std::ostream& err);
int compare_main(const Args& args, std::ostream& out, std::ostream& err);
int demo_main(const Args& args, std::ostream& out, std::ostream& err);
int synth_main(const Args& args, std::ostream& out, std::ostream& err);
int calibrate_main(const Args& args, std::ostream& out, std::ostream& err);
int sim_main(const Args& args, std::ostream& out, std::ostream& err);
int plan_main(const Args& args, std::ostream& out, std::ostream& err);
int replay_main(const Args& args, std::ostream& out, std::ostream& err);
int collective_main(const Args& args, std::ostream& out, std::ostream& err);
int study_main(const Args& args, std::ostream& out, std::ostream& err);
int train_main(const Args& args, std::ostream& out, std::ostream& err);

}  // namespace asteria::cli

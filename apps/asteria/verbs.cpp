#include "apps/asteria/verbs.hpp"

#include <array>
#include <exception>
#include <ostream>

#include "core/common/error.hpp"

namespace asteria::cli {
namespace {

constexpr std::array kVerbs = {
    Verb{"optim", "run one optimizer over a gradient sequence from .npy files (conformance)", &optim_main},
    Verb{"compare", "compare every optimizer on an ill-conditioned problem", &compare_main},
    Verb{"demo", "the main job on embedded defaults", &demo_main},
    Verb{"synth", "synthetic training steps through the runtime: step times, visible optimizer time", &synth_main},
    Verb{"calibrate", "measure this machine and write a hardware profile", &calibrate_main},
    Verb{"sim", "the runtime on a simulated machine (SimGrid, hardware profile, model config)", &sim_main},
    Verb{"plan", "choose each optimizer block's tier and update site; predict, write and check the plan", &plan_main},
    Verb{"replay", "a recorded run rebuilt from its trace and predicted on a simulated machine", &replay_main},
    Verb{"collective", "one collective's time and bus bandwidth by size on a simulated machine (nccl-tests)",
         &collective_main},
    Verb{"study", "a what-if grid of sim runs (hardware x model x optimizer x placement x staleness)", &study_main},
    Verb{"train", "a GPT-style language model trained through the runtime on a text corpus", &train_main},
};

void usage(std::ostream& out) {
  out << "usage: asteria <verb> [options]   (asteria <verb> --help for a verb's options)\n\nverbs:\n";
  for (const Verb& v : kVerbs) out << "  " << v.name << std::string(12 - v.name.size(), ' ') << v.summary << '\n';
}

}  // namespace

std::span<const Verb> verbs() { return kVerbs; }

int run(const Args& args, std::ostream& out, std::ostream& err) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    usage(args.empty() ? err : out);
    return args.empty() ? 2 : 0;
  }
  for (const Verb& v : kVerbs) {
    if (args[0] != v.name) continue;
    const Args rest(args.begin() + 1, args.end());
    try {
      return v.main(rest, out, err);
    } catch (const Error& e) {
      err << "asteria " << v.name << ": error: " << e.what() << '\n';
      return 1;
    } catch (const std::exception& e) {
      err << "asteria " << v.name << ": internal error: " << e.what() << '\n';
      return 3;
    }
  }
  err << "asteria: unknown verb '" << args[0] << "'\n";
  usage(err);
  return 2;
}

}  // namespace asteria::cli

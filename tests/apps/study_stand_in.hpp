#pragma once
// A stand-in for `asteria sim` in the study tests: a shell script that records its arguments,
// writes a summary.json and steps.csv from them, fails for one model, and records how many runs
// were alive at once; and the temp directory that holds it, its models and a study file.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/io/temp_dir.hpp"

namespace asteria::cli {

using asteria::testing::TempDir;

inline std::string read_all(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline void write(const std::filesystem::path& file, const std::string& text) { std::ofstream(file) << text; }

// The stand-in `asteria`. Model "crash" (a file crash.yaml) fails with exit code 1; model "big"
// does not fit; every other run fits with p50 = 0.25 s and max staleness = its --staleness. With SYNC/overlap present
// each run waits (up to 5 s) until a second run has started: under --jobs 2 the first two runs
// must then overlap. SYNC/running-* counts the runs alive when each one starts.
inline std::string stand_in_script(const std::filesystem::path& sync) {
  return "#!/bin/sh\n"
         "sync='" + sync.string() + "'\n"
         "args=\"$*\"\n"
         "out=''; model=''; staleness=''\n"
         "while [ $# -gt 0 ]; do\n"
         "  case \"$1\" in\n"
         "    --out) out=\"$2\"; shift 2;;\n"
         "    --model) model=\"$(basename \"$2\" .yaml)\"; shift 2;;\n"
         "    --staleness) staleness=\"$2\"; shift 2;;\n"
         "    *) shift;;\n"
         "  esac\n"
         "done\n"
         "touch \"$sync/running-$$\"\n"
         "ls \"$sync\" | grep -c '^running-' > \"$out/alive_at_start.txt\"\n"
         "echo \"$args\" > \"$out/args.txt\"\n"
         "echo \"stand-in sim for $model\"\n"
         "if [ -e \"$sync/overlap\" ]; then\n"
         "  touch \"$sync/started-$$\"\n"
         "  i=0\n"
         "  while [ \"$(ls \"$sync\" | grep -c '^started-')\" -lt 2 ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done\n"
         "  if [ $i -lt 100 ]; then echo yes > \"$out/overlap.txt\"; else echo no > \"$out/overlap.txt\"; fi\n"
         "fi\n"
         "rm -f \"$sync/running-$$\"\n"
         "if [ \"$model\" = crash ]; then echo 'simulated failure: model crash' >&2; exit 1; fi\n"
         "if [ \"$model\" = big ]; then\n"
         "  echo '{\"verb\": \"sim\", \"fits\": false, \"shortfall\": [{\"tier\": \"device\", \"needed_bytes\": "
         "3221225472, \"free_bytes\": 1073741824, \"capacity_bytes\": 2147483648}]}' > \"$out/summary.json\"\n"
         "  exit 0\n"
         "fi\n"
         "printf 'step,warmup,step_time_s,compute_s,visible_optimizer_s,exposed_communication_s,refresh_wait_s,"
         "state_move_wait_s,max_staleness,shadow_bytes,state_device_bytes,state_host_bytes,state_nvme_bytes\\n"
         "0,1,0.3,0.2,0.1,0,0.08,0.02,0,0,100,0,0\\n1,0,0.25,0.2,0.05,0,0.04,0.01,%s,20,100,50,0\\n"
         "2,0,0.25,0.2,0.05,0,0.04,0.01,%s,20,100,50,0\\n' \"$staleness\" \"$staleness\" > \"$out/steps.csv\"\n"
         "echo \"{\\\"verb\\\": \\\"sim\\\", \\\"fits\\\": true, \\\"shortfall\\\": [], \\\"p50_step_s\\\": 0.25, "
         "\\\"p99_step_s\\\": 0.3, \\\"p99_over_p50\\\": 1.2, \\\"mean_step_s\\\": 0.26, \\\"compute_s\\\": 0.2, "
         "\\\"visible_optimizer_s\\\": 0.06, \\\"exposed_communication_s\\\": 0, \\\"refresh_wait_s\\\": 0.04, \\\"state_move_wait_s\\\": 0.01, "
         "\\\"max_staleness\\\": $staleness, \\\"peak_device_bytes\\\": 1073741824, \\\"peak_host_bytes\\\": 0, "
         "\\\"peak_nvme_bytes\\\": 0, \\\"network_bytes\\\": 0, \\\"tokens_per_s\\\": 1000}\" > \"$out/summary.json\"\n";
}

// A model config small enough for anything; the stand-in tells runs apart by the file's name.
constexpr const char* kModelConfig =
    "name: stand-in\nlayers: 2\nd_model: 64\nheads: 4\nmlp_hidden: 256\nvocab: 256\nsequence_length: 64\n"
    "micro_batch: 2\n";

// A temp dir holding the stand-in binary, its SYNC dir, the model files m1.yaml, big.yaml and
// crash.yaml, and a study file.
struct StudyFixture {
  TempDir dir;
  std::filesystem::path sync = dir.path() / "sync";
  std::filesystem::path program = dir.path() / "fake-asteria";
  std::filesystem::path study = dir.path() / "study.yaml";
  std::filesystem::path out = dir.path() / "results";

  explicit StudyFixture(const std::string& study_text) {
    std::filesystem::create_directories(sync);
    write(program, stand_in_script(sync));
    ::chmod(program.c_str(), 0755);
    for (const char* model : {"m1", "big", "crash"}) write(model_file(model), kModelConfig);
    write(study, study_text);
  }
  std::string run_dir(const std::string& slug) const { return (out / "runs" / slug).string(); }
  std::string model_file(const std::string& name) const { return (dir.path() / (name + ".yaml")).string(); }
  // Nothing was launched: the stand-in never ran and no run directory was made.
  bool nothing_ran() const { return std::filesystem::is_empty(sync) && !std::filesystem::exists(out); }
};

}  // namespace asteria::cli

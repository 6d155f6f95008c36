// The run settings are listed once (core/run/run_schema.hpp) and everything else follows from
// the list: the options of each verb, their reading, the arguments a trace records for its
// replay, the resume rule and the data-parallel agreement.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "apps/asteria/run_config_options.hpp"
#include "apps/asteria/train_resume.hpp"
#include "core/common/error.hpp"
#include "core/run/run_arguments.hpp"
#include "core/run/run_schema.hpp"
#include "core/run/settings_list.hpp"

namespace asteria::cli {
namespace {

RunConfig read(RunVerb verb, const std::vector<std::string>& args) {
  po::variables_map values;
  po::store(po::command_line_parser(args).options(run_config_options(verb)).run(), values);
  po::notify(values);
  return read_run_config(verb, values);
}

// Each option list is refused by `verb`'s reader with an error holding its message.
void expect_refused(RunVerb verb, const std::vector<std::pair<std::vector<std::string>, std::string>>& cases) {
  for (const auto& [args, message] : cases) {
    try {
      (void)read(verb, args);
      ADD_FAILURE() << args[0] << " " << args[1] << " was accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
}

// Every value, through its codec, back to itself.
struct RoundTrip {
  std::vector<std::string> failures;
  template <class T>
  void value(const run::Setting& s, T& value, const run::Codec<T>& codec) {
    const std::optional<std::string> text = codec.format(value);
    if (!text) return;
    if (!(codec.parse(*text, "--" + std::string(s.name)) == value)) failures.push_back(std::string(s.name) + " " + *text);
  }
  void flag(const run::Setting&, bool&, bool) {}
};

TEST(RunSchema, EverySettingIsNamedOnceWithHelpAndEveryDefaultReadsBack) {
  std::set<std::string> names;
  for (const run::Setting& s : run::all_settings()) {
    EXPECT_TRUE(names.insert(std::string(s.name)).second) << "twice: " << s.name;
    EXPECT_FALSE(s.help.empty()) << s.name;
    EXPECT_NE(s.verbs, 0) << s.name;
  }
  for (RunVerb verb : {RunVerb::synth, RunVerb::sim, RunVerb::train}) {
    RunConfig defaults = default_run_config(verb);
    RoundTrip check;
    run::describe_run(check, defaults);
    run::describe(check, defaults.hp);
    EXPECT_TRUE(check.failures.empty()) << to_string(verb) << ": " << check.failures.front();
  }
}

TEST(RunSchema, EveryOptionOfAVerbIsASettingOfTheSchema) {
  for (RunVerb verb : {RunVerb::synth, RunVerb::sim, RunVerb::train}) {
    const po::options_description options = run_config_options(verb);
    for (const auto& option : options.options()) {
      const std::optional<run::Setting> s = run::find_setting(option->long_name());
      ASSERT_TRUE(s) << option->long_name();
      EXPECT_TRUE(s->taken_by(verb)) << option->long_name();
    }
  }
  // sim takes no tier budgets: the profile gives them.
  const po::options_description sim = run_config_options(RunVerb::sim);
  EXPECT_EQ(sim.find_nothrow("device-budget", false), nullptr);
}

// A data-parallel rank's trace must replay as the run it was: its recorded arguments carry every
// recorded setting, the data-parallel ones included, and read back to the same configuration.
TEST(RunSchema, RecordedArgumentsReadBackToTheRecordedRun) {
  const RunConfig recorded = read(RunVerb::train, {"--optimizer", "shampoo", "--staleness", "3", "--publish",
                                                   "opportunistic", "--refresh-sharing", "replicated", "--sync-period",
                                                   "4", "--parallelism", "zero1", "--straggler", "1:2.5", "--lookahead",
                                                   "5", "--host-workers", "3", "--warmup-steps", "7", "--seed", "99",
                                                   "--micro-batches", "2", "--schedule", "vertical", "--defer-fraction",
                                                   "0.25", "--weights-on", "host", "--lr", "0.003", "--grafting",
                                                   "false", "--root-method", "coupled-newton", "--device-budget", "3GiB",
                                                   "--refresh-on", "host", "--recompute-activations"});
  const std::vector<std::string> arguments = run::recorded_arguments(recorded);
  for (const char* option : {"--refresh-sharing", "--sync-period", "--parallelism", "--straggler"})
    EXPECT_NE(std::find(arguments.begin(), arguments.end(), option), arguments.end()) << option;
  const RunConfig replayed = read(RunVerb::train, arguments);
  EXPECT_EQ(replayed.optimizer, recorded.optimizer);
  EXPECT_EQ(replayed.staleness, 3);
  EXPECT_EQ(replayed.publish, recorded.publish);
  EXPECT_FALSE(replayed.share_refreshes);
  EXPECT_EQ(replayed.sync_period, 4);
  EXPECT_EQ(replayed.parallelism, plan::Parallelism::zero1);
  EXPECT_EQ(replayed.straggler, (run::Straggler{1, 2.5}));
  EXPECT_EQ(replayed.lookahead, 5);
  EXPECT_EQ(replayed.host_workers, 3);
  EXPECT_EQ(replayed.warmup_steps, 7);
  EXPECT_EQ(replayed.seed, 99u);
  EXPECT_EQ(replayed.micro_batches, 2);
  EXPECT_EQ(replayed.schedule, plan::ScheduleOrder::vertical);
  EXPECT_EQ(replayed.defer_fraction, 0.25);
  EXPECT_EQ(replayed.model_tiers.weights, platform::Tier::host);
  EXPECT_TRUE(replayed.recompute_activations);
  EXPECT_EQ(replayed.hp.lr, 0.003);
  EXPECT_FALSE(replayed.hp.grafting);
  EXPECT_EQ(replayed.hp.root_method, optim::RootMethod::coupled_newton);
  EXPECT_EQ(replayed.device_budget, std::size_t{3} << 30);
  // Where files go is not part of the run.
  const RunConfig with_out = read(RunVerb::train, {"--out", "somewhere", "--trace", "--no-progress"});
  for (const std::string& a : run::recorded_arguments(with_out))
    EXPECT_TRUE(a != "--out" && a != "--trace" && a != "--no-progress") << a;
}

// sim's simulated machine and synth's stack are settings of the schema like the others: read,
// recorded for a replay (the machine; the stack travels as the trace's layers) and read back.
TEST(RunSchema, TheVerbsOwnSettingsAreSettingsOfTheSchema) {
  const RunConfig sim = read(RunVerb::sim, {"--units", "8", "--simulated-nodes", "1", "--coalesce-ring-steps",
                                            "--concurrent-collectives", "--batch", "3"});
  EXPECT_EQ(sim.sim.units, 8);
  EXPECT_EQ(sim.sim.simulated_nodes, 1);
  EXPECT_TRUE(sim.sim.coalesce_ring_steps);
  EXPECT_FALSE(sim.sim.serial_collectives);
  EXPECT_EQ(sim.batch, 3);
  const RunConfig replayed = read(RunVerb::sim, run::recorded_arguments(sim));
  EXPECT_EQ(replayed.sim.units, 8);
  EXPECT_EQ(replayed.sim.simulated_nodes, 1);
  EXPECT_TRUE(replayed.sim.coalesce_ring_steps);
  EXPECT_FALSE(replayed.sim.serial_collectives);
  EXPECT_EQ(replayed.batch, 3);

  const RunConfig synth = read(RunVerb::synth, {"--shape", "64x32,16x8", "--step-seconds", "0.5", "--gradient-rank",
                                                "4", "--device-tflops", "10"});
  EXPECT_EQ(synth.synth.shapes, (std::vector<std::pair<std::int64_t, std::int64_t>>{{64, 32}, {16, 8}}));
  EXPECT_EQ(synth.synth.step_seconds, 0.5);
  EXPECT_EQ(synth.synth.gradient_rank, 4);
  EXPECT_EQ(synth.synth.device_tflops, 10.0);
  const std::vector<std::pair<std::string, std::string>> values = run::setting_values(synth);
  EXPECT_NE(std::find(values.begin(), values.end(), std::pair<std::string, std::string>{"shape", "64x32,16x8"}),
            values.end());

  // One verb's own settings are not another's options.
  for (const auto& [verb, option] : std::vector<std::pair<RunVerb, std::string>>{
           {RunVerb::train, "units"}, {RunVerb::synth, "nodes"}, {RunVerb::sim, "shape"}, {RunVerb::train, "layers"}})
    EXPECT_EQ(run_config_options(verb).find_nothrow(option, false), nullptr) << to_string(verb) << " --" << option;
  expect_refused(RunVerb::sim, {
           {{"--units", "0"}, "--units: expected an integer >= 1, found '0'"},
           {{"--simulated-nodes", "x"}, "--simulated-nodes: expected an integer >= 1, found 'x'"},
           {{"--batch", "-2"}, "--batch: expected an integer >= 0, found '-2'"}});
  expect_refused(RunVerb::synth, {
           {{"--shape", "4x"}, "--shape: expected ROWSxCOLS with integers >= 1, found '4x'"},
           {{"--step-seconds", "0"}, "--step-seconds: expected a number > 0, found '0'"},
           {{"--gradient-noise", "-1"}, "--gradient-noise: expected a number >= 0, found '-1'"}});
}

// A configuration built or changed in code meets the same ranges as one read from options:
// validate() reads every value back through its codec.
TEST(RunSchema, ValidateHoldsEveryValueToItsSettingsRange) {
  const auto refused = [](RunConfig config, const std::string& message) {
    try {
      validate(config);
      ADD_FAILURE() << message << ": accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  };
  RunConfig synth = default_run_config(RunVerb::synth);
  EXPECT_NO_THROW(validate(synth));
  synth.synth.device_tflops = 0.0;
  refused(synth, "--device-tflops: expected a number > 0, found '0'");
  RunConfig sim = default_run_config(RunVerb::sim);
  sim.sim.units = 0;
  refused(sim, "--units: expected an integer >= 1, found '0'");
  sim = default_run_config(RunVerb::sim);
  sim.trace.max_bytes = 1000;
  refused(sim, "--trace-max-bytes: expected a size >= 64KiB, found '1000'");
}

TEST(RunSchema, AValueOutsideItsSettingsRangeNamesTheOption) {
  expect_refused(RunVerb::train, {
           {{"--staleness", "-1"}, "--staleness: expected an integer >= 0, found '-1'"},
           {{"--steps", "ten"}, "--steps: expected an integer >= 1, found 'ten'"},
           {{"--defer-fraction", "1"}, "--defer-fraction: expected a fraction in [0, 1), found '1'"},
           {{"--refresh-sharing", "some"}, "--refresh-sharing: expected owners or replicated, found 'some'"},
           {{"--straggler", "x"}, "--straggler: expected RANK:FACTOR (a rank >= 0 and a slowdown factor in [1, 1000], e.g. 3:2.5), found 'x'"},
           {{"--grafting", "yes"}, "--grafting: expected true or false, found 'yes'"},
           {{"--weights-on", "disk"}, "--weights-on: expected device, host or nvme, found 'disk'"},
           // Every enumeration in the same words: the option, the names, what was found.
           {{"--publish", "eager"}, "command line: --publish: expected deterministic or opportunistic, found 'eager'"},
           {{"--schedule", "diagonal"}, "command line: --schedule: expected horizontal or vertical, found 'diagonal'"},
           {{"--refresh-on", "gpu"}, "command line: --refresh-on: expected host or device, found 'gpu'"},
           {{"--placement", "disk"},
            "command line: --placement: expected device, host, tiered, nvme or planned, found 'disk'"},
           {{"--numerics", "exact"}, "command line: --numerics: expected values, refresh or shapes, found 'exact'"},
           {{"--preset", "ds"}, "command line: --preset: expected asteria or distributed-shampoo, found 'ds'"}});
}

TEST(RunSchema, TheResumeRuleAndTheRanksAgreementFollowTheSchema) {
  for (const char* name : {"steps", "out", "overwrite", "trace", "no-progress", "checkpoint-every", "eval-every"})
    EXPECT_TRUE(resumable(name)) << name;
  for (const char* name : {"optimizer", "staleness", "lr", "seed", "parallelism", "refresh-sharing", "model"})
    EXPECT_FALSE(resumable(name)) << name;
  EXPECT_TRUE(run::find_setting("nvme-dir")->per_rank);
  EXPECT_FALSE(run::find_setting("out")->per_rank);
  EXPECT_FALSE(run::find_setting("seed")->per_rank);
}

// --preset distributed-shampoo starts Shampoo from Distributed Shampoo's constructor defaults in
// every verb (not the verbs' own refresh period and block size); options given still win, and
// the preset is refused for another optimizer.
TEST(RunSchema, TheDistributedShampooPresetGivesTheReferencesDefaults) {
  for (RunVerb verb : {RunVerb::synth, RunVerb::sim, RunVerb::train}) {
    const RunConfig c = read(verb, {"--optimizer", "shampoo", "--preset", "distributed-shampoo"});
    EXPECT_FALSE(c.hp.grafting);
    EXPECT_TRUE(c.hp.precondition_vectors);
    EXPECT_TRUE(c.hp.merge_small_dims);
    EXPECT_EQ(c.hp.precondition_frequency, 1);
    EXPECT_EQ(c.hp.max_precond_dim, 1024);
    EXPECT_EQ(c.hp.lr, 1e-2);
    EXPECT_EQ(c.hp.beta2, 1.0);
    EXPECT_EQ(c.hp.eps, 1e-12);
  }
  const RunConfig given = read(RunVerb::sim, {"--optimizer", "shampoo", "--preset", "distributed-shampoo",
                                              "--precondition-frequency", "50", "--grafting", "true"});
  EXPECT_EQ(given.hp.precondition_frequency, 50);
  EXPECT_TRUE(given.hp.grafting);
  EXPECT_TRUE(given.hp.precondition_vectors);
  // The default preset is Asteria's: the verb's own values.
  EXPECT_FALSE(read(RunVerb::sim, {"--optimizer", "shampoo"}).hp.precondition_vectors);
  try {
    read(RunVerb::sim, {"--optimizer", "soap", "--preset", "distributed-shampoo"});
    FAIL() << "a Shampoo preset for SOAP was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--preset"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("expected --optimizer shampoo"), std::string::npos) << e.what();
  }
  // The preset travels with the trace: a replay starts from the same defaults.
  const RunConfig c = read(RunVerb::train, {"--optimizer", "shampoo", "--preset", "distributed-shampoo"});
  const std::vector<std::string> recorded = run::recorded_arguments(c);
  const RunConfig back = read(RunVerb::train, recorded);
  EXPECT_EQ(back.preset, optim::HyperparameterPreset::distributed_shampoo);
  EXPECT_TRUE(back.hp.merge_small_dims);
}

}  // namespace
}  // namespace asteria::cli

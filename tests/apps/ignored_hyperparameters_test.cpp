// Hyperparameter options the chosen optimizer never reads are warned about on stderr, naming the
// option, the optimizer and those that read it; options left unset and options it reads are not.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "apps/asteria/hyperparameter_options.hpp"
#include "apps/asteria/run_config_options.hpp"
#include "tests/common/cli_harness.hpp"

namespace asteria::cli {
namespace {

po::variables_map parsed(const std::vector<std::string>& args) {
  po::options_description options = run_config_options(RunVerb::train);
  po::variables_map values;
  po::store(po::command_line_parser(args).options(options).run(), values);
  po::notify(values);
  return values;
}

std::string warnings(const std::vector<std::string>& args, std::string_view verb = "train") {
  std::ostringstream err;
  warn_ignored_hyperparameters(verb, parsed(args), err);
  return err.str();
}

TEST(IgnoredHyperparameters, EveryHyperparameterOptionHasItsReaders) {
  const po::options_description options = hyperparameter_options();
  for (const auto& option : options.options())
    EXPECT_FALSE(optimizers_reading(option->long_name()).empty()) << option->long_name();
  EXPECT_TRUE(optimizers_reading("steps").empty());
}

TEST(IgnoredHyperparameters, NamesTheOptionTheOptimizerAndItsReaders) {
  EXPECT_EQ(warnings({"--optimizer", "soap", "--newton-schulz-steps", "3"}),
            "asteria train: warning: --newton-schulz-steps is ignored by --optimizer soap (read by muon)\n");
  // The default optimizer (soap) counts when --optimizer is not given.
  EXPECT_NE(warnings({"--graft-eps", "1e-8"}).find("--graft-eps is ignored by --optimizer soap (read by shampoo)"),
            std::string::npos);
  const std::string adamw = warnings(
      {"--optimizer", "adamw", "--soap-second-moment", "rotate", "--precondition-frequency", "5", "--lr", "0.1"});
  EXPECT_NE(adamw.find("--precondition-frequency is ignored by --optimizer adamw (read by shampoo, soap, kl-shampoo)"),
            std::string::npos)
      << adamw;
  EXPECT_NE(adamw.find("--soap-second-moment is ignored by --optimizer adamw (read by soap)"), std::string::npos);
  EXPECT_EQ(adamw.find("--lr"), std::string::npos) << "every optimizer reads --lr";
  EXPECT_EQ(ignored_hyperparameters(parsed({"--optimizer", "muon", "--beta2", "0.9", "--eps", "1e-6"}),
                                    optim::OptimizerKind::muon),
            (std::vector<std::string>{"beta2", "eps"}));
}

TEST(IgnoredHyperparameters, SilentForOptionsReadOrUnsetAndWhereTheOptimizerIsNotKnown) {
  EXPECT_EQ(warnings({"--optimizer", "muon", "--newton-schulz-steps", "3", "--nesterov", "false"}), "");
  EXPECT_EQ(warnings({"--optimizer", "shampoo", "--precondition-frequency", "4", "--root-method", "eigen"}), "");
  EXPECT_EQ(warnings({"--optimizer", "adamw"}), "");
  EXPECT_EQ(warnings({"--optimizer", "no-such", "--newton-schulz-steps", "3"}), "");  // the verb reports the name
  // A replay keeps the recorded run's optimizer unless --optimizer is given.
  EXPECT_EQ(warnings({"--newton-schulz-steps", "3"}, "replay"), "");
  EXPECT_NE(warnings({"--optimizer", "soap", "--newton-schulz-steps", "3"}, "replay"), "");
}

// Through the command line: the run goes on, the warning is on stderr.
TEST(IgnoredHyperparameters, TheVerbWarnsOnStderrAndRuns) {
  const auto run = testing::run_cli({"synth", "--time", "simulated", "--layers", "1", "--rows", "8", "--cols", "8",
                                     "--optimizer", "soap", "--newton-schulz-steps", "3", "--steps", "1",
                                     "--warmup-steps", "0", "--step-seconds", "0.01", "--no-progress"});
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.err.find("asteria synth: warning: --newton-schulz-steps is ignored by --optimizer soap"),
            std::string::npos)
      << run.err;
  const auto read = testing::run_cli({"synth", "--time", "simulated", "--layers", "1", "--rows", "8", "--cols", "8",
                                      "--optimizer", "muon", "--newton-schulz-steps", "3", "--steps", "1",
                                      "--warmup-steps", "0", "--step-seconds", "0.01", "--no-progress"});
  EXPECT_EQ(read.code, 0) << read.err;
  EXPECT_EQ(read.err.find("warning"), std::string::npos) << read.err;
}

}  // namespace
}  // namespace asteria::cli

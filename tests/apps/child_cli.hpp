#pragma once
// `asteria ARGS` in a forked child: a process hosts one SimGrid simulation, so every verb that
// simulates (sim, study runs, replay) gets a process of its own. The child sends
// "<exit code>\n<stdout>\x1f<stderr>".
#include <gtest/gtest.h>

#include <string>

#include "sim/child_process.hpp"
#include "tests/common/cli_harness.hpp"

namespace asteria::testing {

inline CliOutcome run_cli_in_child(const cli::Args& args) {
  const sim::ChildOutcome child = sim::run_in_child_process([&](sim::ChildReport& report) {
    const CliOutcome run = run_cli(args);
    report.write(std::to_string(run.code) + '\n' + run.out + '\x1f' + run.err);
  });
  EXPECT_TRUE(child.succeeded()) << child.describe();
  const std::size_t newline = child.report.find('\n');
  const std::size_t separator = child.report.find('\x1f');
  if (!child.succeeded() || newline == std::string::npos || separator == std::string::npos)
    return {-1, "", child.report};
  return {std::stoi(child.report.substr(0, newline)), child.report.substr(newline + 1, separator - newline - 1),
          child.report.substr(separator + 1)};
}

}  // namespace asteria::testing

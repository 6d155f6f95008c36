// Simulations run in child processes (one engine per process): the child's report, exit code,
// signal and failed assertions must all reach the parent.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "sim/child_process.hpp"
#include "tests/sim/in_child.hpp"

namespace asteria::sim {
namespace {

TEST(ChildProcess, BringsBackTheReportAndTheExitCode) {
  const ChildOutcome done = run_in_child_process([](ChildReport& report) {
    report.write("hello ");
    report.write(std::string(100'000, 'x'));  // more than a pipe holds
  });
  EXPECT_TRUE(done.succeeded());
  EXPECT_EQ(done.signal, 0);
  ASSERT_EQ(done.report.size(), 6u + 100'000u);
  EXPECT_EQ(done.report.substr(0, 6), "hello ");

  const ChildOutcome threw = run_in_child_process([](ChildReport&) { throw std::runtime_error("no luck"); });
  EXPECT_EQ(threw.exit_code, 1);
  EXPECT_EQ(threw.report, "uncaught exception: no luck");

  const ChildOutcome killed = run_in_child_process([](ChildReport&) { std::raise(SIGKILL); });
  EXPECT_FALSE(killed.succeeded());
  EXPECT_EQ(killed.signal, SIGKILL);
  EXPECT_NE(killed.describe().find("signal 9"), std::string::npos) << killed.describe();
}

void child_with_a_failed_expectation() {
  testing::run_in_child([] { EXPECT_EQ(1 + 1, 3) << "forwarded from the child"; });
}
void child_that_aborts() {
  testing::run_in_child([] { std::abort(); });
}
void child_that_throws() {
  testing::run_in_child([] { throw std::logic_error("thrown in the child"); });
}

TEST(ChildProcess, TheChildsFailuresBecomeTheParentsFailures) {
  EXPECT_NONFATAL_FAILURE(child_with_a_failed_expectation(), "forwarded from the child");
  EXPECT_NONFATAL_FAILURE(child_that_aborts(), "signal 6");
  EXPECT_NONFATAL_FAILURE(child_that_throws(), "thrown in the child");
}

}  // namespace
}  // namespace asteria::sim

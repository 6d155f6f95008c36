// The issuing thread's time per plan op: charged on the platform clock when time is modelled or
// simulated, so a device that waits for its next op shows it.
#include <gtest/gtest.h>

#include "core/platform/fake/fake_platform.hpp"
#include "core/runtime/driver/step_driver.hpp"
#include "tests/driver/driver_test_support.hpp"

namespace asteria::runtime::test {
namespace {

// AdamW on three layers, nothing timed but the issuing: a step lasts ops x the issue time.
TEST(IssueTime, EveryIssuedOpPassesItsTimeOnTheClock) {
  auto step_seconds = [](double issue_seconds) {
    platform::fake::FakeOptions timing;  // device and host work take no time
    platform::fake::FakePlatform platform(timing);
    SyntheticModel<float> model(small_stack());
    DriverOptions o = full_numerics(0);
    o.device_seconds = nullptr;
    o.issue_seconds_per_op = issue_seconds;
    StepDriver<float> driver(platform, model, optim::OptimizerKind::adamw,
                             small_blocks(optim::OptimizerKind::adamw, 1), o);
    const StepRecord r = driver.run_step();
    return std::pair{r.step_time_s, driver.plan().ops.size()};
  };
  const auto [free, ops] = step_seconds(0.0);
  EXPECT_EQ(free, 0.0);
  const auto [charged, same_ops] = step_seconds(0.25);
  EXPECT_EQ(same_ops, ops);
  EXPECT_NEAR(charged, 0.25 * static_cast<double>(ops), 1e-9);  // one quarter second per op, in issue order
}

TEST(IssueTime, ANegativeIssueTimeIsRefusedByName) {
  DriverOptions o;
  o.issue_seconds_per_op = -1.0;
  try {
    validate(o, "test");
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.field(), "issue_seconds_per_op");
  }
}

}  // namespace
}  // namespace asteria::runtime::test

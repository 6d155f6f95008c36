#include "core/platform/fake/fake_platform.hpp"
#include "tests/common/recording_sink.hpp"
#include "tests/platform/conformance.hpp"

namespace asteria::platform::conformance {
namespace {
Backend fake_backend() {
  Backend b;
  b.name = "fake";
  b.work_runs_beside_caller = false;
  b.time = TimeSource::simulated;
  b.run = [](const Requirements& req, const Scenario& scenario) {
    test::RecordingSink sink(0);
    fake::FakeOptions o;
    o.device_capacity = req.device_capacity;
    o.host_capacity = req.host_capacity;
    o.nvme_capacity = req.nvme_capacity;
    o.host_workers = req.host_workers;
    if (req.record_activities) o.activities = &sink;
    fake::FakePlatform platform(o);
    scenario(platform);
  };
  return b;
}
INSTANTIATE_TEST_SUITE_P(Fake, PlatformConformance, ::testing::Values(fake_backend()), backend_name);
}  // namespace
}  // namespace asteria::platform::conformance

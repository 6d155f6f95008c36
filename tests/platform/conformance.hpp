#pragma once
// The Platform seam's contract, checked on every backend. A backend joins the suite with one
// INSTANTIATE_TEST_SUITE_P(<Name>, PlatformConformance, ::testing::Values(<its Backend>),
// conformance::backend_name) in a .cpp of this folder (see real_conformance.cpp).
//
// Scenarios run only through the Platform interface, so they run unchanged in any world: the
// backend's `run` builds a platform meeting the Requirements and runs the scenario where its
// code may block (the calling thread for real and fake, an actor for sim).
#include <gtest/gtest.h>

#include <cstddef>
#include <functional>
#include <ostream>
#include <string>

#include "core/platform/platform.hpp"

namespace asteria::platform::conformance {

// What every scenario may rely on.
struct Requirements {
  std::size_t device_capacity = std::size_t{1} << 20;
  std::size_t host_capacity = std::size_t{1} << 20;
  std::size_t nvme_capacity = std::size_t{1} << 20;  // the nvme tier must exist
  int host_workers = 4;                                // at least; concurrency() may say fewer
  // The platform records its activities on a test::RecordingSink of unit 0 (its activities());
  // otherwise it has no sink.
  bool record_activities = false;
};

using Scenario = std::function<void(Platform&)>;

struct Backend {
  std::string name;  // the test-name suffix: letters, digits, underscores
  // True when submitted work runs beside the submitter (threads, actors); false where it runs
  // inside submit() (the fake backend). Scenarios where work must block on the submitter need it.
  bool work_runs_beside_caller = true;
  TimeSource time = TimeSource::simulated;  // what the backend's platforms report as time_source()
  std::function<void(const Requirements&, const Scenario&)> run;
};

inline void PrintTo(const Backend& backend, std::ostream* out) { *out << backend.name; }  // for test listings
inline std::string backend_name(const ::testing::TestParamInfo<Backend>& info) { return info.param.name; }

class PlatformConformance : public ::testing::TestWithParam<Backend> {
 protected:
  void run(const Scenario& scenario, const Requirements& requirements = {}) {
    GetParam().run(requirements, scenario);
  }
};

// Scenarios where work must run beside its submitter (a worker blocking on the caller, several
// waiters at once). Instantiated only for backends whose Backend::work_runs_beside_caller is
// true: the fake backend runs work inside submit(), where these scenarios cannot be expressed.
class ConcurrentPlatformConformance : public PlatformConformance {};

// Work with a body, for brevity in scenarios.
inline Work work(std::string label, std::function<Status()> body) {
  Work w;
  w.label = std::move(label);
  w.body = std::move(body);
  return w;
}

}  // namespace asteria::platform::conformance

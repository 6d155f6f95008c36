#pragma once
// The Comm seam's contract, checked on every backend: each scenario is run by every rank of a
// world with its own platform::Comm, and checks its own results (values bitwise equal to
// platform::combine_values over every rank's known inputs, ordering, groups, failures).
//
// A backend joins with one INSTANTIATE_TEST_SUITE_P(<Name>, CommConformance,
// ::testing::ValuesIn(comm_conformance::params(<its Backend>, {<world sizes>})),
// comm_conformance::param_name) (see local_comm_test.cpp, sim_comm_conformance_test.cpp and
// mpi/mpi_comm_test.cpp). Scenarios never return early on a failed check: every rank makes the
// same calls, so one rank's failure cannot leave the others waiting.
#include <gtest/gtest.h>

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "core/platform/comm.hpp"
#include "core/platform/pending.hpp"

namespace asteria::comm_conformance {

// What a scenario gets on its rank.
struct Rank {
  platform::Comm& comm;
  platform::CompletionBoard& board;  // makes Pendings the scenario completes itself (`after` work)
  std::function<void()> pause;       // lets the other ranks and the backend's threads go on a while
  // 0: reduced values must be bitwise those of platform::combine_values (rank-order sums). n > 0,
  // for a backend that adds in an order of its own (NCCL's rings and trees): each reduced element
  // within n ulps x the group size of the sum of its terms' magnitudes (the error bound of a
  // float sum in any order), in the dtype's precision. Other values stay exact.
  int reduction_ulps = 0;
};

using Scenario = void (*)(Rank&);

struct Case {
  std::string name;  // letters, digits, underscores
  Scenario run = nullptr;
};
std::vector<Case> cases();

struct Backend {
  std::string name;
  // Runs `scenario` on every rank of a world of `ranks` ranks filling nodes of two ranks (or as
  // the backend's world is laid out, for a world it does not build itself), where blocking is
  // allowed (a thread, an actor, a process).
  std::function<void(int ranks, Scenario scenario)> run;
};

struct Param {
  Backend backend;
  Case scenario;
  int ranks = 1;
};
inline void PrintTo(const Param& p, std::ostream* out) { *out << p.backend.name << " " << p.scenario.name; }

// Every scenario on every world size.
std::vector<Param> params(const Backend& backend, const std::vector<int>& ranks);
std::string param_name(const ::testing::TestParamInfo<Param>& info);

class CommConformance : public ::testing::TestWithParam<Param> {};

}  // namespace asteria::comm_conformance

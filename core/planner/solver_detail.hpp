#pragma once
// Internal to the placement solver: the candidate options of each block, and the searches that
// placement_solver.cpp dispatches to. Not part of the planner's API.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/planner/placement_problem.hpp"
#include "core/planner/placement_solver.hpp"

namespace asteria::planner::detail {

// Per block, the option indices (into kOptions) it may take: the forced one, or all of them;
// and every option's usage (also for options the block may not take).
struct Candidates {
  std::vector<std::vector<int>> options;
  std::vector<std::array<Usage, kOptionCount>> usage;
  std::vector<bool> forced;
};
Candidates candidates(const PlacementProblem& problem, const std::vector<std::optional<BlockChoice>>& fixed);

// Capacity of each tier (+infinity when unbounded).
std::array<double, kTierCount> capacity_array(const Capacities& capacities);

// Weights of a Lagrangian lower bound: for any feasible assignment, T >= sum_r lambda_r U_r +
// sum_t mu_t (bytes_t - capacity_t), with lambda on the simplex, mu >= 0 and mu_t = 0 for
// unbounded tiers.
struct BoundWeights {
  Usage lambda{};
  std::array<double, kTierCount> mu{};
};
// The duals of the LP relaxation (GLPK's simplex); nullopt when the LP does not solve cleanly
// (then the search does without).
std::optional<BoundWeights> lp_relaxation_weights(const PlacementProblem& problem, const Candidates& cand);

struct SearchResult {
  std::optional<Assignment> assignment;  // nullopt: none found (see infeasible)
  SolveStatus status = SolveStatus::optimal;
  double lower_bound = 0;  // a proven lower bound on the optimal time (0 when none is known)
  std::int64_t nodes = 0;
  bool infeasible = false;  // proven: no assignment satisfies the capacities
};

// A feasible assignment found quickly (greedy, then single-block moves), or nullopt.
std::optional<Assignment> heuristic(const PlacementProblem& problem, const Candidates& cand);

SearchResult exact_search(const PlacementProblem& problem, const Candidates& cand, const SolverOptions& options,
                          const std::optional<Assignment>& incumbent);
SearchResult mip_search(const PlacementProblem& problem, const Candidates& cand, const SolverOptions& options,
                        const std::optional<Assignment>& incumbent);

// The InputError for capacities that no assignment satisfies: names the tier (capacities.<tier>)
// and at least how many bytes it is short.
[[noreturn]] void throw_infeasible(const PlacementProblem& problem, const Candidates& cand);

}  // namespace asteria::planner::detail

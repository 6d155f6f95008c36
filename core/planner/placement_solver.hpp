#pragma once
// Solving the placement problem (placement_problem.hpp): one (tier, site) option per block that
// minimizes the predicted update-phase time T = max over resources of the summed usage, with
// every tier's resting bytes within its capacity.
//
// Methods:
//   exact     branch and bound over blocks (largest first), pruned with the best assignment
//             known (a greedy placement improved by single-block moves, and any better leaf found)
//             against Lagrangian lower bounds (the resource sums so far, plus for the remaining
//             blocks the cheapest option under fixed resource and capacity weights: the unit
//             weights and the root LP relaxation's duals). Identical unforced blocks are
//             symmetry-broken. Refuses more than SolverOptions::exact_block_limit blocks.
//   mip       a mixed-integer program solved by GLPK: binary z[i][o] per block and allowed option,
//             sum_o z[i][o] = 1, per finite tier sum state_bytes z <= capacity, T >= usage_r for
//             every resource r, minimize T (glp_intopt with its presolver, a time limit and a
//             relative gap tolerance). Identical unforced blocks share integer columns counting
//             how many of them take each option, so a model of repeated layers has no symmetry.
//   automatic exact up to SolverOptions::automatic_exact_blocks blocks, mip above (and mip,
//             seeded with exact's best, when exact reaches its node limit).
// Proving optimality is knapsack-hard when capacities are tight (which blocks fill the device
// and host exactly decides how much spills to NVMe): random instances of that kind can exhaust
// either method's limit at 16-20 blocks, while instances of similar or identical blocks solve
// at once (exact is usually the faster of the two up to 20 blocks). A stopped method returns
// the best assignment found with its status and gap. "Optimal" means proven to within about
// 1e-12 (exact) or 1e-9 (GLPK's tolerances) relative.
// Both report the assignment, its prediction (predict(): the same numbers for the same
// assignment), whether optimality was proven and the relative gap to the best lower bound.
//
// Errors: invalid input -> InputError (validate()); capacities that no assignment satisfies ->
// InputError naming the tier (field capacities.<tier>) and at least how many bytes it is short;
// a solver failure, or a node or time limit reached before any feasible assignment -> Error.
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "core/planner/placement_problem.hpp"

namespace asteria::planner {

enum class Method { automatic, exact, mip };
std::string_view to_string(Method method) noexcept;

enum class SolveStatus {
  optimal,        // proven optimal (exact, or GLPK's MIP with a zero gap tolerance)
  gap_tolerance,  // GLPK stopped at SolverOptions::mip_gap
  time_limit,     // GLPK stopped at its time limit with a feasible assignment
  node_limit,     // exact stopped at SolverOptions::exact_node_limit with a feasible assignment
};
std::string_view to_string(SolveStatus status) noexcept;

struct SolverOptions {
  Method method = Method::automatic;
  // exact refuses problems with more blocks than this (InputError naming the limit).
  int exact_block_limit = 20;
  // automatic runs exact up to this many blocks and mip above.
  int automatic_exact_blocks = 20;
  // exact stops after exploring this many search nodes (about 5 million a second) with the best
  // assignment found (status node_limit); automatic then hands the problem to mip.
  std::int64_t exact_node_limit = 10'000'000;
  // mip: GLPK's time limit in seconds (> 0; +infinity for none) and relative gap tolerance
  // (>= 0; 0 asks for a proven optimum).
  double time_limit_s = 60;
  double mip_gap = 0;
  // Empty, or one entry per block: a choice forced on that block (e.g. to express a baseline or
  // pin a block the runtime cannot move), nullopt leaving it free.
  std::vector<std::optional<BlockChoice>> fixed;
};

struct Solution {
  Assignment assignment;
  Prediction prediction;  // predict(problem, assignment)
  // The method that ran (never automatic; mip when automatic's exact reached its node limit).
  Method method = Method::exact;
  SolveStatus status = SolveStatus::optimal;
  // (prediction.time_s - best lower bound) / prediction.time_s, 0 when proven optimal.
  double mip_gap = 0;
  std::int64_t nodes = 0;  // search nodes (exact) or GLPK's branch-and-bound subproblems (mip)
};

// Validates the problem and options, then solves. Zero blocks give an empty assignment, T = 0.
Solution solve(const PlacementProblem& problem, const SolverOptions& options = {});

}  // namespace asteria::planner

#include "core/planner/placement_solver.hpp"

#include <algorithm>
#include <cmath>

#include "core/common/error.hpp"
#include "core/common/number_text.hpp"
#include "core/planner/solver_detail.hpp"

namespace asteria::planner {

namespace {

constexpr const char* kSource = "placement solver";

void validate_options(const PlacementProblem& problem, const SolverOptions& options) {
  if (options.exact_block_limit < 0)
    throw InputError(kSource, "exact_block_limit",
                     "expected a count >= 0, found " + std::to_string(options.exact_block_limit));
  if (options.automatic_exact_blocks < 0)
    throw InputError(kSource, "automatic_exact_blocks",
                     "expected a count >= 0, found " + std::to_string(options.automatic_exact_blocks));
  if (options.exact_node_limit < 1)
    throw InputError(kSource, "exact_node_limit",
                     "expected a count >= 1, found " + std::to_string(options.exact_node_limit));
  if (std::isnan(options.time_limit_s) || options.time_limit_s <= 0)
    throw InputError(kSource, "time_limit_s",
                     "expected seconds > 0 (or +infinity), found " + exact_number(options.time_limit_s));
  if (!std::isfinite(options.mip_gap) || options.mip_gap < 0)
    throw InputError(kSource, "mip_gap", "expected a finite relative gap >= 0, found " + exact_number(options.mip_gap));
  if (!options.fixed.empty() && options.fixed.size() != problem.blocks.size())
    throw InputError(kSource, "fixed",
                     "expected no entries or one per block (" + std::to_string(problem.blocks.size()) + "), found " +
                         std::to_string(options.fixed.size()));
  for (std::size_t i = 0; i < options.fixed.size(); ++i)
    if (options.fixed[i] && !allowed(*options.fixed[i]))
      throw InputError(kSource, "fixed[" + std::to_string(i) + "]",
                       "expected an allowed option (device tier with host site is not), found " +
                           to_string(*options.fixed[i]));
}

using Score = std::pair<double, double>;  // (max over resources, sum over resources)

Score score(const Usage& u) {
  double mx = 0, sum = 0;
  for (double v : u) {
    mx = std::max(mx, v);
    sum += v;
  }
  return {mx, sum};
}

Usage plus(const Usage& a, const Usage& b) {
  Usage s{};
  for (std::size_t r = 0; r < s.size(); ++r) s[r] = a[r] + b[r];
  return s;
}

Usage minus(const Usage& a, const Usage& b) {
  Usage s{};
  for (std::size_t r = 0; r < s.size(); ++r) s[r] = a[r] - b[r];
  return s;
}

bool better(const Score& a, const Score& b) {
  const double eps = 1e-12;
  if (a.first < b.first * (1 - eps)) return true;
  if (a.first > b.first * (1 + eps)) return false;
  return a.second < b.second * (1 - eps);
}

std::string tier_name(int t) { return std::string(platform::to_string(static_cast<Tier>(t))); }

}  // namespace

std::string_view to_string(Method method) noexcept {
  switch (method) {
    case Method::automatic: return "automatic";
    case Method::exact: return "exact";
    case Method::mip: return "mip";
  }
  return "unknown";
}

std::string_view to_string(SolveStatus status) noexcept {
  switch (status) {
    case SolveStatus::optimal: return "optimal";
    case SolveStatus::gap_tolerance: return "gap_tolerance";
    case SolveStatus::time_limit: return "time_limit";
    case SolveStatus::node_limit: return "node_limit";
  }
  return "unknown";
}

namespace detail {

Candidates candidates(const PlacementProblem& problem, const std::vector<std::optional<BlockChoice>>& fixed) {
  Candidates c;
  const std::size_t n = problem.blocks.size();
  c.options.resize(n);
  c.usage.resize(n);
  c.forced.assign(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    for (int o = 0; o < kOptionCount; ++o)
      c.usage[i][static_cast<std::size_t>(o)] =
          option_usage(problem.blocks[i], problem.rates, kOptions[static_cast<std::size_t>(o)]);
    if (!fixed.empty() && fixed[i]) {
      c.options[i] = {option_index(*fixed[i])};
      c.forced[i] = true;
    } else {
      c.options[i] = {0, 1, 2, 3, 4};
    }
  }
  return c;
}

std::array<double, kTierCount> capacity_array(const Capacities& capacities) {
  return {capacities.device, capacities.host, capacities.nvme};
}

std::optional<Assignment> heuristic(const PlacementProblem& problem, const Candidates& cand) {
  const std::size_t n = problem.blocks.size();
  const auto caps = capacity_array(problem.capacities);
  std::array<double, kTierCount> used{};
  std::vector<int> choice(n, -1);
  Usage total{};
  double unforced_left = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (cand.forced[i]) {
      const int o = cand.options[i][0];
      choice[i] = o;
      used[static_cast<std::size_t>(kOptions[static_cast<std::size_t>(o)].tier)] += problem.blocks[i].state_bytes;
      total = plus(total, cand.usage[i][static_cast<std::size_t>(o)]);
    } else {
      unforced_left += problem.blocks[i].state_bytes;
    }
  }
  for (int t = 0; t < kTierCount; ++t)
    if (used[static_cast<std::size_t>(t)] > caps[static_cast<std::size_t>(t)]) return std::nullopt;
  // Greedy: unforced blocks, largest state first, each to the option that keeps the busiest
  // resource least busy, as long as the blocks still to place fit the room left in total.
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < n; ++i)
    if (!cand.forced[i]) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return problem.blocks[a].state_bytes > problem.blocks[b].state_bytes;
  });
  for (std::size_t i : order) {
    const double s = problem.blocks[i].state_bytes;
    unforced_left -= s;
    int best = -1;
    Score best_score{};
    for (int o : cand.options[i]) {
      const auto t = static_cast<std::size_t>(kOptions[static_cast<std::size_t>(o)].tier);
      if (used[t] + s > caps[t]) continue;
      double room = 0;
      for (std::size_t k = 0; k < caps.size(); ++k) room += caps[k] - used[k] - (k == t ? s : 0);
      if (unforced_left > room) continue;
      const Score sc = score(plus(total, cand.usage[i][static_cast<std::size_t>(o)]));
      if (best < 0 || better(sc, best_score)) {
        best = o;
        best_score = sc;
      }
    }
    if (best < 0) return std::nullopt;
    choice[i] = best;
    used[static_cast<std::size_t>(kOptions[static_cast<std::size_t>(best)].tier)] += s;
    total = plus(total, cand.usage[i][static_cast<std::size_t>(best)]);
  }
  // Single-block moves while one improves (busiest resource first, then the total).
  for (int pass = 0; pass < 100; ++pass) {
    bool improved = false;
    for (std::size_t i : order) {
      const double s = problem.blocks[i].state_bytes;
      const int from = choice[i];
      const auto from_tier = static_cast<std::size_t>(kOptions[static_cast<std::size_t>(from)].tier);
      const Usage without = minus(total, cand.usage[i][static_cast<std::size_t>(from)]);
      Score best_score = score(total);
      int best = from;
      for (int o : cand.options[i]) {
        const auto t = static_cast<std::size_t>(kOptions[static_cast<std::size_t>(o)].tier);
        if (o == from || (t != from_tier && used[t] + s > caps[t])) continue;
        const Score sc = score(plus(without, cand.usage[i][static_cast<std::size_t>(o)]));
        if (better(sc, best_score)) {
          best = o;
          best_score = sc;
        }
      }
      if (best != from) {
        used[from_tier] -= s;
        used[static_cast<std::size_t>(kOptions[static_cast<std::size_t>(best)].tier)] += s;
        total = plus(without, cand.usage[i][static_cast<std::size_t>(best)]);
        choice[i] = best;
        improved = true;
      }
    }
    if (!improved) break;
  }
  Assignment a(n);
  for (std::size_t i = 0; i < n; ++i) a[i] = kOptions[static_cast<std::size_t>(choice[i])];
  return a;
}

void throw_infeasible(const PlacementProblem& problem, const Candidates& cand) {
  const auto caps = capacity_array(problem.capacities);
  std::array<double, kTierCount> forced{};
  double unforced = 0, largest = 0;
  std::string largest_label;
  std::size_t unforced_count = 0;
  for (std::size_t i = 0; i < problem.blocks.size(); ++i) {
    const double s = problem.blocks[i].state_bytes;
    if (cand.forced[i]) {
      forced[static_cast<std::size_t>(kOptions[static_cast<std::size_t>(cand.options[i][0])].tier)] += s;
    } else {
      unforced += s;
      ++unforced_count;
      if (s > largest) {
        largest = s;
        largest_label = problem.blocks[i].label.empty() ? "blocks[" + std::to_string(i) + "]" : problem.blocks[i].label;
      }
    }
  }
  for (int t = 0; t < kTierCount; ++t) {
    const auto k = static_cast<std::size_t>(t);
    if (forced[k] > caps[k])
      throw InputError("placement problem", "capacities." + tier_name(t),
                       "the blocks forced onto the " + tier_name(t) + " tier rest " + exact_number(forced[k]) +
                           " bytes there but its capacity is " + exact_number(caps[k]) + ": at least " +
                           exact_number(forced[k] - caps[k]) + " bytes short");
  }
  std::array<double, kTierCount> room{};
  double total_room = 0;
  for (std::size_t k = 0; k < room.size(); ++k) {
    room[k] = caps[k] - forced[k];
    total_room += room[k];
  }
  const std::string rooms = "device " + exact_number(room[0]) + ", host " + exact_number(room[1]) + ", nvme " +
                            exact_number(room[2]);
  if (unforced > total_room)
    throw InputError("placement problem", "capacities.nvme",
                     "the state of " + std::to_string(unforced_count) + " blocks needs " + exact_number(unforced) +
                         " bytes but the tiers have " + exact_number(total_room) + " bytes of room (" + rooms +
                         "): at least " + exact_number(unforced - total_room) +
                         " bytes short on nvme, the last resort (or on any tier)");
  const double biggest_room = *std::max_element(room.begin(), room.end());
  const int biggest_tier = static_cast<int>(std::max_element(room.begin(), room.end()) - room.begin());
  throw InputError("placement problem", "capacities." + tier_name(biggest_tier),
                   "the blocks' state (" + exact_number(unforced) + " bytes in " + std::to_string(unforced_count) +
                       " blocks, the largest '" + largest_label + "' " + exact_number(largest) +
                       " bytes) does not pack whole into the tiers' room (" + rooms +
                       " bytes): blocks do not split across tiers; at least " +
                       exact_number(std::max(0.0, largest - biggest_room)) + " bytes short on " +
                       tier_name(biggest_tier) + " for the largest block alone");
}

}  // namespace detail

Solution solve(const PlacementProblem& problem, const SolverOptions& options) {
  validate(problem);
  validate_options(problem, options);
  const std::size_t n = problem.blocks.size();
  Method method = options.method;
  if (method == Method::automatic)
    method = n <= static_cast<std::size_t>(options.automatic_exact_blocks) ? Method::exact : Method::mip;
  if (method == Method::exact && n > static_cast<std::size_t>(options.exact_block_limit))
    throw InputError(kSource, "method",
                     "exact solves at most exact_block_limit = " + std::to_string(options.exact_block_limit) +
                         " blocks, found " + std::to_string(n) + ": use mip, or merge blocks with subgroups()");
  Solution solution;
  solution.method = method;
  if (n == 0) {
    solution.prediction = predict(problem, solution.assignment);
    return solution;
  }
  const detail::Candidates cand = detail::candidates(problem, options.fixed);
  std::optional<Assignment> incumbent = detail::heuristic(problem, cand);
  detail::SearchResult result;
  double lower_bound = 0;
  if (method == Method::exact) {
    result = detail::exact_search(problem, cand, options, incumbent);
    if (result.status == SolveStatus::node_limit && options.method == Method::automatic) {
      // automatic: hand the problem to the MIP, with what exact found and proved.
      if (result.assignment) incumbent = result.assignment;
      lower_bound = result.lower_bound;
      const std::int64_t exact_nodes = result.nodes;
      method = Method::mip;
      result = detail::mip_search(problem, cand, options, incumbent);
      result.nodes += exact_nodes;
    }
  } else {
    result = detail::mip_search(problem, cand, options, incumbent);
  }
  solution.method = method;
  if (result.infeasible) detail::throw_infeasible(problem, cand);
  if (!result.assignment)
    throw Error("placement solver: exact: node limit exact_node_limit = " + std::to_string(options.exact_node_limit) +
                " reached before any feasible assignment was found (" + std::to_string(n) +
                " blocks): raise the limit, use mip, or merge blocks with subgroups()");
  solution.assignment = *result.assignment;
  solution.prediction = predict(problem, solution.assignment);
  if (!solution.prediction.fits)
    throw Error("placement solver: " + std::string(to_string(method)) +
                ": the solver's assignment exceeds a tier's capacity (numerical tolerance); report this problem");
  solution.status = result.status;
  solution.nodes = result.nodes;
  lower_bound = std::max(lower_bound, result.lower_bound);
  const double t = solution.prediction.time_s;
  if (solution.status != SolveStatus::optimal && t > 0) solution.mip_gap = std::clamp((t - lower_bound) / t, 0.0, 1.0);
  return solution;
}

}  // namespace asteria::planner

// Branch and bound over blocks for the placement problem (see placement_solver.hpp).
//
// Blocks are decided one at a time, forced blocks first, then the others by decreasing least
// total resource-seconds (the decisions that move the sums most come first, so bounds bite
// early). A node holds the resource sums and resting bytes of the decided blocks; its children
// are the options of the next block, visited by increasing lower bound and pruned when
//   - a tier's resting bytes (with the bytes of forced blocks still to come) pass its capacity,
//   - the undecided unforced state exceeds the room left on all tiers together, or
//   - the lower bound reaches the best time known (relative 1e-12: ties are not explored).
// Lower bound, for every weight vector w = (lambda, mu) in a small set (the unit vectors of the
// six resources, and the duals of the root LP relaxation): since T >= sum_r lambda_r U_r and
// bytes_t <= capacity_t in any feasible completion,
//   T >= lambda . U(decided) + mu . (bytes(decided) - capacity)
//        + sum over undecided blocks of min over their options of (lambda . u + mu . bytes),
// the last sum precomputed per depth (suffix sums), so a bound costs O(|w| * resources). And
// the undecided state that device and host have no room for rests on NVMe: its bytes add (at
// least, fractionally) their read and write time to the NVMe resources.
// Identical unforced blocks adjacent in the order take non-decreasing option indices
// (permuting their choices changes neither the sums nor the bytes).
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/planner/solver_detail.hpp"

namespace asteria::planner::detail {

namespace {

bool same_demand(const BlockDemand& a, const BlockDemand& b) {
  return a.state_bytes == b.state_bytes && a.gradient_bytes == b.gradient_bytes && a.weight_bytes == b.weight_bytes &&
         a.device_update_s == b.device_update_s && a.host_update_s == b.host_update_s;
}

struct Search {
  Search(const PlacementProblem& p, const Candidates& c, std::int64_t limit)
      : problem(p), cand(c), node_limit(limit) {}

  const PlacementProblem& problem;
  const Candidates& cand;
  std::int64_t node_limit;

  std::size_t n = 0;
  std::array<double, kTierCount> caps{};
  std::vector<std::size_t> order;          // decision order: depth -> block
  std::vector<bool> identical_to_previous;  // by depth
  std::vector<BoundWeights> weights;
  std::vector<double> weight_constant;                 // mu . capacity (finite tiers only)
  std::vector<std::vector<double>> suffix;             // [w][depth]: cheapest completion
  std::vector<std::array<double, kTierCount>> forced_suffix;  // [depth]: forced bytes still to come
  std::vector<double> unforced_suffix;                 // [depth]: unforced state still to come

  std::vector<int> current;  // by depth: option index
  std::vector<int> best;     // by depth
  double upper = std::numeric_limits<double>::infinity();
  std::int64_t nodes = 0;
  bool gave_up = false;
  // After giving up: the least lower bound among the nodes left unexplored.
  double frontier = std::numeric_limits<double>::infinity();

  double bytes(std::size_t block) const { return problem.blocks[block].state_bytes; }
  static std::size_t tier_of(int option) {
    return static_cast<std::size_t>(kOptions[static_cast<std::size_t>(option)].tier);
  }

  void prepare(const std::optional<BoundWeights>& lp) {
    n = problem.blocks.size();
    caps = capacity_array(problem.capacities);
    std::vector<double> key(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      double least = std::numeric_limits<double>::infinity();
      for (int o : cand.options[i]) {
        const Usage& u = cand.usage[i][static_cast<std::size_t>(o)];
        least = std::min(least, std::accumulate(u.begin(), u.end(), 0.0));
      }
      key[i] = least;
    }
    order.resize(n);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      if (cand.forced[a] != cand.forced[b]) return static_cast<bool>(cand.forced[a]);
      if (key[a] != key[b]) return key[a] > key[b];
      const BlockDemand& x = problem.blocks[a];
      const BlockDemand& y = problem.blocks[b];
      const auto tx = std::tie(x.state_bytes, x.gradient_bytes, x.weight_bytes, x.device_update_s, x.host_update_s);
      const auto ty = std::tie(y.state_bytes, y.gradient_bytes, y.weight_bytes, y.device_update_s, y.host_update_s);
      if (tx != ty) return tx < ty;
      return a < b;
    });
    identical_to_previous.assign(n, false);
    for (std::size_t d = 1; d < n; ++d) {
      const std::size_t a = order[d - 1], b = order[d];
      identical_to_previous[d] =
          !cand.forced[a] && !cand.forced[b] && same_demand(problem.blocks[a], problem.blocks[b]);
    }
    for (int r = 0; r < kResourceCount; ++r) {
      BoundWeights w;
      w.lambda[static_cast<std::size_t>(r)] = 1;
      weights.push_back(w);
    }
    if (lp) weights.push_back(*lp);
    for (BoundWeights& w : weights) {
      double c = 0;
      for (std::size_t t = 0; t < caps.size(); ++t) {
        if (!std::isfinite(caps[t])) w.mu[t] = 0;
        c += w.mu[t] == 0 ? 0 : w.mu[t] * caps[t];
      }
      weight_constant.push_back(c);
      std::vector<double> s(n + 1, 0);
      for (std::size_t d = n; d-- > 0;) {
        const std::size_t i = order[d];
        double least = std::numeric_limits<double>::infinity();
        for (int o : cand.options[i]) least = std::min(least, weighted(w, i, o));
        s[d] = s[d + 1] + least;
      }
      suffix.push_back(std::move(s));
    }
    forced_suffix.assign(n + 1, {});
    unforced_suffix.assign(n + 1, 0);
    for (std::size_t d = n; d-- > 0;) {
      const std::size_t i = order[d];
      forced_suffix[d] = forced_suffix[d + 1];
      unforced_suffix[d] = unforced_suffix[d + 1];
      if (cand.forced[i])
        forced_suffix[d][tier_of(cand.options[i][0])] += bytes(i);
      else
        unforced_suffix[d] += bytes(i);
    }
    current.assign(n, -1);
  }

  double weighted(const BoundWeights& w, std::size_t block, int option) const {
    const Usage& u = cand.usage[block][static_cast<std::size_t>(option)];
    double v = 0;
    for (std::size_t r = 0; r < u.size(); ++r) v += w.lambda[r] * u[r];
    return v + w.mu[tier_of(option)] * bytes(block);
  }

  // Lower bound on T for any feasible completion of the first `depth` decisions.
  double bound(std::size_t depth, const Usage& sums, const std::array<double, kTierCount>& used) const {
    double lb = 0;
    for (std::size_t k = 0; k < weights.size(); ++k) {
      const BoundWeights& w = weights[k];
      double v = suffix[k][depth] - weight_constant[k];
      for (std::size_t r = 0; r < sums.size(); ++r) v += w.lambda[r] * sums[r];
      for (std::size_t t = 0; t < used.size(); ++t) v += w.mu[t] * used[t];
      lb = std::max(lb, v);
    }
    // State that the device and host cannot hold rests on NVMe: the undecided unforced state
    // beyond their room (fractionally) is read and written at least once more.
    const double room = caps[0] - used[0] - forced_suffix[depth][0] + caps[1] - used[1] - forced_suffix[depth][1];
    const double excess = unforced_suffix[depth] - room;
    if (excess > 0) {
      const auto read = static_cast<std::size_t>(Resource::nvme_read);
      const auto write = static_cast<std::size_t>(Resource::nvme_write);
      const ResourceRates& rates = problem.rates;
      double on_read = excess / rates.nvme_read_bytes_per_s;
      if (rates.nvme_shared) {
        on_read += excess / rates.nvme_write_bytes_per_s;
      } else {
        lb = std::max(lb, sums[write] + suffix[write][depth] + excess / rates.nvme_write_bytes_per_s);
      }
      lb = std::max(lb, sums[read] + suffix[read][depth] + on_read);
    }
    return lb;
  }

  bool pruned(double lb) const { return lb >= upper * (1 - 1e-12); }

  void visit(std::size_t depth, const Usage& sums, const std::array<double, kTierCount>& used) {
    if (gave_up) return;
    if (depth == n) {
      const double t = *std::max_element(sums.begin(), sums.end());
      if (t < upper) {
        upper = t;
        best = current;
      }
      return;
    }
    const std::size_t i = order[depth];
    struct Child {
      int option;
      double lb;
      Usage sums;
      std::array<double, kTierCount> used;
    };
    std::array<Child, kOptionCount> children{};
    int count = 0;
    const int floor_option = identical_to_previous[depth] ? current[depth - 1] : -1;
    for (int o : cand.options[i]) {
      if (o < floor_option) continue;
      Child c{o, 0, sums, used};
      const std::size_t t = tier_of(o);
      c.used[t] += bytes(i);
      bool fits = true;
      double room = 0;
      for (std::size_t k = 0; k < caps.size(); ++k) {
        const double need = c.used[k] + forced_suffix[depth + 1][k];
        if (need > caps[k]) fits = false;
        room += caps[k] - need;
      }
      if (!fits || unforced_suffix[depth + 1] > room) continue;
      const Usage& u = cand.usage[i][static_cast<std::size_t>(o)];
      for (std::size_t r = 0; r < u.size(); ++r) c.sums[r] += u[r];
      c.lb = bound(depth + 1, c.sums, c.used);
      if (pruned(c.lb)) continue;
      children[static_cast<std::size_t>(count++)] = c;
    }
    for (int k = 1; k < count; ++k)  // insertion sort by bound: at most five
      for (int m = k; m > 0 && children[static_cast<std::size_t>(m)].lb < children[static_cast<std::size_t>(m - 1)].lb; --m)
        std::swap(children[static_cast<std::size_t>(m)], children[static_cast<std::size_t>(m - 1)]);
    for (int k = 0; k < count; ++k) {
      const Child& c = children[static_cast<std::size_t>(k)];
      if (pruned(c.lb)) break;  // the upper bound may have dropped since
      if (++nodes > node_limit) gave_up = true;
      if (!gave_up) {
        current[depth] = c.option;
        visit(depth + 1, c.sums, c.used);
        if (!gave_up) continue;
        ++k;  // child k's unexplored part is in the frontier from deeper levels
      }
      // Giving up: the children not yet explored bound what is left of this subtree.
      for (; k < count; ++k) frontier = std::min(frontier, children[static_cast<std::size_t>(k)].lb);
      return;
    }
    current[depth] = -1;
  }
};

}  // namespace

SearchResult exact_search(const PlacementProblem& problem, const Candidates& cand, const SolverOptions& options,
                          const std::optional<Assignment>& incumbent) {
  Search s(problem, cand, options.exact_node_limit);
  s.prepare(lp_relaxation_weights(problem, cand));
  if (incumbent) {
    Usage sums{};
    s.best.assign(s.n, -1);
    for (std::size_t d = 0; d < s.n; ++d) {
      const std::size_t i = s.order[d];
      const int o = option_index((*incumbent)[i]);
      s.best[d] = o;
      const Usage& u = cand.usage[i][static_cast<std::size_t>(o)];
      for (std::size_t r = 0; r < u.size(); ++r) sums[r] += u[r];
    }
    s.upper = *std::max_element(sums.begin(), sums.end());
  }
  s.visit(0, Usage{}, std::array<double, kTierCount>{});
  SearchResult result;
  result.nodes = s.nodes;
  if (s.best.empty()) {
    // No leaf, no incumbent: proven infeasible, or given up before finding any assignment.
    result.infeasible = !s.gave_up;
    result.status = SolveStatus::node_limit;
    return result;
  }
  result.status = s.gave_up ? SolveStatus::node_limit : SolveStatus::optimal;
  result.lower_bound = s.gave_up ? std::min(s.frontier, s.upper) : s.upper;
  Assignment a(s.n);
  for (std::size_t d = 0; d < s.n; ++d) a[s.order[d]] = kOptions[static_cast<std::size_t>(s.best[d])];
  result.assignment = std::move(a);
  return result;
}

}  // namespace asteria::planner::detail

// The placement problem as a mixed-integer program, solved by GLPK (see placement_solver.hpp).
//
//   columns  z[i][o] in {0, 1} for every block i and option o it may take; T >= 0
//            (identical unforced blocks share integer columns: see Group)
//   rows     sum_o z[i][o] = 1                                   (one option per block)
//            sum_{i, o resting on t} state_i z[i][o] <= cap_t    (tiers whose capacity binds at all)
//            sum_{i, o} usage_r(i, o) z[i][o] - T <= 0           (every resource r)
//   minimize T
// Bytes are scaled by the largest block's state and seconds by the largest option usage so that
// GLPK's absolute tolerances see numbers near 1. GLPK aborts the process on malformed calls, so
// every index and bound is built here from validated input; its terminal output is switched off
// for the duration of a solve.
#include <glpk.h>

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <map>
#include <memory>
#include <string>

#include "core/common/error.hpp"
#include "core/planner/solver_detail.hpp"

namespace asteria::planner::detail {

namespace {

struct ProblemDeleter {
  void operator()(glp_prob* p) const noexcept { glp_delete_prob(p); }
};
using GlpProb = std::unique_ptr<glp_prob, ProblemDeleter>;

// Switches GLPK's terminal output off and restores it on scope exit.
class QuietGlpk {
 public:
  QuietGlpk() : previous_(glp_term_out(GLP_OFF)) {}
  ~QuietGlpk() { glp_term_out(previous_); }
  QuietGlpk(const QuietGlpk&) = delete;
  QuietGlpk& operator=(const QuietGlpk&) = delete;

 private:
  int previous_;
};

// Blocks with the same demand and no forced choice are interchangeable: the model takes one
// integer column per (group of such blocks, option) counting how many of them take the option,
// which removes the symmetry that makes branch and bound revisit permutations.
struct Group {
  std::vector<std::size_t> blocks;  // blocks[0] stands for all (same demand, same options)
};

std::vector<Group> groups_of(const PlacementProblem& problem, const Candidates& cand) {
  std::vector<Group> groups;
  std::map<std::array<double, 5>, std::size_t> index;
  for (std::size_t i = 0; i < problem.blocks.size(); ++i) {
    const BlockDemand& b = problem.blocks[i];
    if (cand.forced[i]) {
      groups.push_back({{i}});
      continue;
    }
    const std::array<double, 5> key{b.state_bytes, b.gradient_bytes, b.weight_bytes, b.device_update_s,
                                    b.host_update_s};
    const auto [it, added] = index.emplace(key, groups.size());
    if (added)
      groups.push_back({{i}});
    else
      groups[it->second].blocks.push_back(i);
  }
  return groups;
}

struct Model {
  GlpProb prob;
  std::vector<Group> groups;
  double byte_scale = 1;
  double time_scale = 1;
  std::vector<std::vector<int>> column;  // [group][k]: column counting option cand.options[rep][k]
  int t_column = 0;
  std::vector<int> resource_row;  // by resource
  std::array<int, kTierCount> tier_row{};  // 0 when the tier's capacity never binds
};

Model build_model(const PlacementProblem& problem, const Candidates& cand, bool integer) {
  Model m;
  m.groups = groups_of(problem, cand);
  m.prob.reset(glp_create_prob());
  glp_prob* p = m.prob.get();
  const std::size_t n = problem.blocks.size();
  double total_state = 0, largest_usage = 0;
  for (std::size_t i = 0; i < n; ++i) {
    m.byte_scale = std::max(m.byte_scale, problem.blocks[i].state_bytes);
    total_state += problem.blocks[i].state_bytes;
    for (int o : cand.options[i])
      for (double v : cand.usage[i][static_cast<std::size_t>(o)]) largest_usage = std::max(largest_usage, v);
  }
  if (largest_usage > 0) m.time_scale = largest_usage;
  glp_set_obj_dir(p, GLP_MIN);

  // Columns.
  const std::size_t g_count = m.groups.size();
  m.column.resize(g_count);
  int columns = 0;
  for (const Group& g : m.groups) columns += static_cast<int>(cand.options[g.blocks[0]].size());
  glp_add_cols(p, columns + 1);
  int j = 0;
  for (std::size_t g = 0; g < g_count; ++g) {
    const auto size = static_cast<double>(m.groups[g].blocks.size());
    for (std::size_t k = 0; k < cand.options[m.groups[g].blocks[0]].size(); ++k) {
      m.column[g].push_back(++j);
      glp_set_col_bnds(p, j, GLP_DB, 0.0, size);
      if (integer) glp_set_col_kind(p, j, GLP_IV);
    }
  }
  m.t_column = ++j;
  glp_set_col_bnds(p, m.t_column, GLP_LO, 0.0, 0.0);
  glp_set_obj_coef(p, m.t_column, 1.0);

  // Rows and the matrix (1-based triplets; no zeros, no duplicates).
  std::vector<int> ia{0}, ja{0};
  std::vector<double> ar{0.0};
  auto put = [&](int row, int col, double value) {
    if (value == 0) return;
    ia.push_back(row);
    ja.push_back(col);
    ar.push_back(value);
  };
  // Per group and column: the option and the representative block.
  auto option_of = [&](std::size_t g, std::size_t k) { return cand.options[m.groups[g].blocks[0]][k]; };
  const auto caps = capacity_array(problem.capacities);
  int rows = 0;
  glp_add_rows(p, static_cast<int>(g_count));
  for (std::size_t g = 0; g < g_count; ++g) {
    ++rows;
    const auto size = static_cast<double>(m.groups[g].blocks.size());
    glp_set_row_bnds(p, rows, GLP_FX, size, size);
    for (int col : m.column[g]) put(rows, col, 1.0);
  }
  for (int t = 0; t < kTierCount; ++t) {
    const auto tk = static_cast<std::size_t>(t);
    if (!(caps[tk] < total_state)) continue;  // never binds (also: unbounded)
    m.tier_row[tk] = ++rows;
    glp_add_rows(p, 1);
    glp_set_row_bnds(p, rows, GLP_UP, 0.0, caps[tk] / m.byte_scale);
    for (std::size_t g = 0; g < g_count; ++g)
      for (std::size_t k = 0; k < m.column[g].size(); ++k)
        if (static_cast<int>(kOptions[static_cast<std::size_t>(option_of(g, k))].tier) == t)
          put(rows, m.column[g][k], problem.blocks[m.groups[g].blocks[0]].state_bytes / m.byte_scale);
  }
  m.resource_row.assign(kResourceCount, 0);
  for (int r = 0; r < kResourceCount; ++r) {
    m.resource_row[static_cast<std::size_t>(r)] = ++rows;
    glp_add_rows(p, 1);
    glp_set_row_bnds(p, rows, GLP_UP, 0.0, 0.0);
    for (std::size_t g = 0; g < g_count; ++g)
      for (std::size_t k = 0; k < m.column[g].size(); ++k)
        put(rows, m.column[g][k],
            cand.usage[m.groups[g].blocks[0]][static_cast<std::size_t>(option_of(g, k))][static_cast<std::size_t>(r)] /
                m.time_scale);
    put(rows, m.t_column, -1.0);
  }
  glp_load_matrix(p, static_cast<int>(ia.size()) - 1, ia.data(), ja.data(), ar.data());
  return m;
}

// The MIP solution as one choice per block: each group's counts handed out in block order.
Assignment decode(const Model& m, const Candidates& cand, std::size_t n) {
  Assignment a(n);
  for (std::size_t g = 0; g < m.groups.size(); ++g) {
    const std::vector<std::size_t>& blocks = m.groups[g].blocks;
    const std::vector<int>& options = cand.options[blocks[0]];
    std::vector<long> counts(options.size());
    long assigned = 0;
    for (std::size_t k = 0; k < options.size(); ++k) {
      counts[k] = std::max(0L, std::lround(glp_mip_col_val(m.prob.get(), m.column[g][k])));
      assigned += counts[k];
    }
    // Integral within GLPK's tolerance; should rounding ever miscount, the largest count absorbs it.
    const auto largest = static_cast<std::size_t>(std::max_element(counts.begin(), counts.end()) - counts.begin());
    counts[largest] = std::max(0L, counts[largest] + static_cast<long>(blocks.size()) - assigned);
    std::size_t next = 0;
    for (std::size_t k = 0; k < options.size(); ++k)
      for (long c = 0; c < counts[k] && next < blocks.size(); ++c)
        a[blocks[next++]] = kOptions[static_cast<std::size_t>(options[k])];
  }
  return a;
}

std::string glpk_code(int code) {
  switch (code) {
    case GLP_EBOUND: return "GLP_EBOUND (invalid bounds)";
    case GLP_EROOT: return "GLP_EROOT (no optimal basis for the root LP)";
    case GLP_ENOPFS: return "GLP_ENOPFS (no primal feasible solution)";
    case GLP_ENODFS: return "GLP_ENODFS (no dual feasible solution)";
    case GLP_EFAIL: return "GLP_EFAIL (solver failure)";
    case GLP_EMIPGAP: return "GLP_EMIPGAP (relative gap tolerance reached)";
    case GLP_ETMLIM: return "GLP_ETMLIM (time limit reached)";
    case GLP_ESTOP: return "GLP_ESTOP (stopped by the application)";
    default: return "code " + std::to_string(code);
  }
}

struct Progress {
  double gap = -1;  // GLPK's relative gap at the last callback with an incumbent
  std::int64_t nodes = 0;
};

void on_progress(glp_tree* tree, void* info) {
  auto* progress = static_cast<Progress*>(info);
  int active = 0, current = 0, total = 0;
  glp_ios_tree_size(tree, &active, &current, &total);
  progress->nodes = std::max<std::int64_t>(progress->nodes, total);
  const double gap = glp_ios_mip_gap(tree);
  if (std::isfinite(gap) && gap >= 0 && gap < DBL_MAX) progress->gap = gap;
}

double max_of(const Usage& u) { return *std::max_element(u.begin(), u.end()); }

double time_of(const PlacementProblem& problem, const Assignment& a) { return max_of(predict(problem, a).resource_s); }

}  // namespace

std::optional<BoundWeights> lp_relaxation_weights(const PlacementProblem& problem, const Candidates& cand) {
  QuietGlpk quiet;
  Model m = build_model(problem, cand, false);
  glp_smcp parm;
  glp_init_smcp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.presolve = GLP_OFF;  // keeps the duals of every row
  if (glp_simplex(m.prob.get(), &parm) != 0 || glp_get_status(m.prob.get()) != GLP_OPT) return std::nullopt;
  BoundWeights w;
  double sum = 0;
  for (int r = 0; r < kResourceCount; ++r) {
    const double v = std::max(0.0, -glp_get_row_dual(m.prob.get(), m.resource_row[static_cast<std::size_t>(r)]));
    w.lambda[static_cast<std::size_t>(r)] = v;
    sum += v;
  }
  for (std::size_t t = 0; t < w.mu.size(); ++t)
    if (m.tier_row[t] != 0)
      w.mu[t] = std::max(0.0, -glp_get_row_dual(m.prob.get(), m.tier_row[t])) * m.time_scale / m.byte_scale;
  // Any lambda >= 0 summing to at most 1 and any mu >= 0 give a valid bound; scale down if the
  // duals' rounding made lambda sum past 1.
  if (sum > 1) {
    for (double& v : w.lambda) v /= sum;
    for (double& v : w.mu) v /= sum;
  }
  if (sum <= 0) return std::nullopt;
  return w;
}

SearchResult mip_search(const PlacementProblem& problem, const Candidates& cand, const SolverOptions& options,
                        const std::optional<Assignment>& incumbent) {
  QuietGlpk quiet;
  Model m = build_model(problem, cand, true);
  Progress progress;
  glp_iocp parm;
  glp_init_iocp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.presolve = GLP_ON;
  parm.mip_gap = options.mip_gap;
  parm.tol_obj = 1e-10;  // prune only nodes that cannot improve by ~1e-10 (scaled T is O(1..n))
  const double ms = options.time_limit_s * 1000.0;
  parm.tm_lim = ms >= static_cast<double>(INT_MAX) ? INT_MAX : std::max(1, static_cast<int>(ms));
  parm.cb_func = on_progress;
  parm.cb_info = &progress;
  const int code = glp_intopt(m.prob.get(), &parm);
  const int status = glp_mip_status(m.prob.get());

  SearchResult result;
  result.nodes = progress.nodes;
  if (code == GLP_ENOPFS || (code == 0 && status == GLP_NOFEAS)) {
    result.infeasible = true;
    return result;
  }
  if (code != 0 && code != GLP_ETMLIM && code != GLP_EMIPGAP)
    throw Error("placement solver: mip: GLPK's glp_intopt failed: " + glpk_code(code));
  if (status == GLP_OPT || status == GLP_FEAS) result.assignment = decode(m, cand, problem.blocks.size());
  if (code == 0 && status == GLP_OPT) {
    result.status = SolveStatus::optimal;
    result.lower_bound = time_of(problem, *result.assignment);
    return result;
  }
  // Stopped early: keep the better of GLPK's incumbent and the one given; the lower bound is
  // GLPK's last (from its relative gap), 0 when none is known.
  result.status = code == GLP_EMIPGAP ? SolveStatus::gap_tolerance : SolveStatus::time_limit;
  if (result.assignment && progress.gap >= 0) {
    const double t = time_of(problem, *result.assignment);
    result.lower_bound = std::max(0.0, t - progress.gap * (t + DBL_EPSILON));
  }
  if (incumbent && (!result.assignment || time_of(problem, *incumbent) < time_of(problem, *result.assignment)))
    result.assignment = incumbent;
  if (!result.assignment)
    throw Error("placement solver: mip: GLPK found no feasible assignment before stopping: " + glpk_code(code) +
                "; raise time_limit_s or merge blocks with subgroups()");
  return result;
}

}  // namespace asteria::planner::detail

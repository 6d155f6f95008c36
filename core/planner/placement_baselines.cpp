#include "core/planner/placement_baselines.hpp"

#include "core/common/error.hpp"
#include "core/common/number_text.hpp"

namespace asteria::planner {

namespace {

Baseline make(const PlacementProblem& problem, std::string name, const std::vector<Site>& sites) {
  Baseline b;
  b.name = std::move(name);
  b.assignment = rest_by_fill(problem, sites);
  b.prediction = predict(problem, b.assignment);
  return b;
}

}  // namespace

Assignment rest_by_fill(const PlacementProblem& problem, const std::vector<Site>& sites) {
  validate(problem);
  const std::size_t n = problem.blocks.size();
  if (sites.size() != n)
    throw InputError("placement baseline", "sites",
                     "expected one site per block (" + std::to_string(n) + "), found " + std::to_string(sites.size()));
  std::array<double, kTierCount> used{};
  Assignment a(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double s = problem.blocks[i].state_bytes;
    bool placed = false;
    for (Tier tier : {Tier::device, Tier::host, Tier::nvme}) {
      if (tier == Tier::device && sites[i] == Site::host) continue;
      auto& u = used[static_cast<std::size_t>(tier)];
      if (u + s <= problem.capacities.of(tier)) {
        u += s;
        a[i] = {tier, sites[i]};
        placed = true;
        break;
      }
    }
    if (!placed) {
      const std::string label = problem.blocks[i].label.empty() ? "blocks[" + std::to_string(i) + "]"
                                                                : "'" + problem.blocks[i].label + "'";
      const double room = problem.capacities.nvme - used[static_cast<std::size_t>(Tier::nvme)];
      throw InputError("placement problem", "capacities.nvme",
                       "block " + label + " (" + exact_number(s) +
                           " bytes of state) fits no tier under the fill rule (device, host, nvme in block order): " +
                           exact_number(s - room) + " bytes short on nvme, the last resort");
    }
  }
  return a;
}

Baseline all_device_site(const PlacementProblem& problem) {
  return make(problem, "all_device_site", std::vector<Site>(problem.blocks.size(), Site::device));
}

Baseline all_host_site(const PlacementProblem& problem) {
  return make(problem, "all_host_site", std::vector<Site>(problem.blocks.size(), Site::host));
}

Baseline interleaved(const PlacementProblem& problem, int k) {
  if (k < 1) throw InputError("placement baseline", "k", "expected every k-th block with k >= 1, found " + std::to_string(k));
  std::vector<Site> sites(problem.blocks.size(), Site::host);
  for (std::size_t i = 0; i < sites.size(); ++i)
    if ((i + 1) % static_cast<std::size_t>(k) == 0) sites[i] = Site::device;
  return make(problem, "interleaved(k=" + std::to_string(k) + ")", sites);
}

}  // namespace asteria::planner

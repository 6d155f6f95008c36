#include "core/planner/placement_problem.hpp"

#include <cmath>

#include "core/common/error.hpp"
#include "core/common/number_text.hpp"

namespace asteria::planner {

namespace {

constexpr const char* kSource = "placement problem";

std::string block_field(const PlacementProblem& problem, std::size_t i, const char* name) {
  std::string field = "blocks[" + std::to_string(i) + "]";
  if (!problem.blocks[i].label.empty()) field += " ('" + problem.blocks[i].label + "')";
  return field + "." + name;
}

void require_nonnegative(double value, const std::string& field) {
  if (!std::isfinite(value) || value < 0)
    throw InputError(kSource, field, "expected a finite number >= 0, found " + exact_number(value));
}

void require_positive(double value, const std::string& field) {
  if (!std::isfinite(value) || value <= 0)
    throw InputError(kSource, field, "expected a finite number > 0 (bytes/s), found " + exact_number(value));
}

void require_capacity(double value, const std::string& field) {
  if (std::isnan(value) || value < 0)
    throw InputError(kSource, field, "expected bytes >= 0 (or +infinity for unbounded), found " + exact_number(value));
}

}  // namespace

std::string_view to_string(Site site) noexcept {
  switch (site) {
    case Site::device: return "device";
    case Site::host: return "host";
  }
  return "unknown";
}

std::string_view to_string(Resource resource) noexcept {
  switch (resource) {
    case Resource::link_h2d: return "link_h2d";
    case Resource::link_d2h: return "link_d2h";
    case Resource::nvme_read: return "nvme_read";
    case Resource::nvme_write: return "nvme_write";
    case Resource::device_compute: return "device_compute";
    case Resource::host_compute: return "host_compute";
  }
  return "unknown";
}

double Capacities::of(Tier tier) const noexcept {
  switch (tier) {
    case Tier::device: return device;
    case Tier::host: return host;
    case Tier::nvme: return nvme;
  }
  return 0;
}

std::string to_string(BlockChoice choice) {
  return std::string(platform::to_string(choice.tier)) + "/" + std::string(to_string(choice.site));
}

bool allowed(BlockChoice choice) noexcept { return option_index(choice) >= 0; }

int option_index(BlockChoice choice) noexcept {
  for (int o = 0; o < kOptionCount; ++o)
    if (kOptions[static_cast<std::size_t>(o)] == choice) return o;
  return -1;
}

void validate(const PlacementProblem& problem) {
  for (std::size_t i = 0; i < problem.blocks.size(); ++i) {
    const BlockDemand& b = problem.blocks[i];
    require_nonnegative(b.state_bytes, block_field(problem, i, "state_bytes"));
    require_nonnegative(b.gradient_bytes, block_field(problem, i, "gradient_bytes"));
    require_nonnegative(b.weight_bytes, block_field(problem, i, "weight_bytes"));
    require_nonnegative(b.device_update_s, block_field(problem, i, "device_update_s"));
    require_nonnegative(b.host_update_s, block_field(problem, i, "host_update_s"));
  }
  const ResourceRates& r = problem.rates;
  require_positive(r.link_h2d_bytes_per_s, "rates.link_h2d_bytes_per_s");
  require_positive(r.link_d2h_bytes_per_s, "rates.link_d2h_bytes_per_s");
  require_positive(r.nvme_read_bytes_per_s, "rates.nvme_read_bytes_per_s");
  require_positive(r.nvme_write_bytes_per_s, "rates.nvme_write_bytes_per_s");
  if (r.host_workers < 1)
    throw InputError(kSource, "rates.host_workers",
                     "expected at least 1 host worker, found " + std::to_string(r.host_workers));
  require_capacity(problem.capacities.device, "capacities.device");
  require_capacity(problem.capacities.host, "capacities.host");
  require_capacity(problem.capacities.nvme, "capacities.nvme");
}

Usage option_usage(const BlockDemand& block, const ResourceRates& rates, BlockChoice choice) {
  if (!allowed(choice))
    throw InputError(kSource, "choice", "expected an allowed option (device tier with host site is not), found " +
                                            to_string(choice));
  Usage u{};
  auto at = [&u](Resource r) -> double& { return u[static_cast<std::size_t>(r)]; };
  const Resource write_resource = rates.nvme_shared ? Resource::nvme_read : Resource::nvme_write;
  if (choice.tier == Tier::nvme) {
    at(Resource::nvme_read) += block.state_bytes / rates.nvme_read_bytes_per_s;
    at(write_resource) += block.state_bytes / rates.nvme_write_bytes_per_s;
  }
  if (choice.site == Site::device) {
    if (choice.tier != Tier::device) {
      at(Resource::link_h2d) += block.state_bytes / rates.link_h2d_bytes_per_s;
      at(Resource::link_d2h) += block.state_bytes / rates.link_d2h_bytes_per_s;
    }
    at(Resource::device_compute) += block.device_update_s;
  } else {
    at(Resource::link_d2h) += block.gradient_bytes / rates.link_d2h_bytes_per_s;
    at(Resource::link_h2d) += block.weight_bytes / rates.link_h2d_bytes_per_s;
    at(Resource::host_compute) += block.host_update_s / rates.host_workers;
  }
  return u;
}

Prediction predict(const PlacementProblem& problem, const Assignment& assignment) {
  if (assignment.size() != problem.blocks.size())
    throw InputError(kSource, "assignment",
                     "expected one choice per block (" + std::to_string(problem.blocks.size()) + "), found " +
                         std::to_string(assignment.size()));
  Prediction p;
  for (std::size_t i = 0; i < assignment.size(); ++i) {
    if (!allowed(assignment[i]))
      throw InputError(kSource, "assignment[" + std::to_string(i) + "]",
                       "expected an allowed option (device tier with host site is not), found " +
                           to_string(assignment[i]));
    const Usage u = option_usage(problem.blocks[i], problem.rates, assignment[i]);
    for (int r = 0; r < kResourceCount; ++r) p.resource_s[static_cast<std::size_t>(r)] += u[static_cast<std::size_t>(r)];
    p.resting_bytes[static_cast<std::size_t>(assignment[i].tier)] += problem.blocks[i].state_bytes;
  }
  for (int r = 0; r < kResourceCount; ++r) {
    if (p.resource_s[static_cast<std::size_t>(r)] > p.time_s) {
      p.time_s = p.resource_s[static_cast<std::size_t>(r)];
      p.binding = static_cast<Resource>(r);
    }
  }
  for (int t = 0; t < kTierCount; ++t)
    if (p.resting_bytes[static_cast<std::size_t>(t)] > problem.capacities.of(static_cast<Tier>(t))) p.fits = false;
  return p;
}

}  // namespace asteria::planner

#pragma once
// The placement problem of a step's update phase: for every optimizer block (a tile of a
// parameter tensor's optimizer state), where its state rests (Tier: device, host or nvme) and
// where its update runs (Site: on the device, or on the host's CPU workers), under the tiers'
// capacities, so that the predicted time of the update phase is least.
//
// The cost model. Each (tier, site) option of a block charges seconds to six resources:
//   link_h2d, link_d2h   the host<->device link, one resource per direction (full duplex);
//   nvme_read, nvme_write the NVMe disk (one shared resource when ResourceRates::nvme_shared);
//   device_compute        the device's update kernels (BlockDemand::device_update_s, given);
//   host_compute          the host's worker pool (BlockDemand::host_update_s is one worker's
//                         time; the pool divides it by ResourceRates::host_workers).
// With s = state_bytes, g = gradient_bytes, w = weight_bytes, the options charge:
//   device tier, device site: device_compute += device_update_s. The state is where the update
//       runs; nothing moves.
//   host tier, device site:   link_h2d += s / h2d, link_d2h += s / d2h, device_compute +=
//       device_update_s. The state streams up to the device, is updated there and streams back
//       (it changed). Gradient and weights already sit on the device.
//   nvme tier, device site:   nvme_read += s / read, nvme_write += s / write, the link both ways
//       as above, device_compute += device_update_s. NVMe reaches the device through host
//       bounce buffers (no GPUDirect Storage), so the state crosses the link too.
//   host tier, host site:     link_d2h += g / d2h, link_h2d += w / h2d, host_compute +=
//       host_update_s / workers. The gradient goes down to the state, the CPU updates, and the
//       new weights go back up; the state itself never crosses the link.
//   nvme tier, host site:     nvme_read += s / read, nvme_write += s / write, plus the host
//       site's link and host charges above.
//   device tier, host site:   not allowed: the state would cross the link both ways on top of
//       the gradient and weights, always worse than resting it on the host.
// Staging buffers (the device memory a streamed block occupies while it is updated) are not
// counted against the capacities: Capacities are bytes for resting state only.
//
// The model's assumption: the update phase is a pipeline over blocks in which every resource
// works independently and overlaps the others, so the phase takes at least the busiest
// resource's summed time. The predicted time is that maximum (a makespan lower bound: it ignores
// pipeline fill and drain and the order of dependent steps within one block, and assumes the
// host pool's work divides evenly among its workers).
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "core/platform/memory.hpp"

namespace asteria::planner {

using platform::Tier;
using platform::kTierCount;

// Where a block's update runs.
enum class Site { device, host };
std::string_view to_string(Site site) noexcept;

// The resources the update phase uses (see the header comment).
enum class Resource { link_h2d, link_d2h, nvme_read, nvme_write, device_compute, host_compute };
inline constexpr int kResourceCount = 6;
std::string_view to_string(Resource resource) noexcept;

// Seconds per resource, indexed by static_cast<int>(Resource).
using Usage = std::array<double, kResourceCount>;

struct ResourceRates {
  double link_h2d_bytes_per_s = 0;  // host -> device
  double link_d2h_bytes_per_s = 0;  // device -> host (its own resource: the link is full duplex)
  double nvme_read_bytes_per_s = 0;
  double nvme_write_bytes_per_s = 0;
  // A half-duplex disk: reads and writes share one resource. Both then charge nvme_read (each at
  // its own rate) and nvme_write stays 0.
  bool nvme_shared = false;
  int host_workers = 1;  // host update seconds divide among this many workers
};

struct BlockDemand {
  std::string label;  // for messages and reports
  double state_bytes = 0;     // the optimizer state that rests on a tier
  double gradient_bytes = 0;  // moved down for a host update
  double weight_bytes = 0;    // moved up after a host update
  double device_update_s = 0;  // the update on the device
  double host_update_s = 0;    // the update on one host worker
};

// Bytes available for resting state on each tier; +infinity means unbounded.
struct Capacities {
  double device = 0;
  double host = 0;
  double nvme = 0;
  double of(Tier tier) const noexcept;
};

struct BlockChoice {
  Tier tier = Tier::device;
  Site site = Site::device;
  friend bool operator==(const BlockChoice&, const BlockChoice&) = default;
};
std::string to_string(BlockChoice choice);

// The allowed options, in a fixed order (solvers enumerate them in this order): every pair but
// device tier with host site.
inline constexpr int kOptionCount = 5;
inline constexpr std::array<BlockChoice, kOptionCount> kOptions{{
    {Tier::device, Site::device},
    {Tier::host, Site::device},
    {Tier::nvme, Site::device},
    {Tier::host, Site::host},
    {Tier::nvme, Site::host},
}};
bool allowed(BlockChoice choice) noexcept;
int option_index(BlockChoice choice) noexcept;  // index into kOptions, -1 when not allowed

struct PlacementProblem {
  std::vector<BlockDemand> blocks;
  ResourceRates rates;
  Capacities capacities;
};

// One choice per block, in block order.
using Assignment = std::vector<BlockChoice>;

// Throws InputError naming the field and the expectation: block numbers finite and >= 0, rates
// finite and > 0, host_workers >= 1, capacities >= 0 (or +infinity), never NaN.
void validate(const PlacementProblem& problem);

// Seconds `choice` charges each resource for `block` (formulas in the header comment). Throws
// InputError for the disallowed option (device tier, host site).
Usage option_usage(const BlockDemand& block, const ResourceRates& rates, BlockChoice choice);

struct Prediction {
  Usage resource_s{};  // summed usage per resource
  double time_s = 0;   // the busiest resource's sum: the predicted update-phase time
  Resource binding = Resource::device_compute;  // that resource (the first of equals)
  std::array<double, kTierCount> resting_bytes{};  // state bytes resting on each tier
  bool fits = true;  // resting bytes within every tier's capacity
};

// The prediction for `assignment` (one choice per block, each allowed; InputError otherwise).
// Sums run in block order, so one assignment always gives the same numbers.
Prediction predict(const PlacementProblem& problem, const Assignment& assignment);

}  // namespace asteria::planner

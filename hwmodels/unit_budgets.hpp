#pragma once
// What one unit of a hardware profile offers a run: the memory budget of each tier and the
// refresh workers its cores hold. The simulator builds its machine from these, and the placement
// planner (core/planner/step_model.hpp) predicts against the same figures.
#include <cstddef>
#include <vector>

#include "core/runtime/store/store_errors.hpp"
#include "core/workload/model_memory.hpp"
#include "hwmodels/profile.hpp"

namespace asteria::hw {

// Budgets of one unit's tiers, in bytes. `unified`, when non-zero, also bounds device + host
// together (GB10-style memory that the GPU and the CPU allocate from one pool).
struct TierBudgets {
  std::size_t device = 0;
  std::size_t host = 0;
  std::size_t nvme = 0;
  std::size_t unified = 0;  // 0: device and host are separate memories
};

// The budgets a profile implies: device = gpu.memory_bytes (the profile states what the GPU may
// use), host = host_memory.bytes · usable_fraction, nvme = nvme.bytes; for unified memory,
// unified = host_memory.bytes · usable_fraction as well, so device + host stay within the pool.
TierBudgets budgets_from(const HardwareProfile& profile);

// What the optimizer state may use of `budgets` once the model's own memory (weights, gradients,
// activations) is reserved: each tier less the model's bytes there, and a unified pool less the
// model's device and host bytes together (one memory, counted once). Each tier the model alone
// exceeds (the pool: a shortfall of "device + host") is added to `short_of` and left as it was.
TierBudgets less_model_memory(TierBudgets budgets, const workload::ModelMemory& model,
                              std::vector<runtime::TierShortfall>& short_of);

// Refresh workers per unit when none are asked for: the unit's cores less the training loop's one
// (a CPU device: less its gpu.device_threads), divided among workers of cpu.threads_per_worker
// threads each, at least one.
int default_host_workers(const HardwareProfile& profile);

}  // namespace asteria::hw

#include "hwmodels/unit_budgets.hpp"

#include <algorithm>
#include <cmath>

namespace asteria::hw {
namespace {
std::size_t bytes_of(double value) {
  if (!(value > 0.0)) return 0;
  return static_cast<std::size_t>(std::floor(value));
}
}  // namespace

TierBudgets budgets_from(const HardwareProfile& profile) {
  TierBudgets b;
  const double host = profile.host_memory.bytes.value * profile.host_memory.usable_fraction.value;
  b.device = bytes_of(profile.gpu.memory_bytes.value);
  b.host = bytes_of(host);
  b.nvme = bytes_of(profile.nvme.bytes.value);
  if (profile.host_memory.unified) {
    b.unified = b.host;
    b.device = std::min(b.device, b.unified);
  }
  return b;
}

TierBudgets less_model_memory(TierBudgets budgets, const workload::ModelMemory& model,
                              std::vector<runtime::TierShortfall>& short_of) {
  using platform::Tier;
  for (Tier t : {Tier::device, Tier::host, Tier::nvme}) {
    std::size_t& budget = t == Tier::device ? budgets.device : (t == Tier::host ? budgets.host : budgets.nvme);
    if (model.on(t) > budget) short_of.push_back({t, model.on(t), budget, budget});
    else budget -= model.on(t);
  }
  if (budgets.unified != 0) {
    const std::size_t pooled = model.on(Tier::device) + model.on(Tier::host);
    if (pooled > budgets.unified) {
      runtime::TierShortfall pool{Tier::device, pooled, budgets.unified, budgets.unified};
      pool.shared_pool = true;
      short_of.push_back(pool);
    } else {
      budgets.unified -= pooled;
    }
  }
  return budgets;
}

int default_host_workers(const HardwareProfile& profile) {
  const int cores = static_cast<int>(profile.cpu.cores.value);
  const int threads = std::max(1, static_cast<int>(profile.cpu.threads_per_worker.value));
  // The training loop's thread, or a CPU device's stream threads, keep their cores.
  const int kept = profile.device == DeviceKind::cpu ? static_cast<int>(profile.gpu.device_threads.value) : 1;
  return std::max(1, (cores - kept) / threads);
}

}  // namespace asteria::hw

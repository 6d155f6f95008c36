#pragma once
// A real platform for one driver life, as one process would have: device only, or with an NVMe
// tier in a directory of its own (and, optionally, device and host budgets small enough to spill).
#include <cstddef>
#include <filesystem>
#include <optional>

#include "core/real/nvme/nvme_store.hpp"
#include "core/real/real_memory.hpp"
#include "core/real/real_platform.hpp"
#include "core/real/tier_backend.hpp"

namespace asteria::checkpoint::test {

class Machine {
 public:
  // The device alone, default budgets.
  Machine() { build(); }
  // With an NVMe tier in `nvme_dir` (created); budgets: the defaults, device and host as given.
  explicit Machine(const std::filesystem::path& nvme_dir, std::optional<real::TierBudgets> budgets = std::nullopt) {
    std::filesystem::create_directories(nvme_dir);
    store_.emplace(nvme_dir, real::NvmeOptions{});
    tier_.emplace(*store_);
    real::TierBudgets b = budgets.value_or(real::TierBudgets{});
    b.nvme = std::size_t{1} << 30;
    build(&*tier_, b);
  }
  Machine(const Machine&) = delete;
  Machine& operator=(const Machine&) = delete;

  real::RealPlatform& platform() { return *platform_; }

 private:
  void build(real::NvmeTier* nvme = nullptr, real::TierBudgets budgets = {}) {
    real::RealPlatformOptions o;
    o.host_threads = 2;
    o.device_model = {1e15, 0.0, 0.0};
    o.nvme = nvme;
    o.memory.budgets = budgets;
    platform_.emplace(o);
  }

  std::optional<real::NvmeStore> store_;
  std::optional<real::NvmeStoreTier<real::NvmeStore>> tier_;
  std::optional<real::RealPlatform> platform_;  // last: destroyed first
};

}  // namespace asteria::checkpoint::test

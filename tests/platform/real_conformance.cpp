// The real backend joins the conformance suite with emulated and with CPU device kernels, its
// nvme tier backed by RAM; and, where the NVMe store is built, once more over block files.
#include "core/real/real_platform.hpp"
#include "tests/platform/conformance.hpp"
#include "tests/platform/in_memory_nvme_tier.hpp"

#if ASTERIA_HAVE_NVME_STORE
#include "core/real/nvme/nvme_store.hpp"
#include "tests/platform/scratch_directory.hpp"
#endif

namespace asteria::platform::conformance {
namespace {

real::RealPlatformOptions options_for(const Requirements& req, real::DeviceMode mode, real::NvmeTier& nvme) {
  real::RealPlatformOptions options;
  options.memory.budgets = {req.device_capacity, req.host_capacity, req.nvme_capacity};
  options.host_threads = req.host_workers;
  options.device_mode = mode;
  options.nvme = &nvme;
  return options;
}

Backend real_backend(std::string name, real::DeviceMode mode) {
  Backend b;
  b.name = std::move(name);
  b.run = [mode](const Requirements& req, const Scenario& scenario) {
    real::testing::InMemoryNvmeTier nvme;
    real::RealPlatform platform(options_for(req, mode, nvme));
    scenario(platform);
  };
  return b;
}

#if ASTERIA_HAVE_NVME_STORE
Backend real_backend_on_files() {
  Backend b;
  b.name = "emulated_device_nvme_files";
  b.run = [](const Requirements& req, const Scenario& scenario) {
    real::testing::ScratchDirectory dir("asteria-conformance");
    real::NvmeStore store(dir.path(), real::NvmeOptions{});
    real::NvmeStoreTier<real::NvmeStore> nvme(store);
    real::RealPlatform platform(options_for(req, real::DeviceMode::emulated, nvme));
    scenario(platform);
  };
  return b;
}
INSTANTIATE_TEST_SUITE_P(RealFiles, PlatformConformance, ::testing::Values(real_backend_on_files()), backend_name);
INSTANTIATE_TEST_SUITE_P(RealFiles, ConcurrentPlatformConformance, ::testing::Values(real_backend_on_files()),
                         backend_name);
#endif

INSTANTIATE_TEST_SUITE_P(Real, PlatformConformance,
                         ::testing::Values(real_backend("emulated_device", real::DeviceMode::emulated),
                                           real_backend("cpu_device", real::DeviceMode::cpu)),
                         backend_name);
INSTANTIATE_TEST_SUITE_P(Real, ConcurrentPlatformConformance,
                         ::testing::Values(real_backend("emulated_device", real::DeviceMode::emulated),
                                           real_backend("cpu_device", real::DeviceMode::cpu)),
                         backend_name);

}  // namespace
}  // namespace asteria::platform::conformance

// The real backend joins the conformance suite with emulated device kernels (modelled time) and
// with CPU device kernels (measured time), its nvme tier backed by RAM; and, where the NVMe store
// is built, once more over block files.
#include "core/real/real_platform.hpp"
#include "tests/common/recording_sink.hpp"
#include "tests/platform/conformance.hpp"
#include "tests/platform/in_memory_nvme_tier.hpp"

#if ASTERIA_HAVE_NVME_STORE
#include "core/real/nvme/nvme_store.hpp"
#include "tests/platform/scratch_directory.hpp"
#endif

namespace asteria::platform::conformance {
namespace {

real::RealPlatformOptions options_for(const Requirements& req, TimeSource time, real::NvmeTier& nvme,
                                      ActivitySink& sink) {
  real::RealPlatformOptions options;
  options.memory.budgets = {req.device_capacity, req.host_capacity, req.nvme_capacity};
  options.host_threads = req.host_workers;
  options.time = time;
  options.nvme = &nvme;
  if (req.record_activities) options.activities = &sink;
  return options;
}

Backend real_backend(std::string name, TimeSource time) {
  Backend b;
  b.name = std::move(name);
  b.time = time;
  b.run = [time](const Requirements& req, const Scenario& scenario) {
    test::RecordingSink sink(0);  // before the platform: its threads record until it is gone
    real::testing::InMemoryNvmeTier nvme;
    real::RealPlatform platform(options_for(req, time, nvme, sink));
    scenario(platform);
  };
  return b;
}

#if ASTERIA_HAVE_NVME_STORE
Backend real_backend_on_files() {
  Backend b;
  b.name = "emulated_device_nvme_files";
  b.time = TimeSource::modelled;
  b.run = [](const Requirements& req, const Scenario& scenario) {
    test::RecordingSink sink(0);
    real::testing::ScratchDirectory dir("asteria-conformance");
    real::NvmeStore store(dir.path(), real::NvmeOptions{});
    real::NvmeStoreTier<real::NvmeStore> nvme(store);
    real::RealPlatform platform(options_for(req, TimeSource::modelled, nvme, sink));
    scenario(platform);
  };
  return b;
}
INSTANTIATE_TEST_SUITE_P(RealFiles, PlatformConformance, ::testing::Values(real_backend_on_files()), backend_name);
INSTANTIATE_TEST_SUITE_P(RealFiles, ConcurrentPlatformConformance, ::testing::Values(real_backend_on_files()),
                         backend_name);
#endif

INSTANTIATE_TEST_SUITE_P(Real, PlatformConformance,
                         ::testing::Values(real_backend("emulated_device", TimeSource::modelled),
                                           real_backend("cpu_device", TimeSource::measured)),
                         backend_name);
INSTANTIATE_TEST_SUITE_P(Real, ConcurrentPlatformConformance,
                         ::testing::Values(real_backend("emulated_device", TimeSource::modelled),
                                           real_backend("cpu_device", TimeSource::measured)),
                         backend_name);

}  // namespace
}  // namespace asteria::platform::conformance

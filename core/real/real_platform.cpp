#include "core/real/real_platform.hpp"

#include <cmath>
#include <stdexcept>

#if ASTERIA_HAVE_CUDA
#include "core/real/cuda/cuda_gpu_tier.hpp"
#include "core/real/cuda/device.hpp"
#endif

namespace asteria::real {

namespace {
std::unique_ptr<GpuTier> gpu_tier_for(GpuUse use) {
#if ASTERIA_HAVE_CUDA
  if (use == GpuUse::if_present && cuda::query_devices().count > 0) return cuda::make_cuda_gpu_tier(0);
#else
  (void)use;
#endif
  return nullptr;
}
}  // namespace

namespace {
int math_width(const RealPlatformOptions& options) {
  if (options.math_threads > 0) return options.math_threads;
  return options.host_threads > 0 ? options.host_threads : default_host_threads();
}
}  // namespace

RealPlatform::RealPlatform(RealPlatformOptions options)
    : options_(options), board_(sync_), math_threads_(math_width(options)), math_(&math_threads_) {
  platform::ActivitySink* sink = options_.activities;
  const int unit = sink != nullptr ? sink->unit() : 0;
  memory_ = std::make_unique<RealMemory>(options_.memory, board_, clock_, sink, options_.nvme,
                                         gpu_tier_for(options_.gpu));
  const int threads = options_.host_threads > 0 ? options_.host_threads : default_host_threads();
  if (!(options_.host_slowdown >= 1.0) || !std::isfinite(options_.host_slowdown))
    throw std::invalid_argument("RealPlatform: host_slowdown must be a finite factor >= 1");
  host_ = std::make_unique<ThreadPoolExecutor>("host-workers", threads, board_, clock_, sink, unit,
                                               options_.host_slowdown);
  device_ = std::make_unique<DeviceStreamExecutor>(
      DeviceStreamOptions{"device", options_.time, options_.device_model, options_.device_seconds, unit}, board_,
      clock_, sink);
}

RealPlatform::~RealPlatform() = default;

}  // namespace asteria::real

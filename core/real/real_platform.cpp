#include "core/real/real_platform.hpp"

#include <cmath>
#include <stdexcept>

#if ASTERIA_HAVE_CUDA
#include "core/real/cuda/cuda_accelerator.hpp"
#include "core/real/cuda/device.hpp"
#endif

namespace asteria::real {

namespace {
std::shared_ptr<Accelerator> accelerator_for(const RealPlatformOptions& options) {
  if (options.accelerator) return options.accelerator;
#if ASTERIA_HAVE_CUDA
  if (options.gpu == GpuUse::if_present && cuda::query_devices().count > 0)
    return cuda::make_cuda_accelerator(cuda::current_device());
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
    : options_(options),
      accelerator_(accelerator_for(options_)),
      board_(sync_, &clock_),
      math_threads_(math_width(options), "host-workers"),  // the math of refreshes runs as wide as they
      math_(&math_threads_) {
  platform::ActivitySink* sink = options_.activities;
  const int unit = sink != nullptr ? sink->unit() : 0;
  memory_ = std::make_unique<RealMemory>(options_.memory, board_, clock_, sink, options_.nvme,
                                         accelerator_ ? &accelerator_->memory() : nullptr);
  const int threads = options_.host_threads > 0 ? options_.host_threads : default_host_threads();
  if (!(options_.host_slowdown >= 1.0) || !std::isfinite(options_.host_slowdown))
    throw std::invalid_argument("RealPlatform: host_slowdown must be a finite factor >= 1");
  host_ = std::make_unique<ThreadPoolExecutor>("host-workers", threads, board_, clock_, sink, unit,
                                               options_.host_slowdown);
  device_ = std::make_unique<DeviceStreamExecutor>(
      DeviceStreamOptions{"device", options_.time, options_.device_model, options_.device_seconds, unit,
                          accelerator_ ? &accelerator_->math() : nullptr},
      board_, clock_, sink);
}

ops::Device& RealPlatform::math(platform::Tier tier) {
  if (tier == platform::Tier::device && accelerator_) return accelerator_->math();
  return math_;
}

RealPlatform::~RealPlatform() = default;

}  // namespace asteria::real

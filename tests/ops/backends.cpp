#include "tests/ops/backends.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/ops/cpu_device.hpp"
#include "core/ops/cpu_kernels.hpp"
#include "core/real/fork_join_pool.hpp"
#include "tests/ops/staged_device.hpp"
#if ASTERIA_HAVE_CUDA
#include "core/real/cuda/cuda_device.hpp"
#include "core/real/cuda/device.hpp"
#endif

namespace asteria::test {
namespace {

Backend cpu(ops::CpuIsa isa, int threads) {
  Backend b;
  const std::vector<ops::CpuIsa> supported = ops::supported_cpu_isas();
  if (std::find(supported.begin(), supported.end(), isa) == supported.end()) {
    b.unavailable = "this processor does not run " + std::string(ops::to_string(isa));
    return b;
  }
  if (threads > 1) b.runner = std::make_unique<real::ForkJoinPool>(threads);
  b.device = std::make_unique<ops::CpuDevice>(b.runner.get(), isa);
  return b;
}

}  // namespace

std::vector<std::string> backend_names() {
  return {"cpu_generic", "cpu_avx2", "cpu_avx512", "cpu_widest_2_threads", "staged_fallback", "cuda"};
}

Backend make_backend(const std::string& name) {
  if (name == "cpu_generic") return cpu(ops::CpuIsa::generic, 1);
  if (name == "cpu_avx2") return cpu(ops::CpuIsa::avx2, 1);
  if (name == "cpu_avx512") return cpu(ops::CpuIsa::avx512, 1);
  if (name == "cpu_widest_2_threads") return cpu(ops::detect_cpu_isa(), 2);
  if (name == "staged_fallback") {
    Backend b;
    b.device = std::make_unique<StagedDevice>();
    return b;
  }
  if (name == "cuda") {
    Backend b;
#if ASTERIA_HAVE_CUDA
    const real::cuda::DeviceInfo info = real::cuda::query_devices();
    if (info.count == 0) {
      b.unavailable = "no CUDA device (" + info.reason + ")";
      return b;
    }
    b.device = std::make_unique<real::cuda::CudaDevice>(0);
    b.host_bits = false;
#else
    b.unavailable = "built without CUDA";
#endif
    return b;
  }
  throw std::invalid_argument("unknown backend " + name);
}

}  // namespace asteria::test

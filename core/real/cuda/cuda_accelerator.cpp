#include "core/real/cuda/cuda_accelerator.hpp"

#include <string>

#include "core/real/cuda/cuda_device.hpp"
#include "core/real/cuda/cuda_gpu_tier.hpp"

namespace asteria::real::cuda {

namespace {
class CudaAccelerator final : public Accelerator {
 public:
  explicit CudaAccelerator(int device) : memory_(make_cuda_gpu_tier(device)), math_(device) {}
  std::string_view name() const noexcept override { return math_.name(); }
  GpuTier& memory() override { return *memory_; }
  ops::Device& math() override { return math_; }

 private:
  std::unique_ptr<GpuTier> memory_;
  CudaDevice math_;
};
}  // namespace

std::unique_ptr<Accelerator> make_cuda_accelerator(int device) { return std::make_unique<CudaAccelerator>(device); }

}  // namespace asteria::real::cuda

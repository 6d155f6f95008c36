// The CPU and CUDA models behind `asteria train`.
#include "apps/asteria/train_models.hpp"

#include <utility>

#include "core/common/error.hpp"
#include "core/model/gpt_training_model.hpp"
#if ASTERIA_HAVE_CUDA
#include "core/real/cuda/device.hpp"
#include "core/real/cuda/gpt_cuda.hpp"
#include "core/real/cuda/gpt_cuda_training_model.hpp"
#endif

namespace asteria::cli {
namespace {

class CpuTrainModel final : public TrainModel {
 public:
  CpuTrainModel(const workload::ModelConfig& config, std::uint64_t seed) : gpt_(config, seed), adapter_(gpt_) {}
  runtime::TrainingModel<float>& driver_model() override { return adapter_; }
  void set_batch(std::span<const model::TokenId> tokens, int batch, int micro_batches) override {
    if (micro_batches == 0) adapter_.set_batch(tokens, batch);
    else adapter_.set_batch(tokens, batch, micro_batches);
  }
  double last_loss() const override { return adapter_.last_loss(); }
  double loss(std::span<const model::TokenId> tokens, int batch) override { return gpt_.loss(tokens, batch); }
  std::size_t tensor_count() const override { return gpt_.tensor_count(); }
  const workload::WeightSpec& tensor(std::size_t i) const override { return gpt_.tensor(i); }
  std::vector<float> parameters(std::size_t i) const override {
    const std::span<const float> p = std::as_const(gpt_).parameter(i);
    return {p.begin(), p.end()};
  }
  std::size_t parameter_count() const override { return gpt_.parameter_count(); }
  double step_flops(int batch, int length) const override { return gpt_.step_flops(batch, length); }
  std::string device_description() const override { return "model on the cpu"; }

 private:
  model::Gpt<float> gpt_;
  model::GptTrainingModel<float> adapter_;
};

#if ASTERIA_HAVE_CUDA
class CudaTrainModel final : public TrainModel {
 public:
  CudaTrainModel(const workload::ModelConfig& config, std::uint64_t seed) : gpt_(config, seed), adapter_(gpt_) {}
  runtime::TrainingModel<float>& driver_model() override { return adapter_; }
  void set_batch(std::span<const model::TokenId> tokens, int batch, int micro_batches) override {
    if (micro_batches > 0)
      throw InputError("command line", "--micro-batches",
                       "1 with the horizontal schedule on --device cuda: the CUDA model computes the whole batch in "
                       "one pass (per-micro-batch passes run on --device cpu)");
    adapter_.set_batch(tokens, batch);
  }
  double last_loss() const override { return adapter_.last_loss(); }
  double loss(std::span<const model::TokenId> tokens, int batch) override {
    adapter_.sync_parameters_to_device();
    return gpt_.loss(tokens, batch);
  }
  std::size_t tensor_count() const override { return gpt_.tensor_count(); }
  const workload::WeightSpec& tensor(std::size_t i) const override { return gpt_.tensor(i); }
  std::vector<float> parameters(std::size_t i) const override { return adapter_.parameters(i); }
  bool keep_tensors_on(ops::Device& device) override {
    adapter_.keep_on_device(device);
    return true;
  }
  std::size_t parameter_count() const override { return gpt_.parameter_count(); }
  double step_flops(int batch, int length) const override { return gpt_.step_flops(batch, length); }
  std::string device_description() const override { return "model on cuda (" + gpt_.device_name() + ")"; }

 private:
  real::cuda::GptCuda gpt_;
  real::cuda::GptCudaTrainingModel adapter_;
};
#endif

}  // namespace

std::unique_ptr<TrainModel> make_train_model(const std::string& device, const workload::ModelConfig& config,
                                             std::uint64_t seed) {
  if (device == "cpu") return std::make_unique<CpuTrainModel>(config, seed);
  if (device != "cuda") throw InputError("command line", "--device", "expected cpu or cuda, found '" + device + "'");
#if ASTERIA_HAVE_CUDA
  const real::cuda::DeviceInfo info = real::cuda::query_devices();
  if (info.count == 0)
    throw InputError("command line", "--device",
                     "expected cpu on this machine: no usable CUDA device (" + info.reason + ")");
  return std::make_unique<CudaTrainModel>(config, seed);
#else
  throw InputError("command line", "--device", "expected cpu: this build has no CUDA (no toolkit was found)");
#endif
}

}  // namespace asteria::cli

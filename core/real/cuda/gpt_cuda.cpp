// GptCuda: construction (host-drawn weights copied to the device), accessors, host copies and
// the step entry points; the passes are in gpt_cuda_forward.cpp and gpt_cuda_backward.cpp.
#include "core/real/cuda/gpt_cuda.hpp"

#include <stdexcept>
#include <string>
#include <vector>

#include "core/common/error.hpp"
#include "core/model/gpt_layout.hpp"
#include "core/model/rope.hpp"
#include "core/real/cuda/device.hpp"
#include "core/real/cuda/gpt_cuda_state.hpp"

namespace asteria::real::cuda {

namespace {

// The device is checked before any CUDA object is made, so a machine without one gets a
// message that says so rather than the first failing call's.
std::string require_device() {
  const DeviceInfo info = query_devices();
  if (info.count == 0) throw std::runtime_error("GptCuda: no usable CUDA device: " + info.reason);
  return info.name;
}

void upload(float* device, const float* host, std::size_t count, cudaStream_t stream, const char* what) {
  check_cuda(cudaMemcpyAsync(device, host, count * sizeof(float), cudaMemcpyHostToDevice, stream), what);
}

// The rotation table of Gpt<float> (model::RotaryTable: angles in double, rounded once).
void upload_rope(GptCudaState& s) {
  const model::RotaryTable<float> table(s.config.sequence_length, s.config.head_dim());
  const std::size_t count = static_cast<std::size_t>(table.max_length() * table.half());
  std::vector<float> cos(count);
  std::vector<float> sin(count);
  for (linalg::index p = 0; p < table.max_length(); ++p)
    for (linalg::index i = 0; i < table.half(); ++i) {
      cos[static_cast<std::size_t>(p * table.half() + i)] = table.cos(p, i);
      sin[static_cast<std::size_t>(p * table.half() + i)] = table.sin(p, i);
    }
  s.rope_cos = DeviceArray<float>(count);
  s.rope_sin = DeviceArray<float>(count);
  upload(s.rope_cos.data(), cos.data(), count, s.stream(), "upload the RoPE table");
  upload(s.rope_sin.data(), sin.data(), count, s.stream(), "upload the RoPE table");
  s.context.synchronize("upload the RoPE table");  // the host vectors die here
}

}  // namespace

struct GptCuda::Impl {
  explicit Impl(std::string device) { state.device_name = std::move(device); }
  GptCudaState state;
};

GptCuda::GptCuda(const workload::ModelConfig& config, std::uint64_t seed) {
  const workload::WorkloadModel work = workload::build_workload(config);  // validates the sizes
  check_supported(config);
  impl_ = std::make_unique<Impl>(require_device());
  GptCudaState& s = impl_->state;
  s.config = config;
  s.specs = work.weights;
  s.offsets = tensor_offsets(s.specs, &s.total);
  s.index = index_weights(work);
  s.values = DeviceArray<float>(s.total);
  s.gradients = DeviceArray<float>(s.total);
  check_cuda(cudaMemsetAsync(s.gradients.data(), 0, s.total * sizeof(float), s.stream()), "clear the gradients");
  const std::vector<float> initial = initial_parameters<float>(config, s.specs, seed);
  upload(s.values.data(), initial.data(), s.total, s.stream(), "upload the initial weights");
  upload_rope(s);  // synchronizes: `initial` may go
  s.workspace.layers.resize(static_cast<std::size_t>(config.layers));
}

GptCuda::~GptCuda() = default;
GptCuda::GptCuda(GptCuda&&) noexcept = default;
GptCuda& GptCuda::operator=(GptCuda&&) noexcept = default;

const workload::ModelConfig& GptCuda::config() const noexcept { return impl_->state.config; }
std::size_t GptCuda::tensor_count() const noexcept { return impl_->state.specs.size(); }
const workload::WeightSpec& GptCuda::tensor(std::size_t i) const { return impl_->state.specs.at(i); }
std::size_t GptCuda::parameter_count() const noexcept { return impl_->state.total; }
const std::string& GptCuda::device_name() const noexcept { return impl_->state.device_name; }

double GptCuda::forward_backward(std::span<const model::TokenId> tokens, int batch) {
  GptCudaState& s = impl_->state;
  prepare_workspace(s, tokens, batch);
  enqueue_forward(s);
  enqueue_backward(s);
  return read_mean_loss(s);
}

double GptCuda::loss(std::span<const model::TokenId> tokens, int batch) {
  GptCudaState& s = impl_->state;
  prepare_workspace(s, tokens, batch);
  enqueue_forward(s);
  return read_mean_loss(s);
}

namespace {

std::size_t checked_tensor(const GptCudaState& s, std::size_t i, std::size_t host_size) {
  const workload::WeightSpec& spec = s.specs.at(i);
  const auto elements = static_cast<std::size_t>(spec.elements());
  if (host_size != elements)
    throw InputError(spec.name, "host buffer",
                     "expected " + std::to_string(elements) + " floats, found " + std::to_string(host_size));
  return elements;
}

}  // namespace

void GptCuda::copy_parameter_to_host(std::size_t i, std::span<float> out) const {
  const GptCudaState& s = impl_->state;
  const std::size_t count = checked_tensor(s, i, out.size());
  check_cuda(cudaMemcpyAsync(out.data(), s.values.data() + s.offsets[i], count * sizeof(float),
                             cudaMemcpyDeviceToHost, s.stream()),
             "copy a parameter to the host");
  s.context.synchronize("copy a parameter to the host");
}

void GptCuda::copy_gradient_to_host(std::size_t i, std::span<float> out) const {
  const GptCudaState& s = impl_->state;
  const std::size_t count = checked_tensor(s, i, out.size());
  check_cuda(cudaMemcpyAsync(out.data(), s.gradients.data() + s.offsets[i], count * sizeof(float),
                             cudaMemcpyDeviceToHost, s.stream()),
             "copy a gradient to the host");
  s.context.synchronize("copy a gradient to the host");
}

void GptCuda::copy_parameter_from_host(std::size_t i, std::span<const float> in) {
  GptCudaState& s = impl_->state;
  const std::size_t count = checked_tensor(s, i, in.size());
  upload(s.values.data() + s.offsets[i], in.data(), count, s.stream(), "copy a parameter from the host");
  s.context.synchronize("copy a parameter from the host");
}

float* GptCuda::device_parameter(std::size_t i) {
  GptCudaState& s = impl_->state;
  return s.values.data() + s.offsets.at(i);
}

const float* GptCuda::device_gradient(std::size_t i) const {
  const GptCudaState& s = impl_->state;
  return s.gradients.data() + s.offsets.at(i);
}

double GptCuda::step_flops(int batch, int sequence_length) const {
  return model::step_flops(impl_->state.config, batch, sequence_length);
}

}  // namespace asteria::real::cuda

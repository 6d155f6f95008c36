// The step driver's part of a checkpoint: weights, block states where the store keeps them, and
// the preconditioner service's refresh bookkeeping.
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "core/checkpoint/byte_codec.hpp"
#include "core/common/error.hpp"
#include "core/runtime/driver/step_driver.hpp"

namespace asteria::runtime {
namespace {

std::string weights_chunk(const std::string& layer) { return "weights/" + layer; }
std::string description_chunk(const std::string& block) { return "block/" + block + "/description"; }
std::string values_chunk(const std::string& block) { return "block/" + block + "/values"; }
std::string service_chunk(const std::string& block) { return "block/" + block + "/refresh"; }
constexpr const char* kDriverChunk = "driver";
constexpr const char* kServiceChunk = "service";

// The matrix's values row after row, read through `device` (which addresses its memory).
template <linalg::Real T>
std::vector<std::byte> matrix_bytes(ops::Device& device, linalg::ConstMatrixView<T> m) {
  std::vector<T> values(static_cast<std::size_t>(m.rows() * m.cols()));
  linalg::MatrixView<T> host(values.data(), m.rows(), m.cols());
  if (device.host_addressable()) {
    for (index i = 0; i < m.rows(); ++i) std::copy(m.row(i).begin(), m.row(i).end(), host.row(i).begin());
  } else {
    device.download(m, host);
  }
  std::vector<std::byte> out(values.size() * sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

}  // namespace

template <linalg::Real T>
void StepDriver<T>::check_checkpointable() const {
  if (finished_) throw std::logic_error("step driver: a checkpoint after finish()");
  if (options_.numerics == platform::Numerics::shapes)
    throw InputError("checkpoint", "--numerics", "values: a data-free run (shapes) holds no state to save");
  if (carries_updates_)
    throw InputError("checkpoint", "--defer-fraction",
                     "0: deferred updates leave each step's optimizer work open at its end, so no step boundary can be "
                     "saved");
}

template <linalg::Real T>
void StepDriver<T>::save(checkpoint::CheckpointWriter& writer) {
  check_checkpointable();
  interpreter_->wait_in_flight();
  store_->drain();
  checkpoint::ByteWriter driver;
  driver.i64(step_);
  driver.u64(layer_count_);
  driver.u64(blocks_.size());
  for (const Block& b : blocks_) driver.str(b.label);
  writer.add(kDriverChunk, driver.image());
  for (std::size_t l = 0; l < layer_count_; ++l)
    writer.add(weights_chunk(model_.layer(l).name),
               matrix_bytes<T>(platform_.math(model_.tensor_tier()), model_.weight_matrix(l)));
  writer.add(kServiceChunk, service_->save_totals());
  std::vector<std::byte> values;
  for (const Block& b : blocks_) {
    if (!b.local) continue;
    writer.add(description_chunk(b.label), b.optimizer->state().serialize_description());
    values.resize(store_->bytes(b.store_id));
    store_->read(b.store_id, values);
    writer.add(values_chunk(b.label), values);
    writer.add(service_chunk(b.label), service_->save_block(b.service_id));
  }
}

template <linalg::Real T>
void StepDriver<T>::restore(const checkpoint::CheckpointReader& reader) {
  check_checkpointable();
  if (step_ != 0) throw std::logic_error("step driver: restore() after a step");
  const std::string source = reader.slot().string();
  {
    const std::vector<std::byte> image = reader.read(kDriverChunk);
    checkpoint::ByteReader r(image, source + " (chunk driver)");
    const optim::Step step = r.i64("step");
    if (step < 0) throw InputError(r.source(), "step", "expected a step >= 0");
    if (r.u64("layer count") != layer_count_)
      throw InputError(r.source(), "layer count",
                       "expected " + std::to_string(layer_count_) + " layers (a checkpoint of another model)");
    if (r.count("block count", 8) != blocks_.size())
      throw InputError(r.source(), "block count",
                       "expected " + std::to_string(blocks_.size()) +
                           " optimizer blocks (a checkpoint of another model, optimizer or blocking)");
    for (const Block& b : blocks_)
      if (const std::string label = r.str("block label"); label != b.label)
        throw InputError(r.source(), "block label", "expected '" + b.label + "', found '" + label + "'");
    r.expect_end();
    step_ = step;
  }
  // The shapes of every chunk are checked before anything changes; a chunk that fails later
  // (its layout, its refresh image) leaves the driver partly restored, to be discarded.
  std::vector<std::vector<std::byte>> weights(layer_count_);
  for (std::size_t l = 0; l < layer_count_; ++l) {
    const LayerSpec& spec = model_.layer(l);
    weights[l] = reader.read(weights_chunk(spec.name));
    const std::size_t expected = static_cast<std::size_t>(spec.rows * spec.cols) * sizeof(T);
    if (weights[l].size() != expected)
      throw InputError(source, "chunk " + weights_chunk(spec.name),
                       "expected " + std::to_string(expected) + " bytes of weights, found " +
                           std::to_string(weights[l].size()));
  }
  for (const Block& b : blocks_) {
    if (!b.local) continue;
    const std::size_t bytes = store_->bytes(b.store_id);
    const checkpoint::Chunk* chunk = reader.manifest().find(values_chunk(b.label));
    if (const std::size_t found = chunk != nullptr ? chunk->bytes : 0; found != bytes)
      throw InputError(source, "chunk " + values_chunk(b.label),
                       "expected " + std::to_string(bytes) + " bytes of state, found " + std::to_string(found));
  }
  const std::vector<std::byte> service = reader.read(kServiceChunk);
  try {
    service_->restore_totals(service, source + " (chunk service)");
    for (std::size_t l = 0; l < layer_count_; ++l) {
      const linalg::MatrixView<T> w = model_.weight_matrix(l);
      std::vector<T> values(static_cast<std::size_t>(w.rows() * w.cols()));
      if (!values.empty()) std::memcpy(values.data(), weights[l].data(), values.size() * sizeof(T));
      const linalg::ConstMatrixView<T> saved(values.data(), w.rows(), w.cols());
      ops::Device& device = platform_.math(model_.tensor_tier());
      if (device.host_addressable()) {
        for (index i = 0; i < w.rows(); ++i) std::copy(saved.row(i).begin(), saved.row(i).end(), w.row(i).begin());
      } else {
        device.upload(saved, w);
      }
    }
    for (Block& b : blocks_) {
      if (!b.local) continue;
      b.optimizer->state().deserialize_description(reader.read(description_chunk(b.label)),
                                                   source + " (chunk " + description_chunk(b.label) + ")");
      store_->write(b.store_id, reader.read(values_chunk(b.label)));
      service_->restore_block(b.service_id, reader.read(service_chunk(b.label)),
                              source + " (chunk " + service_chunk(b.label) + ")");
    }
  } catch (...) {
    step_ = 0;
    throw;
  }
}

#define ASTERIA_DRIVER_CHECKPOINT(T)                                                  \
  template void StepDriver<T>::check_checkpointable() const;                          \
  template void StepDriver<T>::save(checkpoint::CheckpointWriter&);                    \
  template void StepDriver<T>::restore(const checkpoint::CheckpointReader&);
ASTERIA_DRIVER_CHECKPOINT(float)
ASTERIA_DRIVER_CHECKPOINT(double)
#undef ASTERIA_DRIVER_CHECKPOINT

}  // namespace asteria::runtime

#pragma once
// A block's optimizer state seen as movable bytes, so the state store can place it in a memory
// tier's region and move it between tiers without knowing what the bytes mean.
#include <cstddef>
#include <cstdint>
#include <span>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/optim/block_state.hpp"

namespace asteria::runtime {

class Relocatable {
 public:
  virtual ~Relocatable() = default;

  virtual std::size_t bytes() const = 0;
  virtual bool resident() const = 0;
  // The bytes where they live now; nullptr while evicted.
  virtual std::byte* data() = 0;
  // Copies the bytes into `storage` (bytes() long) and uses it from now on. Requires resident().
  virtual void rebind(std::byte* storage) = 0;
  // Gives the storage up; the bytes were saved elsewhere first.
  virtual void evict() = 0;
  // Uses `storage`, which already holds the bytes (e.g. read back from a lower tier).
  virtual void attach(std::byte* storage) = 0;
  // Copies the bytes into storage the state owns itself, so the store can release its region.
  virtual void adopt_owned_storage() = 0;
  // Takes `bytes` (bytes() of them, read back from memory the host cannot address) into storage
  // the state owns itself, as adopt_owned_storage() would from host memory.
  virtual void adopt(std::span<const std::byte> bytes) = 0;
};

// The adapter for optim::BlockState<T>: the state's arena is the byte image.
template <optim::Real T>
class BlockStateRelocatable final : public Relocatable {
 public:
  explicit BlockStateRelocatable(optim::BlockState<T>& state) : state_(state) {}

  std::size_t bytes() const override { return state_.tensor_bytes(); }
  bool resident() const override { return state_.resident(); }
  std::byte* data() override {
    return state_.resident() ? reinterpret_cast<std::byte*>(state_.values().data()) : nullptr;
  }
  void rebind(std::byte* storage) override { state_.rebind(as_values(storage)); }
  void evict() override { state_.evict(); }
  void attach(std::byte* storage) override { state_.attach(as_values(storage)); }
  void adopt_owned_storage() override { state_.adopt_owned_storage(); }
  void adopt(std::span<const std::byte> bytes) override {
    if (bytes.size() != state_.tensor_bytes())
      throw std::invalid_argument("BlockStateRelocatable: adopt of " + std::to_string(bytes.size()) +
                                  " bytes for a state of " + std::to_string(state_.tensor_bytes()));
    std::vector<T> values(state_.value_count());
    std::memcpy(values.data(), bytes.data(), bytes.size());
    state_.adopt_values(std::move(values));
  }

 private:
  std::span<T> as_values(std::byte* storage) const {
    if (reinterpret_cast<std::uintptr_t>(storage) % alignof(T) != 0)
      throw std::invalid_argument("BlockStateRelocatable: storage is not aligned for the state's values");
    return {reinterpret_cast<T*>(storage), state_.value_count()};
  }

  optim::BlockState<T>& state_;
};

// Bytes that exist only as a count (data-free simulation): the store places, moves and evicts
// them like any block's, on a Memory that holds no data (Memory::holds_data() false), where
// regions have no host address and copies only take time.
class DeclaredBytes final : public Relocatable {
 public:
  explicit DeclaredBytes(std::size_t bytes) : bytes_(bytes) {}
  std::size_t bytes() const override { return bytes_; }
  bool resident() const override { return resident_; }
  std::byte* data() override { return nullptr; }
  void rebind(std::byte* /*storage*/) override { resident_ = true; }
  void evict() override { resident_ = false; }
  void attach(std::byte* /*storage*/) override { resident_ = true; }
  void adopt_owned_storage() override { resident_ = true; }
  void adopt(std::span<const std::byte> /*bytes*/) override { resident_ = true; }

 private:
  std::size_t bytes_;
  bool resident_ = true;
};

}  // namespace asteria::runtime

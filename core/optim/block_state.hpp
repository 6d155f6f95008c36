#pragma once
// Optimizer state of one block as plain data: every tensor lives in one contiguous arena
// (so moving a block between memory tiers or to a file is a single buffer), described by a
// layout of named slots, plus a few named integer counters. Serializable and sizeable.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/linalg/matrix.hpp"

namespace asteria::optim {

using linalg::index;
using linalg::Real;

struct TensorSlot {
  std::string name;
  index rows = 0;
  index cols = 0;
  index offset = 0;  // in elements from the arena start
};

template <Real T>
class BlockState {
 public:
  BlockState() = default;
  // The arena view points into owned_ or into a region: copies would alias, moves keep the buffer.
  BlockState(const BlockState&) = delete;
  BlockState& operator=(const BlockState&) = delete;
  BlockState(BlockState&&) noexcept = default;
  BlockState& operator=(BlockState&&) noexcept = default;

  // Adds a zero-filled tensor; views taken before an add are invalidated.
  int add_tensor(std::string name, index rows, index cols);
  int add_counter(std::string name);
  // Adds every slot of `layout` in order, each where the layout places it (std::logic_error
  // otherwise), then every counter: how a block builds its state from its shape model
  // (optim::state_layout, optim::state_counters), so the two are one description.
  void add_layout(std::span<const TensorSlot> layout, std::span<const std::string> counters);

  // Slot of the tensor (counter) named `name`. find_tensor: -1 when there is none (optional
  // tensors); tensor_slot, counter_slot: a missing name is a programming error (std::logic_error).
  int find_tensor(std::string_view name) const noexcept;
  int tensor_slot(std::string_view name) const;
  int counter_slot(std::string_view name) const;

  linalg::MatrixView<T> tensor(int slot) noexcept;
  linalg::ConstMatrixView<T> tensor(int slot) const noexcept;
  std::int64_t& counter(int slot) noexcept { return counters_[static_cast<std::size_t>(slot)]; }
  std::int64_t counter(int slot) const noexcept { return counters_[static_cast<std::size_t>(slot)]; }

  const std::vector<TensorSlot>& layout() const noexcept { return slots_; }
  const std::vector<std::string>& counter_names() const noexcept { return counter_names_; }
  std::span<T> values() noexcept { return arena_; }
  std::span<const T> values() const noexcept { return arena_; }
  std::size_t value_count() const noexcept { return count_; }
  std::size_t tensor_bytes() const noexcept { return count_ * sizeof(T); }

  // Where the arena lives. By default the state owns it; a tier manager may move it into a
  // region it owns (rebind: values copied there), take it away after saving the values
  // elsewhere (evict: tensors are then inaccessible), and give it back (attach: the storage
  // already holds the values, e.g. read back from NVMe). Layout and counters always stay.
  bool resident() const noexcept { return resident_; }
  bool owns_storage() const noexcept { return resident_ && arena_.data() == owned_.data(); }
  void rebind(std::span<T> storage);
  void evict() noexcept;
  void attach(std::span<T> storage);
  void adopt_owned_storage();  // back to an arena owned by the state (values copied)
  // Back to an arena owned by the state that holds `values` (value_count() of them): the values
  // were read back from storage the host cannot address.
  void adopt_values(std::vector<T> values);

  // Self-describing byte image: layout, counters and values. deserialize() accepts only an
  // image whose layout matches this state's; otherwise it throws asteria::InputError naming
  // `source` and leaves the state untouched.
  std::vector<std::byte> serialize() const;
  void deserialize(std::span<const std::byte> image, const std::string& source);
  // The same without the values (layout and counters), for values that travel on their own (a
  // checkpoint reads them from wherever the state store keeps them). Works while evicted; the
  // layout is checked as by deserialize().
  std::vector<std::byte> serialize_description() const;
  void deserialize_description(std::span<const std::byte> image, const std::string& source);

 private:
  std::vector<TensorSlot> slots_;
  std::vector<std::string> counter_names_;
  std::vector<std::int64_t> counters_;
  std::vector<T> owned_;
  std::span<T> arena_;
  std::size_t count_ = 0;
  bool resident_ = true;
};

}  // namespace asteria::optim

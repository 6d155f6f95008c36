#include "core/optim/block_state.hpp"

#include <array>
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "core/common/error.hpp"

namespace asteria::optim {
namespace {

constexpr std::array<char, 8> kMagic = {'A', 'S', 'T', 'B', 'L', 'K', '1', '\0'};

class Writer {
 public:
  explicit Writer(std::vector<std::byte>& out) : out_(out) {}
  void raw(const void* p, std::size_t n) {
    if (n == 0) return;
    const std::size_t at = out_.size();
    out_.resize(at + n);
    std::memcpy(out_.data() + at, p, n);
  }
  void u64(std::uint64_t v) { raw(&v, sizeof v); }
  void i64(std::int64_t v) { raw(&v, sizeof v); }
  void str(const std::string& s) {
    u64(s.size());
    raw(s.data(), s.size());
  }

 private:
  std::vector<std::byte>& out_;
};

class Reader {
 public:
  Reader(std::span<const std::byte> in, const std::string& source) : in_(in), source_(source) {}
  void raw(void* p, std::size_t n, const char* field) {
    if (n > in_.size() - pos_) throw InputError(source_, field, "image truncated");
    std::memcpy(p, in_.data() + pos_, n);
    pos_ += n;
  }
  std::uint64_t u64(const char* field) {
    std::uint64_t v = 0;
    raw(&v, sizeof v, field);
    return v;
  }
  std::int64_t i64(const char* field) {
    std::int64_t v = 0;
    raw(&v, sizeof v, field);
    return v;
  }
  std::string str(const char* field) {
    const std::uint64_t n = u64(field);
    if (n > in_.size() - pos_) throw InputError(source_, field, "image truncated");
    std::string s(n, '\0');
    raw(s.data(), n, field);
    return s;
  }
  bool done() const { return pos_ == in_.size(); }

 private:
  std::span<const std::byte> in_;
  std::size_t pos_ = 0;
  const std::string& source_;
};

}  // namespace

template <Real T>
int BlockState<T>::add_tensor(std::string name, index rows, index cols) {
  if (!owns_storage()) throw std::logic_error("BlockState::add_tensor: only while the state owns its arena");
  const auto offset = static_cast<index>(count_);
  slots_.push_back({std::move(name), rows, cols, offset});
  count_ += static_cast<std::size_t>(rows * cols);
  owned_.resize(count_, T(0));
  arena_ = owned_;
  return static_cast<int>(slots_.size() - 1);
}

template <Real T>
int BlockState<T>::add_counter(std::string name) {
  counter_names_.push_back(std::move(name));
  counters_.push_back(0);
  return static_cast<int>(counters_.size() - 1);
}

template <Real T>
void BlockState<T>::add_layout(std::span<const TensorSlot> layout, std::span<const std::string> counters) {
  for (const TensorSlot& slot : layout) {
    if (slot.offset != static_cast<index>(count_))
      throw std::logic_error("BlockState::add_layout: tensor " + slot.name + " is not where the layout places it");
    add_tensor(slot.name, slot.rows, slot.cols);
  }
  for (const std::string& name : counters) add_counter(name);
}

template <Real T>
int BlockState<T>::find_tensor(std::string_view name) const noexcept {
  const auto it = std::find_if(slots_.begin(), slots_.end(), [&](const TensorSlot& s) { return s.name == name; });
  return it == slots_.end() ? -1 : static_cast<int>(it - slots_.begin());
}

template <Real T>
int BlockState<T>::tensor_slot(std::string_view name) const {
  const int slot = find_tensor(name);
  if (slot < 0) throw std::logic_error("BlockState: no tensor named " + std::string(name));
  return slot;
}

template <Real T>
int BlockState<T>::counter_slot(std::string_view name) const {
  const auto it = std::find(counter_names_.begin(), counter_names_.end(), name);
  if (it == counter_names_.end()) throw std::logic_error("BlockState: no counter named " + std::string(name));
  return static_cast<int>(it - counter_names_.begin());
}

template <Real T>
linalg::MatrixView<T> BlockState<T>::tensor(int slot) noexcept {
  const TensorSlot& s = slots_[static_cast<std::size_t>(slot)];
  return {arena_.data() + s.offset, s.rows, s.cols};
}

template <Real T>
linalg::ConstMatrixView<T> BlockState<T>::tensor(int slot) const noexcept {
  const TensorSlot& s = slots_[static_cast<std::size_t>(slot)];
  return {arena_.data() + s.offset, s.rows, s.cols};
}

// The layout and the counters: the image up to the values.
template <Real T>
void write_description(Writer& w, const std::vector<TensorSlot>& slots, const std::vector<std::string>& counter_names,
                       const std::vector<std::int64_t>& counters) {
  w.raw(kMagic.data(), kMagic.size());
  w.u64(sizeof(T));
  w.u64(slots.size());
  for (const TensorSlot& s : slots) {
    w.str(s.name);
    w.i64(s.rows);
    w.i64(s.cols);
    w.i64(s.offset);
  }
  w.u64(counters.size());
  for (std::size_t i = 0; i < counters.size(); ++i) {
    w.str(counter_names[i]);
    w.i64(counters[i]);
  }
}

// Checks the image's layout against this state's and returns its counters.
template <Real T>
std::vector<std::int64_t> read_description(Reader& r, const std::vector<TensorSlot>& slots,
                                           const std::vector<std::string>& counter_names, const std::string& source) {
  std::array<char, 8> magic{};
  r.raw(magic.data(), magic.size(), "magic");
  if (magic != kMagic) throw InputError(source, "magic", "expected an Asteria block-state image");
  if (r.u64("element size") != sizeof(T))
    throw InputError(source, "element size", "expected " + std::to_string(sizeof(T)) + "-byte elements");
  if (r.u64("slot count") != slots.size())
    throw InputError(source, "slot count", "expected " + std::to_string(slots.size()) + " tensors");
  for (const TensorSlot& s : slots) {
    const std::string name = r.str("slot name");
    const index rows = r.i64("slot rows");
    const index cols = r.i64("slot cols");
    const index offset = r.i64("slot offset");
    if (name != s.name || rows != s.rows || cols != s.cols || offset != s.offset)
      throw InputError(source, "tensor " + s.name,
                       "expected " + std::to_string(s.rows) + "x" + std::to_string(s.cols) + " at offset " +
                           std::to_string(s.offset) + ", found '" + name + "' " + std::to_string(rows) + "x" +
                           std::to_string(cols));
  }
  if (r.u64("counter count") != counter_names.size())
    throw InputError(source, "counter count", "expected " + std::to_string(counter_names.size()) + " counters");
  std::vector<std::int64_t> counters(counter_names.size());
  for (std::size_t i = 0; i < counter_names.size(); ++i) {
    if (r.str("counter name") != counter_names[i])
      throw InputError(source, "counter " + counter_names[i], "name mismatch");
    counters[i] = r.i64("counter value");
  }
  return counters;
}

template <Real T>
std::vector<std::byte> BlockState<T>::serialize() const {
  if (!resident_) throw std::logic_error("BlockState::serialize: state is evicted");
  std::vector<std::byte> out;
  out.reserve(tensor_bytes() + 256);
  Writer w(out);
  write_description<T>(w, slots_, counter_names_, counters_);
  w.u64(arena_.size());
  w.raw(arena_.data(), tensor_bytes());
  return out;
}

template <Real T>
std::vector<std::byte> BlockState<T>::serialize_description() const {
  std::vector<std::byte> out;
  Writer w(out);
  write_description<T>(w, slots_, counter_names_, counters_);
  return out;
}

template <Real T>
void BlockState<T>::deserialize(std::span<const std::byte> image, const std::string& source) {
  if (!resident_) throw std::logic_error("BlockState::deserialize: state is evicted");
  Reader r(image, source);
  std::vector<std::int64_t> counters = read_description<T>(r, slots_, counter_names_, source);
  if (r.u64("value count") != arena_.size())
    throw InputError(source, "value count", "expected " + std::to_string(arena_.size()) + " values");
  std::vector<T> values(arena_.size());
  r.raw(values.data(), values.size() * sizeof(T), "values");
  if (!r.done()) throw InputError(source, "length", "trailing bytes after the values");
  // Commit only once the whole image has been validated.
  counters_ = std::move(counters);
  std::copy(values.begin(), values.end(), arena_.begin());
}

template <Real T>
void BlockState<T>::deserialize_description(std::span<const std::byte> image, const std::string& source) {
  Reader r(image, source);
  std::vector<std::int64_t> counters = read_description<T>(r, slots_, counter_names_, source);
  if (!r.done()) throw InputError(source, "length", "trailing bytes after the counters");
  counters_ = std::move(counters);
}

template <Real T>
void BlockState<T>::rebind(std::span<T> storage) {
  if (storage.size() != count_) throw std::invalid_argument("BlockState::rebind: storage size differs from the layout");
  if (!resident_) throw std::logic_error("BlockState::rebind: state is evicted; use attach()");
  if (storage.data() == arena_.data()) return;
  std::copy(arena_.begin(), arena_.end(), storage.begin());
  arena_ = storage;
  std::vector<T>().swap(owned_);
}

template <Real T>
void BlockState<T>::evict() noexcept {
  arena_ = {};
  std::vector<T>().swap(owned_);
  resident_ = false;
}

template <Real T>
void BlockState<T>::attach(std::span<T> storage) {
  if (storage.size() != count_) throw std::invalid_argument("BlockState::attach: storage size differs from the layout");
  std::vector<T>().swap(owned_);
  arena_ = storage;
  resident_ = true;
}

template <Real T>
void BlockState<T>::adopt_owned_storage() {
  if (owns_storage()) return;
  if (!resident_) throw std::logic_error("BlockState::adopt_owned_storage: state is evicted");
  std::vector<T> owned(arena_.begin(), arena_.end());
  owned_ = std::move(owned);
  arena_ = owned_;
}

template <Real T>
void BlockState<T>::adopt_values(std::vector<T> values) {
  if (values.size() != count_)
    throw std::invalid_argument("BlockState::adopt_values: " + std::to_string(values.size()) + " values for a layout of " +
                                std::to_string(count_));
  owned_ = std::move(values);
  arena_ = owned_;
  resident_ = true;
}

template class BlockState<float>;
template class BlockState<double>;

}  // namespace asteria::optim

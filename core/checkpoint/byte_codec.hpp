#pragma once
// Little-endian encoding of the plain values a checkpoint chunk holds (integers, doubles,
// strings, byte runs). The reader checks every length against what is left and names the chunk
// and field of a short or malformed image, so a corrupted chunk is an InputError, never a read
// past the end.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "core/common/error.hpp"

namespace asteria::checkpoint {

static_assert(std::endian::native == std::endian::little, "checkpoint images are little-endian");

class ByteWriter {
 public:
  void u64(std::uint64_t v) { raw(&v, sizeof v); }
  void i64(std::int64_t v) { raw(&v, sizeof v); }
  void f64(double v) { raw(&v, sizeof v); }
  void boolean(bool v) { u64(v ? 1 : 0); }
  void str(const std::string& s) {
    u64(s.size());
    raw(s.data(), s.size());
  }
  void bytes(std::span<const std::byte> b) {
    u64(b.size());
    raw(b.data(), b.size());
  }
  void raw(const void* data, std::size_t n) {
    const auto* p = static_cast<const std::byte*>(data);
    out_.insert(out_.end(), p, p + n);
  }
  std::vector<std::byte>& image() noexcept { return out_; }

 private:
  std::vector<std::byte> out_;
};

class ByteReader {
 public:
  // `source` names the image in errors ("checkpoint slot-a/state.bin, chunk service/3").
  ByteReader(std::span<const std::byte> image, std::string source) : in_(image), source_(std::move(source)) {}

  std::uint64_t u64(const char* field) { return scalar<std::uint64_t>(field); }
  std::int64_t i64(const char* field) { return scalar<std::int64_t>(field); }
  double f64(const char* field) { return scalar<double>(field); }
  bool boolean(const char* field) {
    const std::uint64_t v = u64(field);
    if (v > 1) throw InputError(source_, field, "expected 0 or 1, found " + std::to_string(v));
    return v == 1;
  }
  std::string str(const char* field) {
    const std::span<const std::byte> b = bytes(field);
    return {reinterpret_cast<const char*>(b.data()), b.size()};
  }
  std::span<const std::byte> bytes(const char* field) {
    const std::uint64_t n = u64(field);
    return take(n, field);
  }
  std::span<const std::byte> take(std::uint64_t n, const char* field) {
    if (n > in_.size() - pos_)
      throw InputError(source_, field,
                       "expected " + std::to_string(n) + " more bytes, found " + std::to_string(in_.size() - pos_) +
                           " (truncated or corrupted)");
    const std::span<const std::byte> out = in_.subspan(pos_, static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return out;
  }
  // A count of items of at least `item_bytes` each, checked against what is left.
  std::uint64_t count(const char* field, std::size_t item_bytes) {
    const std::uint64_t n = u64(field);
    if (item_bytes > 0 && n > (in_.size() - pos_) / item_bytes)
      throw InputError(source_, field, "a count of " + std::to_string(n) + " does not fit the image (corrupted)");
    return n;
  }
  void expect_end() const {
    if (pos_ != in_.size())
      throw InputError(source_, "length", std::to_string(in_.size() - pos_) + " unexpected trailing bytes");
  }
  const std::string& source() const noexcept { return source_; }

 private:
  template <class V>
  V scalar(const char* field) {
    V v{};
    std::memcpy(&v, take(sizeof v, field).data(), sizeof v);
    return v;
  }

  std::span<const std::byte> in_;
  std::size_t pos_ = 0;
  std::string source_;
};

}  // namespace asteria::checkpoint

#pragma once
// Outcome of a numerical kernel that may fail on valid input (no convergence, singular input).
// Kernels return a Status instead of writing non-finite output.
#include <string>
#include <utility>

namespace asteria {

enum class StatusCode {
  ok,
  non_finite_input,   // input held NaN or Inf
  no_convergence,     // iteration limit reached or LAPACK reported failed convergence
  invalid_argument,   // shapes or parameters outside the kernel's contract
  non_finite_output,  // the computation overflowed
  io_error,           // a read or write failed, came up short, or read back corrupted data
  resource_exhausted, // a memory tier or disk has no room
  failed,             // work raised an error (the reason holds its message)
};

const char* to_string(StatusCode code) noexcept;

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string reason) : code_(code), reason_(std::move(reason)) {}
  static Status success() { return {}; }

  bool ok() const noexcept { return code_ == StatusCode::ok; }
  StatusCode code() const noexcept { return code_; }
  const std::string& reason() const noexcept { return reason_; }
  std::string message() const { return ok() ? "ok" : std::string(to_string(code_)) + ": " + reason_; }

 private:
  StatusCode code_ = StatusCode::ok;
  std::string reason_;
};

}  // namespace asteria

#pragma once
// Errors raised on bad input or unrecoverable numerical trouble. The library never exits or
// aborts on user input: it throws one of these, and callers (the CLI) report the message.
#include <stdexcept>
#include <string>

namespace asteria {

// Base of every Asteria error.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Input that does not meet its contract: names the source (file or option), the field and
// what was expected, e.g. "grads.npy: shape: expected (steps, 4, 3), found (10, 4)".
class InputError : public Error {
 public:
  InputError(const std::string& source, const std::string& field, const std::string& expectation)
      : Error(source + ": " + field + ": " + expectation), source_(source), field_(field) {}
  const std::string& source() const noexcept { return source_; }
  const std::string& field() const noexcept { return field_; }

 private:
  std::string source_;
  std::string field_;
};

// Numerics that failed beyond the configured tolerance (e.g. too many consecutive failed
// preconditioner refreshes, or a non-finite update under the "error" policy).
class NumericalError : public Error {
 public:
  using Error::Error;
};

}  // namespace asteria

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
      : Error(source + ": " + field + ": " + expectation), source_(source), field_(field), expectation_(expectation) {}
  const std::string& source() const noexcept { return source_; }
  const std::string& field() const noexcept { return field_; }
  // What was expected (and found): the message without its source and field, for a reader that
  // names the value's place itself (a study file's field for a setting's value).
  const std::string& expectation() const noexcept { return expectation_; }

 private:
  std::string source_;
  std::string field_;
  std::string expectation_;
};

// A file that could not be written or read back intact (disk full, I/O error, a short or torn
// write, a checksum mismatch): names the file and what was being done, e.g.
// "run/resume/slot-b/state.bin: write chunk 'block/layer3.w block 2/values': No space left on device".
class IoError : public Error {
 public:
  IoError(const std::string& file, const std::string& what, const std::string& reason)
      : Error(file + ": " + what + ": " + reason), file_(file) {}
  const std::string& file() const noexcept { return file_; }

 private:
  std::string file_;
};

// Numerics that failed beyond the configured tolerance (e.g. too many consecutive failed
// preconditioner refreshes, or a non-finite update under the "error" policy).
class NumericalError : public Error {
 public:
  using Error::Error;
};

}  // namespace asteria

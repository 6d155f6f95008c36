#include "core/common/status.hpp"

namespace asteria {

const char* to_string(StatusCode code) noexcept {
  switch (code) {
    case StatusCode::ok: return "ok";
    case StatusCode::non_finite_input: return "non-finite input";
    case StatusCode::no_convergence: return "no convergence";
    case StatusCode::invalid_argument: return "invalid argument";
    case StatusCode::non_finite_output: return "non-finite output";
    case StatusCode::io_error: return "I/O error";
    case StatusCode::resource_exhausted: return "resource exhausted";
    case StatusCode::failed: return "failed";
  }
  return "unknown";
}

}  // namespace asteria

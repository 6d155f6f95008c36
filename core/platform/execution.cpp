#include "core/platform/execution.hpp"

#include "core/common/error.hpp"

namespace asteria::platform {

std::string_view to_string(Numerics numerics) noexcept {
  switch (numerics) {
    case Numerics::values: return "values";
    case Numerics::refresh: return "refresh";
    case Numerics::shapes: return "shapes";
  }
  return "values";
}

std::string_view to_string(TimeSource time) noexcept {
  switch (time) {
    case TimeSource::measured: return "measured";
    case TimeSource::modelled: return "modelled";
    case TimeSource::simulated: return "simulated";
  }
  return "measured";
}

Numerics parse_numerics(std::string_view text, const std::string& source, const std::string& field) {
  if (text == "values") return Numerics::values;
  if (text == "refresh") return Numerics::refresh;
  if (text == "shapes") return Numerics::shapes;
  throw InputError(source, field, "expected values, refresh or shapes, found \"" + std::string(text) + "\"");
}

TimeSource parse_time_source(std::string_view text, const std::string& source, const std::string& field) {
  if (text == "measured") return TimeSource::measured;
  if (text == "modelled") return TimeSource::modelled;
  if (text == "simulated") return TimeSource::simulated;
  throw InputError(source, field, "expected measured, modelled or simulated, found \"" + std::string(text) + "\"");
}

void validate(Numerics numerics, TimeSource time, const std::string& source) {
  if (numerics == Numerics::shapes && time != TimeSource::simulated)
    throw InputError(source, "--numerics",
                     "shapes with simulated time (--time simulated); with " + std::string(to_string(time)) +
                         " time there would be nothing to measure and refreshes would take no time");
  if (numerics == Numerics::refresh && time == TimeSource::measured)
    throw InputError(source, "--numerics",
                     "values with measured time: refresh skips the device's numerics after the warm-up, so "
                     "measured time would leave them out (refresh needs --time modelled or simulated)");
}

}  // namespace asteria::platform

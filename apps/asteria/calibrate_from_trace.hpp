#pragma once
// `asteria calibrate --from-trace TRACE [--base PROFILE] --out FILE`: the base profile with the
// coefficients a recorded run identifies fitted to it (hwmodels/calibrate/trace_fit.hpp), written
// and re-loaded; prints each group's residuals and each coefficient's fit. Unless `force`, a
// trace of fewer than 3 steps is refused and coefficients with standard errors over half their
// value keep the base's (said so).
#include <filesystem>
#include <iosfwd>
#include <string>

namespace asteria::cli {

void calibrate_from_trace(const std::filesystem::path& trace, const std::string& base,
                          const std::filesystem::path& out, const std::string& name, bool force,
                          std::ostream& report);

}  // namespace asteria::cli

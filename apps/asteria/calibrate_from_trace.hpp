#pragma once
// `asteria calibrate --from-trace TRACE [--base PROFILE] --out FILE`: the base profile with the
// coefficients a recorded run identifies fitted to it (hwmodels/calibrate/trace_fit.hpp), written
// and re-loaded; prints each group's residuals and each coefficient's fit.
#include <filesystem>
#include <iosfwd>
#include <string>

namespace asteria::cli {

void calibrate_from_trace(const std::filesystem::path& trace, const std::string& base,
                          const std::filesystem::path& out, const std::string& name, std::ostream& report);

}  // namespace asteria::cli

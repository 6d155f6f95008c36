// asteria calibrate --from-trace: a profile fitted to a recorded run.
#include <ostream>

#include "apps/asteria/calibrate_from_trace.hpp"
#include "apps/asteria/table.hpp"
#include "core/common/error.hpp"
#include "core/common/number_text.hpp"
#include "core/io/atomic_file.hpp"
#include "hwmodels/calibrate/trace_fit.hpp"
#include "hwmodels/profile_loader.hpp"
#include "traces/native_trace.hpp"

namespace asteria::cli {

void calibrate_from_trace(const std::filesystem::path& trace_path, const std::string& base_name,
                          const std::filesystem::path& out_path, const std::string& name, bool force,
                          std::ostream& out) {
  const traces::NativeTrace trace = traces::read_native_trace(trace_path);
  const hw::HardwareProfile base = hw::load_profile(hw::find_profile(base_name));
  hw::calibrate::TraceFitOptions options;
  options.force = force;
  hw::calibrate::TraceCalibration fit = hw::calibrate::calibrate_from_trace(trace, trace_path.string(), base, options);
  fit.profile.name = name.empty() ? out_path.stem().string() : name;
  fit.profile.description = "Fitted to the trace " + trace_path.string() + " on top of " + base.name + ". " +
                            base.description;
  io::write_file_atomically(out_path, hw::profile_to_yaml(fit.profile));
  (void)hw::load_profile(out_path);  // proves the written profile valid

  out << "calibrated " << out_path.string() << " from " << trace_path.string() << " (base " << base.name << ")\n";
  Table groups{{"group", "intervals", "rms relative residual", "max relative residual"}, {false, true, true, true}, {}};
  for (const auto& g : fit.groups)
    groups.rows.push_back({g.group, std::to_string(g.observations), significant(100.0 * g.rms_relative_residual, 3) + "%",
                           significant(100.0 * g.max_relative_residual, 3) + "%"});
  out << table_text(groups) << '\n';
  Table coefficients{{"field", "group", "fitted", "standard error", "applied"}, {false, false, true, true, false}, {}};
  for (const auto& c : fit.coefficients)
    coefficients.rows.push_back({c.field, c.group, c.identified ? significant(c.value, 4) : "-",
                                 c.identified && c.relative_error == c.relative_error
                                     ? significant(100.0 * c.relative_error, 3) + "%"
                                     : "-",
                                 c.applied ? (c.note.empty() ? "yes" : "yes: " + c.note) : "no: " + c.note});
  out << table_text(coefficients);
  std::size_t kept = 0;
  for (const auto& c : fit.coefficients)
    kept += c.identified && !c.applied && c.relative_error > hw::calibrate::kMaxRelativeError ? 1 : 0;
  if (kept > 0)
    out << kept << " fitted coefficient" << (kept == 1 ? "" : "s") << " with a standard error over "
        << significant(100.0 * hw::calibrate::kMaxRelativeError, 2)
        << "% of the value kept the base value: record more steps, or give --force to apply them\n";
}

}  // namespace asteria::cli

#pragma once
// Shared by the profile assembly files: how a measured field, a derived field and a field copied
// from the base profile are written, so every source reads alike.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "hwmodels/calibrate/calibration.hpp"

namespace asteria::hw::calibrate::assembly {

// Four significant digits: more than any of these measurements can tell, and a readable file.
// Scales by exact powers of ten (up to 1e22) so that round numbers stay exact: 80e9 -> 80e9.
inline double rounded(double value) {
  if (!(value > 0.0) || !std::isfinite(value)) return value;
  const int shift = static_cast<int>(std::floor(std::log10(value))) - 3;
  double power = 1.0;
  for (int i = 0; i < std::min(std::abs(shift), 22); ++i) power *= 10.0;
  return shift >= 0 ? std::round(value / power) * power : std::round(value * power) / power;
}

// As rounded(), but never above `value`: for a share that must stay within a limit.
inline double rounded_down(double value) {
  const double r = rounded(value);
  if (r <= value) return r;
  const int shift = static_cast<int>(std::floor(std::log10(value))) - 3;
  return r - std::pow(10.0, shift) <= value ? std::max(0.0, r - std::pow(10.0, shift)) : std::floor(value);
}

inline std::string number(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

// A time in the unit that reads best: "41.9 us", "1.32 ms", "0.088 s".
inline std::string duration(double seconds) {
  if (seconds < 1e-6) return number("%.3g ns", seconds * 1e9);
  if (seconds < 1e-3) return number("%.3g us", seconds * 1e6);
  if (seconds < 1.0) return number("%.3g ms", seconds * 1e3);
  return number("%.3g s", seconds);
}

inline std::string times_text(const CubicTimings& t) {
  std::string text = "times";
  for (std::size_t i = 0; i < t.timings.size(); ++i)
    text += (i == 0 ? " " : ", ") + std::to_string(t.timings[i].n) + ": " +
            number("%.3g ms", t.timings[i].seconds * 1e3);
  return text + "; relative RMS residual of the fit " + number("%.1f%%", t.fit.relative_rms_residual * 100.0);
}

// The fraction of `peak` one product of `sized` reaches once the cost model's fixed cost per
// kernel (`launch`, charged on top) is taken out: 2n³ / (peak x (t - launch)), t the measured
// time of one product. At least a tenth of t counts as arithmetic, so that a product bound by
// its launch still gives a usable fraction.
inline double class_efficiency(const SizedRate& sized, double peak, double launch) {
  const double t = sized.seconds_per_product();
  const double busy = std::max(t - launch, 0.1 * t);
  return 2.0 * std::pow(static_cast<double>(sized.n), 3) / (peak * busy);
}

// "n=128" and, when n lies outside size class `index`, a warning that it stands in for it.
inline std::string class_size_note(const SizedRate& sized, std::size_t index) {
  if (GemmEfficiency::class_of(sized.n) == index) return {};
  return " (n=" + std::to_string(sized.n) + " lies outside the class " + std::string(GemmEfficiency::kNames[index]) +
         ": a rough stand-in)";
}

class Assembler {
 public:
  Assembler(const Measurements& m, const std::string& base_label)
      : base_label_(base_label), where_(" on " + m.host.host + ", " + m.host.date + ": ") {}

  Quantity measured(double value, const std::string& how) const {
    return Quantity{rounded(value), Provenance::measured, "measured" + where_ + how};
  }
  Quantity derived(double value, const std::string& how) const {
    return Quantity{rounded(value), Provenance::derived, "derived from measurements" + where_ + how};
  }
  // A base field, its kind kept (a peak stays a peak), its source saying where it comes from.
  Quantity copied(const Quantity& base, const std::string& why = {}) const {
    Quantity q = base;
    q.source = "not measured" + (why.empty() ? std::string() : " (" + why + ")") + ": copied from " + base_label_ +
               ": " + base.source;
    return q;
  }
  // The measurement when there is one, else the base's field.
  Quantity measured_or_copied(const Measured& measurement, const Quantity& base, double divisor = 1.0,
                              const std::string& note = {}) const {
    if (!measurement.valid()) return copied(base);
    return measured(measurement.value / divisor, measurement.method + note);
  }
  Quantity fitted_or_copied(const CubicTimings& timings, const Quantity& base) const {
    if (!timings.valid()) return copied(base);
    return measured(timings.fit.c, timings.method + "; " + times_text(timings));
  }
  LinkSpec copied(const LinkSpec& base, const std::string& why = {}) const {
    return {copied(base.bandwidth, why), copied(base.latency, why)};
  }
  const std::string& base_label() const noexcept { return base_label_; }

 private:
  std::string base_label_;
  std::string where_;
};

// The gpu section, host links, unified memory and node of a CPU-device profile
// (assemble_cpu_device.cpp).
void assemble_cpu_device(const Measurements& m, const Assembler& a, const HardwareProfile& base, HardwareProfile& p);

}  // namespace asteria::hw::calibrate::assembly

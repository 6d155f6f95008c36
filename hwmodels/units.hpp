#pragma once
// Amounts with units, as profiles write them: "375 GB/s", "96 GB", "1.2e-10 s", "700 W", "0.84".
// Units are case sensitive because case carries meaning (Gb/s is bits, GB/s bytes).
#include <string>
#include <string_view>

namespace asteria::hw {

enum class UnitClass { bytes, bandwidth, flop_rate, time, power, dimensionless };

// "a size in bytes", "a bandwidth", ... — for error messages.
std::string_view to_string(UnitClass unit_class) noexcept;

// The unit symbols a class accepts, comma separated ("B/s, KB/s, ..."); empty for dimensionless.
std::string unit_symbols(UnitClass unit_class);

// Parses "<number> <unit>" (the unit is omitted for dimensionless amounts) into SI: bytes,
// bytes/s, FLOP/s, seconds, watts. Throws InputError(source, field, expectation) on a malformed number,
// an unknown unit, or a unit of another class (a bandwidth given in GB).
double parse_amount(std::string_view text, UnitClass expected, const std::string& source,
                    const std::string& field);

// Writes an SI amount in a readable unit of its class; parse_amount of the result gives back
// exactly `amount`. `unit` forces one unit of the class (e.g. "s" for c·n³ coefficients).
std::string format_amount(double amount, UnitClass unit_class, std::string_view unit = {});

}  // namespace asteria::hw

#pragma once
// Numbers as text without losing them: the shortest decimal that reads back as the same double
// (std::to_chars), in scientific notation where that is shorter. For files that scripts read
// (CSV, JSON-adjacent text, plans, traces) and for console figures that must never be truncated.
#include <string>

namespace asteria {

// "0.25", "1e+30", "145417.917", "-0"; "nan", "inf", "-inf" for non-finite values.
std::string exact_number(double value);

// `value` with `digits` significant digits (1..17): plain decimals when the exponent is within
// [-4, digits), scientific otherwise (3 digits: "1.70", "145", "0.000212", "2.12e-05"). Never
// truncates the integer part: 145417.917 with 3 digits is "1.45e+05".
std::string significant(double value, int digits);

}  // namespace asteria

#pragma once
// Numbers as text without losing them: the shortest decimal that reads back as the same double
// (std::to_chars), in scientific notation where that is shorter. For files that scripts read
// (CSV, JSON-adjacent text, plans, traces) and for console figures that must never be truncated.
#include <string>

namespace asteria {

// "0.25", "1e+30", "145417.917", "-0"; "nan", "inf", "-inf" for non-finite values.
std::string exact_number(double value);

// `value` rounded to `digits` significant digits (1..17), for tables and consoles: plain decimals
// while the rounded value's exponent is within [-4, max(digits, 5)), where every integer digit is
// kept (3 digits: "1.70", "145", "1455", "0.000212"); scientific notation outside it ("2.12e-05",
// 145417.917 as "1.45e+05"). Zero is "0". Never truncated.
std::string significant(double value, int digits);

}  // namespace asteria

#pragma once
// Costs as text, for plans and traces: a piece is "kind/flops/bytes/dimension" with "/reduced"
// appended for a reduced-precision matmul ("gemm/2e+09/4096/1024/reduced"); the pieces of a work
// item are joined by ';' (numbers may hold a '+': "eigh/9e+06/8192/100;qr/1e+06/8192/100"); no
// pieces is "-". Numbers are written in their shortest exact form: parse_costs(to_text(c)) == c.
#include <string>
#include <string_view>

#include "core/platform/cost.hpp"

namespace asteria::platform {

std::string to_text(const Cost& piece);
std::string to_text(const Costs& cost);

// The inverse of to_text(Costs); throws InputError(source, field, expectation) naming what does
// not parse (an unknown kind, a negative or non-finite number, a missing field).
Costs parse_costs(std::string_view text, const std::string& source, const std::string& field);

// The inverse of to_string(WorkKind); InputError for an unknown name.
WorkKind parse_work_kind(std::string_view text, const std::string& source, const std::string& field);

}  // namespace asteria::platform

#pragma once
// The header of a .npy file: a Python dict literal with exactly the keys 'descr',
// 'fortran_order' and 'shape'. A small parser of the literal forms NumPy writes (strings,
// True/False, tuples of integers) that names the offending field on every error.
#include <string>
#include <string_view>
#include <vector>

#include "core/linalg/matrix.hpp"

namespace asteria::io {

struct NpyHeader {
  std::string descr;         // the dtype string, e.g. "<f4" (not yet checked for support)
  bool fortran_order = false;
  std::vector<linalg::index> shape;
};

// Throws InputError(source, field, expectation) when the text is not a dict literal, a key is
// missing, repeated or unknown, or a value has the wrong form.
NpyHeader parse_npy_header(std::string_view text, const std::string& source);

// "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", as numpy.save writes it
// (before padding).
std::string format_npy_header(std::string_view descr, const std::vector<linalg::index>& shape);

}  // namespace asteria::io

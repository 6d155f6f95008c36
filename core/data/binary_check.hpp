#pragma once
// Whether a corpus file is text: a byte-level model trained on executables, images or archives
// learns nothing useful, and their NUL bytes would read as end-of-document markers.
#include <cstddef>
#include <string_view>

namespace asteria::data {

// How much of a file's start the check reads: like git's and grep's heuristics, a few KiB
// decide (a text file rarely turns binary later; a binary format shows itself in its header).
inline constexpr std::size_t kBinaryCheckBytes = 8192;

// The share of suspicious bytes above which a file is binary: Latin-1 or Windows-1252 prose
// (invalid UTF-8 for every accented letter) stays under a few percent, while compressed or
// random bytes run near 60% (half are >= 0x80, most of them outside valid sequences).
inline constexpr double kMaxSuspiciousShare = 0.10;

// True when more than kMaxSuspiciousShare of `head` (a file's first kBinaryCheckBytes bytes, or
// all of a shorter file) are control characters (NUL included; tab, newline, vertical tab, form
// feed, carriage return and escape excepted) or bytes outside well-formed UTF-8. A NUL does not
// decide alone: text dumped with NUL between documents (as Corpus streams hold them) stays text,
// while binary formats are full of NULs and small integers. A multi-byte sequence cut by the end
// of `head` is not counted.
bool looks_binary(std::string_view head) noexcept;

}  // namespace asteria::data

#pragma once
// Parsers for option values that Boost does not handle (sizes, layer shapes).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/linalg/matrix.hpp"

namespace asteria::run {

// "512MiB", "1.5GB", "4096", "2e9": bytes. Suffixes B, KB, MB, GB, TB (powers of 1000) and KiB,
// MiB, GiB, TiB (powers of 1024), case-sensitive. Throws InputError naming `option` otherwise.
std::size_t parse_size(std::string_view text, const std::string& option);
// A seed: a whole number in [0, 2^64); InputError naming `option` otherwise (a negative number
// would otherwise wrap around silently).
std::uint64_t parse_seed(std::string_view text, const std::string& option);

// "512x512,1024x256": (rows, cols) per layer. Throws InputError naming `option` otherwise.
std::vector<std::pair<linalg::index, linalg::index>> parse_shapes(std::string_view text, const std::string& option);

}  // namespace asteria::run

#pragma once
// The collective algorithms the simulator runs as flow schedules (flow_schedule.hpp says what
// each one moves).
#include <string>
#include <string_view>

namespace asteria::sim::collective {

enum class Algorithm { ring, tree, hierarchical };
inline constexpr Algorithm kAlgorithms[] = {Algorithm::ring, Algorithm::tree, Algorithm::hierarchical};

std::string_view to_string(Algorithm algorithm) noexcept;
// Throws InputError(source, "algorithm", ...) naming the accepted values.
Algorithm parse_algorithm(std::string_view name, const std::string& source = "--algorithm");

}  // namespace asteria::sim::collective

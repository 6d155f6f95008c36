#include "sim/collective/protocol.hpp"

#include "core/common/error.hpp"

namespace asteria::sim::collective {

namespace {

constexpr double kMicrosecond = 1e-6;

// NCCL's tuning model (src/graph/tuning.cc, v2.23 on: the same in v2.30): microseconds,
// [ring, tree][LL, LL128, Simple]. Per step over NVLink (its PCI values are not used: the
// simulated nodes link their GPUs by NVLink) and over the network.
constexpr double kBaseLatency[2][3] = {{6.6, 14.0, 8.4}, {6.8, 14.0, 8.4}};
constexpr double kNvlinkStepLatency[2][3] = {{0.6, 1.9, 3.4}, {0.6, 1.25, 4.0}};
constexpr double kNetworkStepLatency[2][3] = {{2.7, 4.0, 14.0}, {5.0, 8.5, 14.0}};

int row(Algorithm algorithm) noexcept { return algorithm == Algorithm::tree ? 1 : 0; }
int column(Protocol protocol) noexcept { return static_cast<int>(protocol); }

}  // namespace

std::string_view to_string(Protocol protocol) noexcept {
  switch (protocol) {
    case Protocol::ll: return "ll";
    case Protocol::ll128: return "ll128";
    case Protocol::simple: return "simple";
  }
  return "simple";
}

Protocol parse_protocol(std::string_view name, const std::string& source) {
  for (const Protocol p : kProtocols)
    if (name == to_string(p)) return p;
  throw InputError(source, "protocol", "expected one of ll, ll128, simple; found '" + std::string(name) + "'");
}

double wire_factor(Algorithm algorithm, Protocol protocol) noexcept {
  switch (protocol) {
    case Protocol::ll: return algorithm == Algorithm::tree ? 3.8 : 2.0;
    case Protocol::ll128: return 128.0 / 120.0;  // 120 data bytes and 8 flag bytes per 128-byte line
    case Protocol::simple: return 1.0;
  }
  return 1.0;
}

double step_latency(Algorithm algorithm, Protocol protocol, Hop hop) noexcept {
  const auto& table = hop == Hop::network ? kNetworkStepLatency : kNvlinkStepLatency;
  return table[row(algorithm)][column(protocol)] * kMicrosecond;
}

double base_latency(Algorithm algorithm, Protocol protocol) noexcept {
  return kBaseLatency[row(algorithm)][column(protocol)] * kMicrosecond;
}

}  // namespace asteria::sim::collective

#pragma once
// NCCL's protocols as costs of a flow schedule: how many bytes cross the wire per byte of data,
// the latency of one step of an algorithm over a GPU-GPU link or the network, and the fixed
// latency of starting a collective. LL moves 8-byte lines of 4 data bytes and a flag (twice the
// bytes, the least latency), LL128 128-byte lines of 120 data bytes, Simple the data alone behind
// a fence per step (the most latency). NCCL picks, per call, the algorithm and protocol of the
// least predicted time (collective_choice.hpp does the same on the simulated links).
//
// The latencies are NCCL's own tuning model (src/graph/tuning.cc of NVIDIA/nccl, v2.23-v2.30:
// its base latencies per algorithm and protocol, and its hardware latencies per step over NVLink
// and over the network); they include the software's part of a step, on top of which a flow
// pays its links' latencies from the hardware profile (the wire's).
#include <string>
#include <string_view>

#include "sim/collective/algorithm.hpp"

namespace asteria::sim::collective {

enum class Protocol { ll, ll128, simple };
inline constexpr Protocol kProtocols[] = {Protocol::ll, Protocol::ll128, Protocol::simple};

std::string_view to_string(Protocol protocol) noexcept;
// Throws InputError(source, "protocol", ...) naming the accepted values.
Protocol parse_protocol(std::string_view name, const std::string& source = "--protocol");

// Bytes on the wire per byte of data: LL 2 (a flag per data word), 3.8 for a tree (NCCL's model
// divides a tree's LL bandwidth by 3.8: its flags, and the reduction's extra reads of the lines);
// LL128 128/120; Simple 1.
double wire_factor(Algorithm algorithm, Protocol protocol) noexcept;

// Where a step's data goes: to a GPU of the same node, or over the network to another node.
enum class Hop { gpu_link, network };

// Seconds of one step of `algorithm` (hierarchical counts as ring: its parts are rings and
// direct exchanges) over `hop`.
double step_latency(Algorithm algorithm, Protocol protocol, Hop hop) noexcept;
// Seconds every collective of `algorithm` pays once, before its first step.
double base_latency(Algorithm algorithm, Protocol protocol) noexcept;

}  // namespace asteria::sim::collective

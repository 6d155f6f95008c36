#pragma once
// The arithmetic rate of elementwise work on one CPU thread, timed on the runtime's own
// elementwise kernel: an AdamW block update.
#include <cstddef>

#include "hwmodels/calibrate/measurement.hpp"

namespace asteria::hw::calibrate {

// Seconds per flop of an elementwise kernel's arithmetic beyond its traffic, on one thread: the
// runtime's AdamW update (optim::AdamWBlock<float>::apply, charged 82 weighted flops (platform::kDivisionFlops) and 28 bytes of fp32
// traffic per element by the optimizers' shape model) of a block of `elements`, best of
// `repeats`, less its traffic at `memory_bandwidth` bytes/s; 0 when the traffic alone explains
// the time. Timing the runtime's kernel, not an ideal loop, makes the rate what a run pays.
Measured measure_elementwise_seconds_per_flop(std::size_t elements, int repeats, double memory_bandwidth);

}  // namespace asteria::hw::calibrate

#pragma once
// Fixed costs per call on the host: handing a task to a worker thread, calling a BLAS routine on
// a tiny operand, copying a few bytes. The cost model charges them once per piece of work.
#include <cstddef>

#include "hwmodels/calibrate/measurement.hpp"

namespace asteria::hw::calibrate {

// Median round trip of one task through a worker thread that sleeps between tasks: post, wake
// the worker, run a tiny LAPACK ssyevd (n = 8, one BLAS thread), wake the poster. Throws
// InputError when samples < 1.
Measured measure_task_latency(int samples);

// Per-call time of cblas_sgemm on 8 x 8 matrices on `threads` BLAS threads: the best of
// `repeats` runs of `calls` back-to-back calls. What one more op costs a CPU device stream
// beyond its arithmetic.
Measured measure_call_latency(int threads, int calls, int repeats);

// Per-copy time of memcpy of `bytes` (a few): the best of `repeats` runs of `copies` copies.
Measured measure_copy_latency(std::size_t bytes, int copies, int repeats);

// Seconds per flop of an elementwise kernel's arithmetic beyond its traffic, on one thread: an
// Adam update (12 flops and 28 bytes of fp32 traffic per element, as the optimizers' shape model
// declares it) over `elements`, best of `repeats`, less its traffic at `memory_bandwidth`
// bytes/s; 0 when the traffic alone explains the time.
Measured measure_elementwise_seconds_per_flop(std::size_t elements, int repeats, double memory_bandwidth);

}  // namespace asteria::hw::calibrate

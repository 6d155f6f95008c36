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

// Median time from submitting a work to the real backend's device stream
// (real::DeviceStreamExecutor, measured time), left idle for about 1 ms so that its thread sleeps
// on its condition variable, until the work's body starts: what gpu.wake_latency charges a CPU
// device. Throws InputError when samples < 1.
Measured measure_wake_latency(int samples);


}  // namespace asteria::hw::calibrate

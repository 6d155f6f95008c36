#pragma once
// Host memory bandwidth: memcpy between large buffers, on one thread or several.
#include <cstddef>
#include <span>

#include "hwmodels/calibrate/measurement.hpp"

namespace asteria::hw::calibrate {

// Bytes/s of copying `src` into `dst` (same size), split in `threads` contiguous slices copied
// in parallel; counts bytes read plus bytes written (2 x size per copy), as STREAM's copy does.
// One untimed pass first touches the pages; the best of `repeats` timed passes counts.
// Throws InputError when the sizes differ or are 0, or threads / repeats < 1.
Measured copy_bandwidth(std::span<std::byte> dst, std::span<const std::byte> src, int threads, int repeats);

// copy_bandwidth on two freshly allocated buffers of `bytes` each.
Measured measure_memcpy(std::size_t bytes, int threads, int repeats);

}  // namespace asteria::hw::calibrate

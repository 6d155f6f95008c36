#pragma once
// The two settings that say what a run computes and where its time comes from. They are
// independent, but not every pair can run; validate() says which and why.
#include <string>
#include <string_view>

namespace asteria::platform {

// Whether numerics run.
enum class Numerics {
  // Real tensors: every op computes its numbers (weights train; S = 0 equals the synchronous
  // optimizer bit for bit).
  values,
  // Real tensors for the refreshes only: the device's numerics run during the warm-up steps (so
  // the statistics are real) and are skipped afterwards, keeping the host CPU free as beside a
  // real GPU; refreshes run real numerics on the host workers. Measures how much refresh work the
  // runtime hides on this machine's cores while the device is a model.
  refresh,
  // No values at all: tensors are shapes, optimizer state is a byte count, refreshes only take
  // time (a data-free simulation of a model too large to hold).
  shapes,
};

// Where time comes from.
enum class TimeSource {
  measured,   // the real clock; device and host work take what they take (CPU kernels, a GPU)
  modelled,   // the real clock; device work lasts its modelled duration (emulated kernels), host
              // work is measured
  simulated,  // a simulated clock: every duration comes from a model (SimGrid, the fake backend)
};

std::string_view to_string(Numerics numerics) noexcept;
std::string_view to_string(TimeSource time) noexcept;
// "values", "refresh", "shapes" / "measured", "modelled", "simulated"; InputError(source, field)
// otherwise.
Numerics parse_numerics(std::string_view text, const std::string& source, const std::string& field = "--numerics");
TimeSource parse_time_source(std::string_view text, const std::string& source, const std::string& field = "--time");

// Throws InputError naming `source` and the field "--numerics" for a pair that cannot run:
// shapes need simulated time (with no numbers there is nothing to measure, and on a real clock
// refreshes would take no time); refresh needs modelled or simulated time (measured time would
// leave out the device numerics it skips).
void validate(Numerics numerics, TimeSource time, const std::string& source);

}  // namespace asteria::platform

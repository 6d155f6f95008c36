#pragma once
// Time in the runtime: seconds as a double, measured by a Clock of the platform (wall time in
// the real backend, simulated time in SimGrid, a manual counter in the fake backend).
namespace asteria::platform {

using Seconds = double;

}  // namespace asteria::platform

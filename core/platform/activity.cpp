#include "core/platform/activity.hpp"

namespace asteria::platform {

std::string_view to_string(ActivityRole role) noexcept {
  switch (role) {
    case ActivityRole::op: return "op";
    case ActivityRole::launch: return "launch";
    case ActivityRole::refresh_job: return "refresh_job";
    case ActivityRole::transfer: return "transfer";
    case ActivityRole::io: return "io";
    case ActivityRole::step: return "step";
    case ActivityRole::other: return "other";
  }
  return "other";
}

std::string device_stream_track(int unit) { return "gpu" + std::to_string(unit) + " stream"; }
std::string host_worker_track(int unit, int lane) {
  return "cpu" + std::to_string(unit) + " worker " + std::to_string(lane);
}
std::string issuer_track(int unit) { return "cpu" + std::to_string(unit) + " main"; }
std::string disk_track(int unit) { return "disk nvme" + std::to_string(unit); }
std::string comm_track(int unit) { return "gpu" + std::to_string(unit) + " comm"; }

}  // namespace asteria::platform

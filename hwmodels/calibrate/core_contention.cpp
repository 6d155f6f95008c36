#include "hwmodels/calibrate/core_contention.hpp"

#include <algorithm>
#include <map>

namespace asteria::hw::calibrate {
namespace {

bool is_worker(const std::string& resource) { return resource.find(" worker ") != std::string::npos; }
bool is_stream(const std::string& resource) { return resource.find(" stream") != std::string::npos; }

}  // namespace

CoreOccupancy::CoreOccupancy(const traces::NativeTrace& trace, const HardwareProfile& profile, int unit)
    : other_cores_(profile.cpu.cores.value - 1.0), device_on_cores_(profile.device == DeviceKind::cpu) {
  std::map<std::string, std::vector<std::pair<double, double>>> spans;
  for (const traces::TraceRecord& r : trace.records)
    if (r.unit == unit && r.end_s > r.start_s && on_cores(r.resource)) spans[r.resource].emplace_back(r.start_s, r.end_s);
  for (auto& [resource, list] : spans) {
    std::sort(list.begin(), list.end());
    Track track{resource, is_worker(resource) ? profile.cpu.threads_per_worker.value : profile.gpu.device_threads.value,
                {}};
    for (const auto& span : list) {  // records of one launch share an interval; nested ones merge
      if (!track.spans.empty() && span.first <= track.spans.back().second)
        track.spans.back().second = std::max(track.spans.back().second, span.second);
      else
        track.spans.push_back(span);
    }
    tracks_.push_back(std::move(track));
  }
}

bool CoreOccupancy::on_cores(const std::string& resource) const {
  return is_worker(resource) || (device_on_cores_ && is_stream(resource));
}

double CoreOccupancy::others_busy(const std::string& resource, double start, double end) const {
  if (!(end > start) || other_cores_ <= 0.0) return 0.0;
  std::vector<std::pair<double, double>> changes;  // (time, change of busy threads)
  for (const Track& t : tracks_) {
    if (t.resource == resource) continue;
    // The first span that ends after `start`.
    auto it = std::lower_bound(t.spans.begin(), t.spans.end(), start,
                               [](const std::pair<double, double>& s, double at) { return s.second <= at; });
    for (; it != t.spans.end() && it->first < end; ++it) {
      changes.emplace_back(std::max(it->first, start), t.threads);
      changes.emplace_back(std::min(it->second, end), -t.threads);
    }
  }
  std::sort(changes.begin(), changes.end());
  double busy = 0.0, at = start, integral = 0.0;
  for (const auto& [time, change] : changes) {
    integral += std::min(busy, other_cores_) * (time - at);
    busy += change;
    at = time;
  }
  return integral / (other_cores_ * (end - start));
}

}  // namespace asteria::hw::calibrate

#include "traces/work_log_timeline.hpp"

#include <algorithm>
#include <cstddef>
#include <numeric>
#include <string_view>
#include <vector>

namespace asteria::traces {

namespace {

std::string unit_suffix(const WorkLogTimelineOptions& o) { return std::to_string(o.unit); }

// RealMemory names its copy engines "copy <from>-><to>" after the tiers (platform::to_string).
TrackAndCategory copy_engine_track(std::string_view from, std::string_view to, const WorkLogTimelineOptions& o) {
  const std::string u = unit_suffix(o);
  if (from == "nvme" || to == "nvme") return {"disk nvme" + u, "io"};
  if (from == "device" && to == "device") return {"link hbm" + u, "transfer"};
  if (from == "host" && to == "host") return {"link dram" + u, "transfer"};
  if (from == "device") return {"link d2h" + u, "transfer"};
  return {"link h2d" + u, "transfer"};
}

}  // namespace

TrackAndCategory classify(const real::WorkRecord& r, const WorkLogTimelineOptions& o) {
  const std::string_view label = r.label;
  if (r.executor == o.device_executor) {
    const std::string track = "gpu" + unit_suffix(o) + " stream";
    if (label.starts_with("forward ") || label.starts_with("backward ")) return {track, "compute"};
    if (label.starts_with("optimizer ")) return {track, "optimizer"};
    return {track, "other"};
  }
  if (r.executor == o.host_executor) {
    const std::string track = "cpu" + unit_suffix(o) + " worker";
    if (label.starts_with("refresh ")) return {track, "refresh"};
    if (label.starts_with("host optimizer ")) return {track, "optimizer"};
    return {track, "other"};
  }
  const std::string_view executor = r.executor;
  if (executor.starts_with("copy ")) {
    const std::string_view tiers = executor.substr(5);
    const std::size_t arrow = tiers.find("->");
    if (arrow != std::string_view::npos) return copy_engine_track(tiers.substr(0, arrow), tiers.substr(arrow + 2), o);
  }
  return {r.executor.empty() ? std::string("unnamed executor") : r.executor, "other"};
}

void add_work_records(std::span<const real::WorkRecord> records, Timeline& timeline,
                      const WorkLogTimelineOptions& options) {
  // By start (then end, then input order), so that host records can be dealt to lanes greedily.
  std::vector<std::size_t> order(records.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (records[a].started != records[b].started) return records[a].started < records[b].started;
    return records[a].finished < records[b].finished;
  });
  std::vector<double> worker_free_at;  // per host lane: when its last slice ends
  for (const std::size_t i : order) {
    const real::WorkRecord& r = records[i];
    TrackAndCategory where = classify(r, options);
    // The clock is steady, so finished >= started; a record made otherwise is shown as an instant.
    const double start = r.started;
    const double end = std::max(r.started, r.finished);
    if (r.executor == options.host_executor) {
      // Half-open intervals: a lane whose last slice ends at `start` is free. A work without a
      // body is recorded as an instant and ran on no thread: it occupies no lane, and where all
      // are busy it is shown on the first (an instant nests in any slice around it).
      std::size_t lane = 0;
      while (lane < worker_free_at.size() && worker_free_at[lane] > start) ++lane;
      if (end == start) {
        if (lane == worker_free_at.size()) lane = 0;
      } else if (lane == worker_free_at.size()) {
        worker_free_at.push_back(end);
      } else {
        worker_free_at[lane] = end;
      }
      where.track += ' ';
      where.track += std::to_string(lane);
    }
    std::string name = r.label.empty() ? std::string("(unlabelled)") : r.label;
    if (!r.ok) name += " (failed)";
    timeline.add_slice({std::move(where.track), std::move(name), std::move(where.category), start, end});
  }
}

}  // namespace asteria::traces

#pragma once
// The real backend's work records (core/real/trace.hpp) as a Timeline, with the track names and
// categories the simulator gives the same work, so that a measured run and a simulated one look
// alike in Perfetto:
//   device stream      -> "gpu<unit> stream"; "forward ..."/"backward ..." are compute,
//                         "optimizer ..." is optimizer, anything else other
//   host workers       -> "cpu<unit> worker <k>"; "refresh ..." is refresh, "host optimizer ..."
//                         is optimizer, anything else other
//   copy engines       -> the link the simulator charges: "link h2d<unit>", "link d2h<unit>",
//                         "link hbm<unit>", "link dram<unit>" (transfer); a copy to or from the
//                         NVMe tier goes to "disk nvme<unit>" (io)
//   any other executor -> a track of its own name, category other
// The category comes from the executor and the label, not from WorkKind: WorkKind says which
// kernel a work is (gemm, eigh, ...), and forward, optimizer and refresh work are all gemms.
// A slice spans a record's started..finished (its queueing before that is not shown); a record
// whose work failed keeps its slice, its name suffixed " (failed)".
#include <span>
#include <string>

#include "core/real/trace.hpp"
#include "traces/timeline.hpp"

namespace asteria::traces {

struct WorkLogTimelineOptions {
  int unit = 0;                              // the number in "gpu0 stream", "cpu0 worker 1", ...
  std::string device_executor = "device";    // RealPlatform's device stream
  std::string host_executor = "host-workers";  // RealPlatform's host worker pool
};

// Adds one slice per record to `timeline`. The host pool does not record which thread ran a
// work, so host records are dealt to worker tracks by time instead: each takes the lowest
// numbered worker track that is free when it starts. As a pool of k threads never runs more
// than k works at once, this needs no more than k tracks (the track number is then a lane, not
// a thread's identity). Records need not be sorted.
void add_work_records(std::span<const real::WorkRecord> records, Timeline& timeline,
                      const WorkLogTimelineOptions& options = {});

// The track and category add_work_records gives a record (a host record's track is "cpu<unit>
// worker" before its lane is chosen).
struct TrackAndCategory {
  std::string track;
  std::string category;
};
TrackAndCategory classify(const real::WorkRecord& record, const WorkLogTimelineOptions& options = {});

}  // namespace asteria::traces

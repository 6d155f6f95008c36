#pragma once
// The order in which a step's schedule visits (layer, micro-batch) on the device stream
// (schedule.hpp): the horizontal schedule's micro-batch after micro-batch, or the vertical one's
// layer after layer, the micro-batch order snaking.
#include <vector>

#include "core/plan/op.hpp"
#include "core/plan/schedule.hpp"

namespace asteria::plan {

// One forward or backward op of the step.
struct Visit {
  OpKind kind = OpKind::forward;
  int layer = 0;
  int micro_batch = 0;
};

std::vector<Visit> visit_order(ScheduleOrder order, int layers, int micro_batches);

}  // namespace asteria::plan

#pragma once
// Where work runs: a device stream, the host worker pool, a copy engine. A Work item carries
// its real computation (may be absent: data-free simulation, emulated device kernels) and its
// Cost, from which a simulator or an emulating backend charges time.
#include <functional>
#include <string>
#include <string_view>

#include "core/common/status.hpp"
#include "core/platform/activity.hpp"
#include "core/platform/cost.hpp"
#include "core/platform/pending.hpp"

namespace asteria::platform {

struct Work {
  std::string label;              // for traces: "refresh layer3.w block 2"
  Costs cost;                     // what it costs, piece by piece, for models
  std::function<Status()> body;   // the numerics; empty when there are none to run
  // Queued ahead of the work that is not urgent (after earlier urgent work): a step's own
  // optimizer update on the host must not wait behind background refreshes. Executors that
  // schedule at submission (the fake backend) ignore it.
  bool urgent = false;
  // The plan operation this work serves; executors pass it on to the activity they record.
  OpTag tag{};
};

class Executor {
 public:
  virtual ~Executor() = default;
  virtual std::string_view name() const noexcept = 0;
  // Work items that may run at the same time (1 for an in-order stream).
  virtual int concurrency() const noexcept = 0;
  // Queues the work. An exception thrown by the body becomes a failed Status of the Pending.
  virtual Pending submit(Work work) = 0;
};

}  // namespace asteria::platform

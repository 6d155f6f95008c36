#include "apps/asteria/run_loop.hpp"

namespace asteria::cli {

void start_run(const runtime::StepDriver<float>& driver, TraceSession& trace, int unit, plan::NumericsSite site,
               RunReport* out) {
  trace.set_plan(unit, driver.plan(), site);
  if (out == nullptr) return;
  out->plan = plan::to_text(driver.plan());
}

void run_steps(runtime::StepDriver<float>& driver, int first, int last, Progress* progress, const StepHooks& hooks,
               RunReport* out) {
  for (int t = first; t <= last; ++t) {
    if (hooks.before) hooks.before(t);
    const runtime::StepRecord record = driver.run_step();
    const std::string detail = hooks.after ? hooks.after(t, record) : std::string();
    if (progress != nullptr) progress->step(record, detail);
  }
  driver.finish();
  if (out == nullptr) return;
  // The history after finish(): a deferred last step's service figures are added there.
  out->records = driver.history();
  out->summary = runtime::summarize(out->records);
  out->refresh_failures = driver.service().totals().failures;
}

}  // namespace asteria::cli

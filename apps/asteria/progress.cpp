#include "apps/asteria/progress.hpp"

#include <ostream>
#include <utility>

#include "core/common/number_text.hpp"

namespace asteria::cli {

Progress::Progress(std::ostream& out, std::string name, bool enabled, int total_steps)
    : out_(out), name_(std::move(name)), enabled_(enabled), total_(total_steps) {}

void Progress::step(const runtime::StepRecord& r, const std::string& detail) {
  if (!enabled_) return;
  const Clock::time_point now = Clock::now();
  const double wall = std::chrono::duration<double>(now - start_).count();
  const bool last = r.step >= total_;
  if (wall < 1.0 || (std::chrono::duration<double>(now - last_).count() < 1.0 && !last)) return;
  last_ = now;
  out_ << name_ << ": step " << r.step << '/' << total_ << (r.warmup ? " (warm-up)" : "") << ", step time "
       << significant(r.step_time_s, 4) << " s, wall " << significant(wall, 3) << " s"
       << (detail.empty() ? "" : ", " + detail) << '\n'
       << std::flush;
}

ItemProgress::ItemProgress(std::ostream& out, std::string name, bool enabled, std::size_t total,
                           const std::string& start)
    : out_(out), name_(std::move(name)), enabled_(enabled), total_(total) {
  if (enabled_) out_ << name_ << ": " << start << '\n' << std::flush;
}

void ItemProgress::done(std::size_t done, const std::string& what) {
  if (!enabled_) return;
  const Clock::time_point now = Clock::now();
  const double wall = std::chrono::duration<double>(now - start_).count();
  const bool last = done >= total_;
  if (!last && (wall < 1.0 || std::chrono::duration<double>(now - last_).count() < 1.0)) return;
  last_ = now;
  out_ << name_ << ": " << done << '/' << total_ << " done (" << what << "), wall " << significant(wall, 3) << " s\n"
       << std::flush;
}

}  // namespace asteria::cli

#pragma once
// Child processes for the study runner: each job runs as its own process (posix_spawn + exec),
// stdin from /dev/null, stdout and stderr into one log file, at most N at once.
#include <cstddef>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace asteria::cli::study {

struct Job {
  std::string program;                 // a path, or a name looked up in PATH
  std::vector<std::string> arguments;  // argv[1...]
  std::filesystem::path log;           // receives stdout and stderr (created or truncated)
};

struct JobEnd {
  int exit_code = -1;       // the child's exit status; -1 when it did not exit normally
  int signal = 0;           // the signal that ended it, or 0
  std::string start_error;  // non-empty when the process could not be started
  double seconds = 0.0;     // wall time from start to end

  bool succeeded() const { return start_error.empty() && signal == 0 && exit_code == 0; }
  // "exit code 1", "killed by signal 9", "could not start: ..."
  std::string describe() const;
};

// Runs every job, at most `parallel` (>= 1) at once, starting them in order. `on_end(index, end)`
// is called on this thread as each one ends. If `on_end` throws, the children still running are
// terminated and reaped before the exception propagates.
void run_jobs(std::span<const Job> jobs, int parallel,
              const std::function<void(std::size_t index, const JobEnd& end)>& on_end);

// Runs one job to its end.
JobEnd run_job(const Job& job);

}  // namespace asteria::cli::study

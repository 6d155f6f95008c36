#include "apps/asteria/study_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

extern char** environ;  // NOLINT: POSIX's process environment, inherited by every child

namespace asteria::cli::study {
namespace {

using Clock = std::chrono::steady_clock;

// A started child: its pid, and a pidfd to sleep on until it ends (-1 where the kernel has
// none; such children are checked on a short timer instead).
struct Running {
  std::size_t index;
  pid_t pid;
  int pidfd;
  Clock::time_point started;
};

int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  const long fd = ::syscall(SYS_pidfd_open, pid, 0);
  return fd >= 0 ? static_cast<int>(fd) : -1;
#else
  (void)pid;
  return -1;
#endif
}

// posix_spawn's file actions, freed on every path.
class FileActions {
 public:
  FileActions() { ::posix_spawn_file_actions_init(&actions_); }
  ~FileActions() { ::posix_spawn_file_actions_destroy(&actions_); }
  FileActions(const FileActions&) = delete;
  FileActions& operator=(const FileActions&) = delete;
  posix_spawn_file_actions_t* get() { return &actions_; }

 private:
  posix_spawn_file_actions_t actions_{};
};

// Starts `job`; returns its pid, or an error message.
pid_t spawn(const Job& job, std::string& error) {
  FileActions actions;
  const std::string log = job.log.string();
  ::posix_spawn_file_actions_addopen(actions.get(), STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_addopen(actions.get(), STDOUT_FILENO, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ::posix_spawn_file_actions_adddup2(actions.get(), STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(job.program.c_str()));
  for (const std::string& a : job.arguments) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  // posix_spawnp: a program without '/' is looked up in PATH, one with '/' is taken as is.
  const int rc = ::posix_spawnp(&pid, job.program.c_str(), actions.get(), nullptr, argv.data(), environ);
  if (rc != 0) {
    error = "could not start " + job.program + ": " + std::strerror(rc);
    return -1;
  }
  return pid;
}

JobEnd ended(int status, Clock::time_point started) {
  JobEnd end;
  if (WIFEXITED(status)) end.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) end.signal = WTERMSIG(status);
  end.seconds = std::chrono::duration<double>(Clock::now() - started).count();
  return end;
}

// Sleeps until some child may have ended: on the pidfds, or a short timer for children without.
void wait_for_any(const std::vector<Running>& running) {
  std::vector<pollfd> fds;
  bool unwatched = false;
  for (const Running& r : running) {
    if (r.pidfd >= 0) fds.push_back({r.pidfd, POLLIN, 0});
    else unwatched = true;
  }
  const int timeout_ms = unwatched ? 20 : -1;
  // EINTR only means "look again".
  ::poll(fds.data(), fds.size(), timeout_ms);
}

// Terminates and reaps what is still running (an exception is leaving run_jobs).
void stop_all(std::vector<Running>& running) {
  for (const Running& r : running) ::kill(r.pid, SIGTERM);
  for (const Running& r : running) {
    int status = 0;
    while (::waitpid(r.pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (r.pidfd >= 0) ::close(r.pidfd);
  }
  running.clear();
}

}  // namespace

std::string JobEnd::describe() const {
  if (!start_error.empty()) return start_error;
  if (signal != 0) return "killed by signal " + std::to_string(signal);
  return "exit code " + std::to_string(exit_code);
}

void run_jobs(std::span<const Job> jobs, int parallel,
              const std::function<void(std::size_t index, const JobEnd& end)>& on_end) {
  const std::size_t limit = parallel < 1 ? 1 : static_cast<std::size_t>(parallel);
  std::vector<Running> running;
  std::size_t next = 0;
  try {
    while (next < jobs.size() || !running.empty()) {
      while (running.size() < limit && next < jobs.size()) {
        const std::size_t index = next++;
        const Clock::time_point started = Clock::now();
        std::string error;
        const pid_t pid = spawn(jobs[index], error);
        if (pid < 0) {
          JobEnd end;
          end.start_error = error;
          on_end(index, end);
          continue;
        }
        running.push_back({index, pid, open_pidfd(pid), started});
      }
      if (running.empty()) continue;
      wait_for_any(running);
      for (std::size_t i = 0; i < running.size();) {
        int status = 0;
        const pid_t reaped = ::waitpid(running[i].pid, &status, WNOHANG);
        const int wait_errno = errno;
        const bool lost = reaped < 0 && wait_errno != EINTR;  // e.g. reaped elsewhere: nothing left to wait for
        if (reaped != running[i].pid && !lost) {
          ++i;
          continue;
        }
        const Running done = running[i];
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
        if (done.pidfd >= 0) ::close(done.pidfd);
        JobEnd end = lost ? JobEnd{-1, 0, std::string("could not wait for the process: ") + std::strerror(wait_errno), 0.0}
                          : ended(status, done.started);
        on_end(done.index, end);
      }
    }
  } catch (...) {
    stop_all(running);
    throw;
  }
}

JobEnd run_job(const Job& job) {
  JobEnd result;
  run_jobs(std::span<const Job>(&job, 1), 1, [&](std::size_t, const JobEnd& end) { result = end; });
  return result;
}

}  // namespace asteria::cli::study

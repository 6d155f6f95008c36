#include "sim/child_process.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <system_error>

namespace asteria::sim {

namespace {

[[noreturn]] void throw_errno(const char* what) { throw std::system_error(errno, std::generic_category(), what); }

}  // namespace

void ChildReport::write(std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd_, text.data(), text.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // the parent went away: nobody to tell
    }
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

std::string ChildOutcome::describe() const {
  std::string head = signal != 0 ? "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")"
                                 : "exit code " + std::to_string(exit_code);
  return report.empty() ? head : head + ": " + report;
}

ChildOutcome run_in_child_process(const std::function<void(ChildReport&)>& body) {
  int fds[2];
  if (::pipe(fds) != 0) throw_errno("pipe");
  // Buffered output would otherwise be written twice, once by each process.
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw_errno("fork");
  }
  if (pid == 0) {
    ::close(fds[0]);
    ChildReport report(fds[1]);
    int code = 0;
    try {
      body(report);
    } catch (const std::exception& e) {
      report.write(std::string("uncaught exception: ") + e.what());
      code = 1;
    } catch (...) {
      report.write("uncaught exception of unknown type");
      code = 1;
    }
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    ::_exit(code);
  }
  ::close(fds[1]);
  ChildOutcome outcome;
  char buffer[4096];
  for (;;) {  // read until the child closes its end, so a long report never fills the pipe
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n > 0) {
      outcome.report.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw_errno("waitpid");
  }
  if (WIFEXITED(status)) {
    outcome.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    outcome.signal = WTERMSIG(status);
  }
  return outcome;
}

}  // namespace asteria::sim

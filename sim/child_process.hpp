#pragma once
// Runs a function in a forked child process and brings back what it reported. A process hosts
// one Simulation (SimGrid's engine cannot be reset); a program that needs several — a study
// grid, a test suite — runs each in a child: the parent never creates an engine.
//
//   ChildOutcome out = run_in_child_process([&](ChildReport& report) {
//     Simulation sim(options);
//     sim.run(...);
//     report.write(summary_json(sim));
//   });
//   if (!out.succeeded()) ... out.describe() ...
//
// The child ends with _exit (no atexit handlers, no static destructors): exit code 0 when the
// function returns, 1 when it throws (the exception's message is appended to the report).
// POSIX only; call it from a single-threaded program, or where no other thread holds a lock
// the child needs (fork copies only the calling thread).
#include <functional>
#include <string>
#include <string_view>

namespace asteria::sim {

class ChildReport {
 public:
  explicit ChildReport(int fd) noexcept : fd_(fd) {}
  void write(std::string_view text);  // appends to what the parent receives

 private:
  int fd_;
};

struct ChildOutcome {
  int exit_code = -1;    // the child's exit status; -1 when it was killed by a signal
  int signal = 0;        // the signal that killed it, 0 when it exited
  std::string report;    // everything the child wrote to its ChildReport
  bool succeeded() const noexcept { return exit_code == 0; }
  std::string describe() const;  // "exit code 1: ..." / "killed by signal 11 (Segmentation fault): ..."
};

// Throws std::system_error when the pipe or the fork fails.
ChildOutcome run_in_child_process(const std::function<void(ChildReport&)>& body);

}  // namespace asteria::sim

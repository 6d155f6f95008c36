#pragma once
// Runs a test body in a forked child process and reports its failed assertions in the parent,
// at their file and line. A process hosts one SimGrid simulation, so every test that builds a
// Simulation runs its body here (the test binary itself never creates an engine).
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <string_view>

#include "sim/child_process.hpp"

namespace asteria::sim::testing {

// Reports the child's failed assertions to the parent as they happen (so a later crash does not
// lose them). A failure travels as "@<file size>:<file><line>:<message size>:<message>".
// Install one for the calling thread and one for all threads: simulated actors may run on threads
// of their own (SimGrid's thread contexts, used under AddressSanitizer).
class ForwardFailuresToParent : public ::testing::ScopedFakeTestPartResultReporter {
 public:
  ForwardFailuresToParent(ChildReport& report, InterceptMode mode)
      : ::testing::ScopedFakeTestPartResultReporter(mode, &unused_), report_(report) {}
  void ReportTestPartResult(const ::testing::TestPartResult& result) override {
    if (!result.failed()) return;
    std::string record = "@";
    const std::string file = result.file_name() ? result.file_name() : "";
    record += std::to_string(file.size());
    record += ':';
    record += file;
    record += std::to_string(result.line_number());
    record += ':';
    const std::string message = result.message();
    record += std::to_string(message.size());
    record += ':';
    record += message;
    report_.write(record);
  }

 private:
  ::testing::TestPartResultArray unused_;
  ChildReport& report_;
};

namespace detail {
inline bool take_number(std::string_view& text, long& value) {
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  try {
    value = std::stol(std::string(text.substr(0, colon)));
  } catch (...) {
    return false;
  }
  text.remove_prefix(colon + 1);
  return value >= -1;
}
}  // namespace detail

inline void run_in_child(const std::function<void()>& body) {
  const ChildOutcome outcome = run_in_child_process([&](ChildReport& report) {
    const ForwardFailuresToParent from_every_thread(report, ForwardFailuresToParent::INTERCEPT_ALL_THREADS);
    const ForwardFailuresToParent from_this_thread(report, ForwardFailuresToParent::INTERCEPT_ONLY_CURRENT_THREAD);
    body();
  });
  std::string_view text = outcome.report;
  while (!text.empty() && text.front() == '@') {
    text.remove_prefix(1);
    long file_size = 0;
    long line = 0;
    long message_size = 0;
    if (!detail::take_number(text, file_size) || text.size() < static_cast<std::size_t>(file_size)) break;
    const std::string file(text.substr(0, static_cast<std::size_t>(file_size)));
    text.remove_prefix(static_cast<std::size_t>(file_size));
    if (!detail::take_number(text, line) || !detail::take_number(text, message_size) ||
        text.size() < static_cast<std::size_t>(message_size))
      break;
    ADD_FAILURE_AT(file.c_str(), static_cast<int>(line)) << text.substr(0, static_cast<std::size_t>(message_size));
    text.remove_prefix(static_cast<std::size_t>(message_size));
  }
  if (!outcome.succeeded()) {
    ChildOutcome ended = outcome;
    ended.report = std::string(text);  // what is left: an uncaught exception's message
    ADD_FAILURE() << "the test's child process ended with " << ended.describe();
  } else if (!text.empty()) {
    ADD_FAILURE() << "the test's child process reported: " << text;
  }
}

}  // namespace asteria::sim::testing

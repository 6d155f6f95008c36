// Native traces (traces/README.md): any text reads or is rejected with an InputError; a trace that
// reads writes back to text that reads to an equal trace (read(write(t)) == t), and draws a
// Chrome trace that is JSON, or is refused with an InputError (a slice that ends before it starts).
#include <nlohmann/json.hpp>

#include "core/common/error.hpp"
#include "tests/fuzz/fuzz_check.hpp"
#include "traces/chrome_trace.hpp"
#include "traces/native_trace.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace asteria;
  traces::NativeTrace trace;
  try {
    trace = traces::parse_native_trace(fuzz::as_text(data, size), "fuzz.trace");
  } catch (const InputError&) {
    return 0;
  }
  // No catch: what was read must write, and read back.
  const traces::NativeTrace again = traces::parse_native_trace(traces::native_trace_text(trace), "fuzz.trace");
  fuzz::require(again == trace, "parse_native_trace(native_trace_text(t)) == t");
  std::string chrome;
  try {
    chrome = traces::chrome_trace_text(traces::chrome_timeline(trace));
  } catch (const InputError&) {
    return 0;
  }
  fuzz::require(nlohmann::json::accept(chrome), "the Chrome trace is JSON");
  return 0;
}

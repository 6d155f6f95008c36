// A native trace drawn as a Chrome-trace timeline (declared in chrome_trace.hpp).
#include <string>

#include "core/common/number_text.hpp"
#include "traces/chrome_trace.hpp"

namespace asteria::traces {
namespace {

std::string category_of(const TraceRecord& r) {
  const std::string& k = r.kind;
  if (k == "forward" || k == "backward") return "compute";
  if (k == "accumulate" || k == "update" || k == "launch") return "optimizer";
  if (k == "publish") return r.resource.find(" main") != std::string::npos ? "bookkeeping" : "optimizer";
  if (k == "refresh_job") return "refresh";
  if (k == "prefetch" || k == "acquire" || k == "release" || k == "refresh") return "bookkeeping";
  if (k == "transfer" || k == "io" || k == "step") return k;
  if (k == "reduce") return "network";
  return "other";
}

std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out + '"';
}

}  // namespace

Timeline chrome_timeline(const NativeTrace& trace) {
  Timeline timeline;
  for (const TraceRecord& r : trace.records) {
    if (r.kind == "counter") {
      timeline.add_counter({r.label, r.start_s, r.bytes});
      continue;
    }
    // A record read from a file may name no resource: it still gets a track.
    Slice s{r.resource.empty() ? "unassigned" : r.resource, r.label.empty() ? r.kind : r.label, category_of(r),
            r.start_s, r.end_s, {}};
    s.args.emplace_back("step", std::to_string(r.step));
    if (r.op >= 0) s.args.emplace_back("op", std::to_string(r.op));
    if (r.layer >= 0) s.args.emplace_back("layer", std::to_string(r.layer));
    if (r.block >= 0) s.args.emplace_back("block", std::to_string(r.block));
    if (r.bytes > 0.0) s.args.emplace_back("bytes", exact_number(r.bytes));
    if (r.flops > 0.0) s.args.emplace_back("flops", exact_number(r.flops));
    if (!r.ok) s.args.emplace_back("failed", "true");
    if (r.kind != "step") s.args.emplace_back("kind", quoted(r.kind));
    timeline.add_slice(std::move(s));
  }
  return timeline;
}

}  // namespace asteria::traces

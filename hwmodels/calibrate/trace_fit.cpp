#include "hwmodels/calibrate/trace_fit.hpp"

#include <cmath>
#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "core/common/error.hpp"
#include "core/common/number_text.hpp"
#include "hwmodels/calibrate/core_contention.hpp"

namespace asteria::hw::calibrate {
namespace {

using platform::Cost;
using platform::WorkKind;

double cube(std::int64_t n) {
  const auto d = static_cast<double>(n);
  return d * d * d;
}

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

// One coefficient of a group: the profile quantity it fits. A time per unit (latency, c of c·n³,
// s/flop) is the coefficient itself; a rate (bandwidth, FLOP/s, a GEMM efficiency) is its
// inverse, over `rate_scale` (a worker's threads, for a per-core rate) — a map that is its own
// inverse, so it turns coefficients into values and values into coefficients alike.
struct Term {
  std::string field;
  std::function<Quantity&(HardwareProfile&)> quantity;
  bool rate = false;
  std::function<double(const HardwareProfile&)> rate_scale = [](const HardwareProfile&) { return 1.0; };

  // Coefficient <-> the field's value; NaN for a rate from a coefficient of 0.
  double convert(double x, const HardwareProfile& p) const {
    if (!rate) return x;
    const double scaled = x * rate_scale(p);
    return scaled > 0.0 ? 1.0 / scaled : std::nan("");
  }
};

constexpr double kPriorWeight = 1e-6;
// A measured base value weighs as this share of the group's intervals (at least one).
constexpr double kMeasuredPriorShare = 0.01;

struct Group {
  std::string name;
  std::vector<Term> terms;
  std::vector<LinearObservation> observations;  // values: the seconds each interval would take alone
  std::vector<double> recorded;                 // per observation: the seconds it took
  std::vector<double> others_busy;              // per observation: the share of other cores busy (0..1)
};

void add_observation(Group& g, std::vector<double> features, double seconds, double others_busy = 0.0) {
  if (seconds <= 0.0) return;  // a clock that did not tick says nothing about a rate
  g.observations.push_back({std::move(features), seconds, 1.0});
  g.recorded.push_back(seconds);
  g.others_busy.push_back(others_busy);
}

// What each interval would have taken with the other cores idle, under a contention slowdown.
void take_out_contention(Group& g, double slowdown) {
  for (std::size_t i = 0; i < g.observations.size(); ++i)
    g.observations[i].value = g.recorded[i] / (1.0 + slowdown * g.others_busy[i]);
}

struct GroupFits {
  LinearFit alone;       // what the trace alone determines
  LinearFit with_prior;  // with the base profile as a prior: the values applied
};

// What the trace alone determines (identification, residuals), then the fit with the base
// profile as a prior: one pseudo-observation per coefficient pulling it towards the base's
// value. Identified coefficients move to the data; a combination the trace cannot split (a
// power-step GEMM and a QR of the same n both grow as n³) is split as the base splits it,
// instead of arbitrarily. A base value that was measured (microbenchmarks) weighs as 1% of
// the group's intervals at 100% error (at least one interval): the intervals outweigh it where
// they determine the coefficient, and it holds where they barely do. Without that share, a
// step's compute (the same mix of GEMM and elementwise pieces every step, one equation however
// many steps) let a handful of short launches trade the elementwise rate against GEMM
// efficiency by a factor of four between two recordings of one run. Other base values weigh
// a millionth of an interval: they decide only where the trace cannot.
// Each interval's squared relative error weighs by its length over the mean length: intervals
// of microseconds and of seconds both count (relative error), and the long ones that make up
// most of a step (a step's forward and backward) count for more than a launch of 10 µs.
GroupFits fit_group(Group& g, const HardwareProfile& base) {
  double mean = 0.0;
  for (const LinearObservation& o : g.observations) mean += o.value;
  mean /= static_cast<double>(g.observations.size());
  for (LinearObservation& o : g.observations) o.weight = 1.0 / (o.value * mean);
  GroupFits fits{fit_non_negative(g.observations, g.terms.size()), {}};
  HardwareProfile base_fields = base;  // the terms' quantities are read through mutable accessors
  std::vector<LinearObservation> with_prior = g.observations;
  for (std::size_t k = 0; k < g.terms.size(); ++k) {
    const Quantity& known = g.terms[k].quantity(base_fields);
    const double prior = g.terms[k].convert(known.value, base);
    if (!(prior > 0.0) || !std::isfinite(prior)) continue;
    std::vector<double> direction(g.terms.size(), 0.0);
    direction[k] = 1.0;
    const double measured = std::max(1.0, kMeasuredPriorShare * static_cast<double>(g.observations.size()));
    const double weight = known.provenance == Provenance::measured ? measured : kPriorWeight;
    with_prior.push_back({std::move(direction), prior, weight / (prior * prior)});
  }
  fits.with_prior = fit_non_negative(with_prior, g.terms.size());
  return fits;
}

// Intervals that saw at least this share of the other cores busy tell the slowdown; at least
// kContentionObservations of them are needed to fit it.
constexpr double kContended = 0.1;
constexpr std::size_t kContentionObservations = 3;

struct ContentionFit {
  double slowdown = 0.0;
  std::size_t observations = 0;
  bool identified = false;
  double relative_error = std::nan("");
};

// cpu.contention_slowdown s, fitted with the groups' coefficients: an interval that saw a share
// o of the other cores busy took (1 + s·o) times what the coefficients predict alone, which is
// bilinear in s and the coefficients, so the two are fitted in turn (the coefficients to the
// intervals with the contention taken out, then s by weighted least squares on relative error
// given them) until s settles. Whether the trace determines s is read off the linearised joint
// problem at the solution: the columns f·(1 + s·o) of every group's coefficients beside the
// column (predicted alone)·o of s. Where every interval on the cores saw the others equally busy
// (a device that computes throughout), s's column lies in the others' span: not identified.
ContentionFit fit_contention(const std::vector<Group*>& groups, const HardwareProfile& base) {
  ContentionFit out;
  for (const Group* g : groups)
    for (double o : g->others_busy) out.observations += o >= kContended ? 1 : 0;
  double s = base.cpu.contention_slowdown.value;
  out.slowdown = s;
  if (out.observations < kContentionObservations) return out;
  std::vector<std::vector<double>> alone(groups.size());  // per group and observation
  for (int round = 0; round < 50; ++round) {
    double numerator = 0.0, denominator = 0.0;
    for (std::size_t gi = 0; gi < groups.size(); ++gi) {
      Group* g = groups[gi];
      alone[gi].assign(g->observations.size(), 0.0);
      if (g->observations.empty()) continue;
      take_out_contention(*g, s);
      const GroupFits fits = fit_group(*g, base);
      for (std::size_t i = 0; i < g->observations.size(); ++i) {
        for (std::size_t k = 0; k < g->terms.size(); ++k)
          alone[gi][i] += fits.with_prior.coefficients[k].value * g->observations[i].features[k];
        if (g->others_busy[i] <= 0.0) continue;
        const double d = g->recorded[i], x = alone[gi][i] * g->others_busy[i], w = 1.0 / (d * d);
        numerator += w * (d - alone[gi][i]) * x;
        denominator += w * x * x;
      }
    }
    if (!(denominator > 0.0)) return out;
    const double next = std::clamp(numerator / denominator, 0.0, 10.0);
    const bool settled = std::abs(next - s) < 1e-6;
    s = next;
    if (settled) break;
  }
  out.slowdown = s;
  // The linearised joint problem at s.
  std::size_t columns = 1, offset = 0;
  for (const Group* g : groups) columns += g->terms.size();
  std::vector<LinearObservation> joint;
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const Group* g = groups[gi];
    for (std::size_t i = 0; i < g->observations.size(); ++i) {
      std::vector<double> f(columns, 0.0);
      const double scale = 1.0 + s * g->others_busy[i];
      for (std::size_t k = 0; k < g->terms.size(); ++k) f[offset + k] = g->observations[i].features[k] * scale;
      f.back() = alone[gi][i] * g->others_busy[i];
      const double d = g->recorded[i];
      joint.push_back({std::move(f), d, 1.0 / (d * d)});
    }
    offset += g->terms.size();
  }
  const LinearFit linear = fit_non_negative(joint, columns);
  const CoefficientFit& fit = linear.coefficients.back();
  out.identified = s > 0.0 && fit.identified && !fit.at_bound;
  if (fit.value > 0.0) out.relative_error = fit.standard_error / fit.value;
  return out;
}

// Whether the fit says anything: identified, with a standard error under half of it.
bool identified(const ContentionFit& fit) {
  return fit.observations >= kContentionObservations && fit.identified && fit.relative_error < 0.5;
}

// Device stream: 4 efficiency classes, memory, launch latency, eigh c, qr c.
constexpr std::size_t kDeviceMemory = GemmEfficiency::kClasses, kDeviceLaunch = kDeviceMemory + 1,
                      kDeviceEigh = kDeviceMemory + 2, kDeviceQr = kDeviceMemory + 3,
                      kDeviceElementwise = kDeviceMemory + 4, kDeviceTerms = kDeviceMemory + 5;

void add_device_piece(const HardwareProfile& p, const Cost& c, std::vector<double>& f) {
  if (!c.does_work()) return;  // an op that does no work is no kernel (PlanInterpreter leaves it out)
  f[kDeviceLaunch] += 1.0;
  switch (c.kind) {
    case WorkKind::gemm:
    case WorkKind::newton: {
      const double peak = c.reduced_precision ? p.gpu.bf16_flops.value : p.gpu.fp32_flops.value;
      f[GemmEfficiency::class_of(c.dimension)] += c.flops / peak;
      f[kDeviceMemory] += c.bytes;
      return;
    }
    case WorkKind::eigh: f[kDeviceEigh] += cube(c.dimension); return;
    case WorkKind::qr: f[kDeviceQr] += cube(c.dimension); return;
    case WorkKind::elementwise:
      f[kDeviceMemory] += c.bytes;
      f[kDeviceElementwise] += c.flops;
      return;
    case WorkKind::other: f[kDeviceMemory] += c.bytes; return;
  }
}

// Host worker: gemm rate, memory, eigh c, qr c, task latency.
constexpr std::size_t kHostGemm = 0, kHostMemory = 1, kHostEigh = 2, kHostQr = 3, kHostTask = 4, kHostElementwise = 5,
                      kHostTerms = 6;

void add_host_piece(const Cost& c, std::vector<double>& f) {
  if (!c.does_work()) return;  // an op that does no work is no task (PlanInterpreter leaves it out)
  f[kHostTask] += 1.0;
  switch (c.kind) {
    case WorkKind::gemm:
    case WorkKind::newton:
      f[kHostGemm] += c.flops;
      f[kHostMemory] += c.bytes;
      return;
    case WorkKind::eigh: f[kHostEigh] += cube(c.dimension); return;
    case WorkKind::qr: f[kHostQr] += cube(c.dimension); return;
    case WorkKind::elementwise:
      f[kHostMemory] += c.bytes;
      f[kHostElementwise] += c.flops;
      return;
    case WorkKind::other: f[kHostMemory] += c.bytes; return;
  }
}


Term seconds(std::string field, std::function<Quantity&(HardwareProfile&)> quantity) {
  return {std::move(field), std::move(quantity), false};
}

Term rate(std::string field, std::function<Quantity&(HardwareProfile&)> quantity) {
  return {std::move(field), std::move(quantity), true};
}

Group device_group() {
  Group g{"device", {}, {}, {}, {}};
  for (std::size_t k = 0; k < GemmEfficiency::kClasses; ++k)
    g.terms.push_back(rate("gpu.gemm_efficiency." + std::string(GemmEfficiency::kNames[k]),
                           [k](HardwareProfile& p) -> Quantity& { return p.gpu.gemm_efficiency.by_class(k); }));
  g.terms.push_back(rate("gpu.memory_bandwidth", [](HardwareProfile& p) -> Quantity& { return p.gpu.memory_bandwidth; }));
  g.terms.push_back(seconds("gpu.launch_latency", [](HardwareProfile& p) -> Quantity& { return p.gpu.launch_latency; }));
  g.terms.push_back(
      seconds("gpu.eigh_seconds_per_n3", [](HardwareProfile& p) -> Quantity& { return p.gpu.eigh_seconds_per_n3; }));
  g.terms.push_back(seconds("gpu.qr_seconds_per_n3", [](HardwareProfile& p) -> Quantity& { return p.gpu.qr_seconds_per_n3; }));
  g.terms.push_back(seconds("gpu.elementwise_seconds_per_flop",
                            [](HardwareProfile& p) -> Quantity& { return p.gpu.elementwise_seconds_per_flop; }));
  return g;
}

Group host_group() {
  Group g{"host worker", {}, {}, {}, {}};
  Term gemm = rate("cpu.gemm_flops_per_core", [](HardwareProfile& p) -> Quantity& { return p.cpu.gemm_flops_per_core; });
  gemm.rate_scale = [](const HardwareProfile& p) { return p.cpu.threads_per_worker.value; };
  g.terms.push_back(std::move(gemm));
  g.terms.push_back(rate("cpu.memory_bandwidth", [](HardwareProfile& p) -> Quantity& { return p.cpu.memory_bandwidth; }));
  g.terms.push_back(
      seconds("cpu.eigh_seconds_per_n3", [](HardwareProfile& p) -> Quantity& { return p.cpu.eigh_seconds_per_n3; }));
  g.terms.push_back(seconds("cpu.qr_seconds_per_n3", [](HardwareProfile& p) -> Quantity& { return p.cpu.qr_seconds_per_n3; }));
  g.terms.push_back(seconds("cpu.task_latency", [](HardwareProfile& p) -> Quantity& { return p.cpu.task_latency; }));
  g.terms.push_back(seconds("cpu.elementwise_seconds_per_flop",
                            [](HardwareProfile& p) -> Quantity& { return p.cpu.elementwise_seconds_per_flop; }));
  return g;
}

Group link_group(std::string name, std::string prefix, LinkSpec HardwareProfile::*link) {
  Group g{std::move(name), {}, {}, {}, {}};
  g.terms.push_back(seconds(prefix + ".latency", [link](HardwareProfile& p) -> Quantity& { return (p.*link).latency; }));
  g.terms.push_back(rate(prefix + ".bandwidth", [link](HardwareProfile& p) -> Quantity& { return (p.*link).bandwidth; }));
  return g;
}

Group nvme_group(std::string name, bool write) {
  Group g{std::move(name), {}, {}, {}, {}};
  g.terms.push_back(seconds("nvme.latency", [](HardwareProfile& p) -> Quantity& { return p.nvme.latency; }));
  if (write)
    g.terms.push_back(rate("nvme.write_bandwidth", [](HardwareProfile& p) -> Quantity& { return p.nvme.write_bandwidth; }));
  else
    g.terms.push_back(rate("nvme.read_bandwidth", [](HardwareProfile& p) -> Quantity& { return p.nvme.read_bandwidth; }));
  return g;
}

// A device stream goes idle for a moment between two items it runs back to back while the
// issuing thread works through the plan ops between them (bookkeeping, a launch's host side),
// and the stream, idle, then takes a moment to wake: a gap shorter than kIssueGap is
//   gpu.wake_latency + cpu.issue_latency x (the ops issued between the two items)
// (the plan ops after the first item's last op up to the second's). Gaps over varying op counts
// tell the two apart. Longer gaps are waits (for a refresh, a state move) the simulator models
// on its own. Gaps under kBacklogGap are a backlogged stream taking its next item (a dequeue):
// the item was submitted before the stream freed up, so they say nothing of either term.
constexpr double kIssueGap = 100e-6;
constexpr double kBacklogGap = 1e-6;
constexpr std::size_t kGapWake = 0, kGapIssue = 1;

Group stream_gap_group() {
  Group g{"stream gap", {}, {}, {}, {}};
  g.terms.push_back(seconds("gpu.wake_latency", [](HardwareProfile& p) -> Quantity& { return p.gpu.wake_latency; }));
  g.terms.push_back(seconds("cpu.issue_latency", [](HardwareProfile& p) -> Quantity& { return p.cpu.issue_latency; }));
  return g;
}

void add_issue_gaps(const traces::NativeTrace& trace, int unit, Group& gaps) {
  // Per step, each stream item (one interval) with the last plan op it serves.
  std::map<std::int64_t, std::map<std::pair<double, double>, std::int32_t>> by_step;
  for (const traces::TraceRecord& r : trace.records) {
    if (r.unit != unit || !r.ok || r.op < 0 || !contains(r.resource, " stream")) continue;
    std::int32_t& last = by_step[r.step].try_emplace({r.start_s, r.end_s}, r.op).first->second;
    last = std::max(last, r.op);
  }
  for (const auto& [step, items] : by_step) {
    double previous_end = -1.0;
    std::int32_t previous_op = -1;
    for (const auto& [interval, op] : items) {
      const double gap = interval.first - previous_end;
      if (previous_end >= 0.0 && gap >= kBacklogGap && gap < kIssueGap && op > previous_op) {
        std::vector<double> features(2, 0.0);
        features[kGapWake] = 1.0;
        features[kGapIssue] = static_cast<double>(op - previous_op);
        add_observation(gaps, std::move(features), gap);
      }
      if (interval.second > previous_end) {
        previous_end = interval.second;
        previous_op = op;
      }
    }
  }
}

// A GEMM size class the trace has no work of moves as the nearest class that was fitted moved:
// what made the model's GEMMs slower (or faster) than the microbenchmark (layouts, caches, the
// kernels around them) is the best guess for the sizes the trace did not run.
void follow_nearest_gemm_class(TraceCalibration& out, const HardwareProfile& base, const std::string& source) {
  constexpr std::string_view kPrefix = "gpu.gemm_efficiency.";
  std::array<FittedCoefficient*, GemmEfficiency::kClasses> by_class{};
  for (FittedCoefficient& f : out.coefficients)
    if (f.field.rfind(kPrefix, 0) == 0)
      for (std::size_t i = 0; i < GemmEfficiency::kClasses; ++i)
        if (f.field.substr(kPrefix.size()) == GemmEfficiency::kNames[i]) by_class[i] = &f;
  for (std::size_t i = 0; i < GemmEfficiency::kClasses; ++i) {
    FittedCoefficient* f = by_class[i];
    if (f == nullptr || f->applied) continue;
    std::size_t nearest = GemmEfficiency::kClasses;
    for (std::size_t d = 1; d < GemmEfficiency::kClasses && nearest == GemmEfficiency::kClasses; ++d)
      for (std::size_t j : {i - d, i + d})  // the smaller class first on a tie (i - d wraps when d > i)
        if (j < GemmEfficiency::kClasses && by_class[j] != nullptr && by_class[j]->applied) {
          nearest = j;
          break;
        }
    if (nearest == GemmEfficiency::kClasses) continue;
    const double fitted = out.profile.gpu.gemm_efficiency.by_class(nearest).value;
    const double was = base.gpu.gemm_efficiency.by_class(nearest).value;
    const double own = base.gpu.gemm_efficiency.by_class(i).value;
    if (!(was > 0.0) || !(own > 0.0) || !std::isfinite(fitted / was)) continue;
    const double ratio = fitted / was;
    f->value = std::min(1.0, own * ratio);
    f->applied = true;
    f->note = "no work of this size class in the trace: the base value scaled as " +
              std::string(GemmEfficiency::kNames[nearest]) + " moved (x" + significant(ratio, 3) + ")";
    out.profile.gpu.gemm_efficiency.by_class(i) =
        Quantity{f->value, Provenance::measured,
                 "the base value " + significant(own, 4) + " scaled as the fitted " +
                     std::string(GemmEfficiency::kNames[nearest]) + " moved from the base (x" + significant(ratio, 3) +
                     "): no GEMM of this size class in the trace " + source};
  }
}

}  // namespace

TraceCalibration calibrate_from_trace(const traces::NativeTrace& trace, const std::string& source,
                                      const HardwareProfile& base, const TraceFitOptions& options) {
  const int unit = options.unit;
  {
    // Too few steps say nothing steady about the machine: the first ones warm caches and pools.
    std::set<std::int64_t> steps;
    for (const traces::TraceRecord& r : trace.records)
      if (r.unit == unit && r.step > 0) steps.insert(r.step);
    if (steps.size() < kMinFitSteps && !options.force)
      throw InputError(source, "steps",
                       "at least " + std::to_string(kMinFitSteps) + " recorded steps of unit " + std::to_string(unit) +
                           " to fit a profile to, found " + std::to_string(steps.size()) +
                           " (record more --steps, or give --force to fit these anyway)");
  }
  Group device = device_group();
  Group host = host_group();
  std::vector<Group> links;
  links.push_back(link_group("h2d", "host_to_device", &HardwareProfile::host_to_device));
  links.push_back(link_group("d2h", "device_to_host", &HardwareProfile::device_to_host));
  links.push_back(nvme_group("nvme write", true));
  links.push_back(nvme_group("nvme read", false));

  // Device compute per step (a model may run every layer inside one record); fused launches per
  // (step, launch, resource): their rows share the launch's interval, each row with its op's pieces.
  // Per step or launch: features, recorded seconds, and the seconds weighted by the share of
  // other cores busy (contention, core_contention.hpp).
  struct Interval {
    std::vector<double> features;
    double seconds = 0.0;
    double busy_seconds = 0.0;
  };
  std::map<std::int64_t, Interval> compute;
  std::map<std::tuple<std::int64_t, std::int32_t, std::string>, Interval> launches;
  Group gaps = stream_gap_group();
  add_issue_gaps(trace, unit, gaps);
  const CoreOccupancy cores(trace, base, unit);
  for (const traces::TraceRecord& r : trace.records) {
    if (r.unit != unit || !r.ok) continue;
    const bool on_device = contains(r.resource, " stream");
    const double seconds = r.end_s - r.start_s;
    const bool on_worker = contains(r.resource, " worker ");
    const auto others_busy = [&] { return cores.on_cores(r.resource) ? cores.others_busy(r.resource, r.start_s, r.end_s) : 0.0; };
    if (on_device && (r.kind == "forward" || r.kind == "backward")) {
      Interval& step = compute.try_emplace(r.step, Interval{std::vector<double>(kDeviceTerms, 0.0)}).first->second;
      for (const Cost& c : r.cost.pieces()) add_device_piece(base, c, step.features);
      step.seconds += seconds;
      step.busy_seconds += seconds * others_busy();
    } else if ((on_device || on_worker) && r.launch >= 0) {
      auto [it, fresh] = launches.try_emplace(
          {r.step, r.launch, r.resource}, Interval{std::vector<double>(on_device ? kDeviceTerms : kHostTerms, 0.0), seconds});
      if (fresh) it->second.busy_seconds = seconds * others_busy();  // the launch's rows share its interval
      for (const Cost& c : r.cost.pieces()) {
        if (on_device) add_device_piece(base, c, it->second.features);
        else add_host_piece(c, it->second.features);
      }
    } else if ((on_worker || on_device) && r.kind == "refresh_job") {  // on the device: the synchronous baseline
      std::vector<double> f(on_device ? kDeviceTerms : kHostTerms, 0.0);
      for (const Cost& c : r.cost.pieces()) {
        if (on_device) add_device_piece(base, c, f);
        else add_host_piece(c, f);
      }
      add_observation(on_device ? device : host, std::move(f), seconds, others_busy());
    } else if (r.kind == "transfer" || r.kind == "io") {
      const double bytes = r.cost.bytes();
      Group* g = nullptr;
      if (contains(r.label, "->nvme")) g = &links[2];
      else if (contains(r.label, "nvme->")) g = &links[3];
      else if (contains(r.label, "host->device")) g = &links[0];
      else if (contains(r.label, "device->host")) g = &links[1];
      if (g != nullptr && bytes > 0.0) add_observation(*g, {1.0, bytes}, seconds);
    }
  }
  const auto share = [](const Interval& i) { return i.seconds > 0.0 ? i.busy_seconds / i.seconds : 0.0; };
  for (auto& [step, entry] : compute) add_observation(device, std::move(entry.features), entry.seconds, share(entry));
  for (auto& [key, entry] : launches) {
    Group& g = std::get<2>(key).find(" stream") != std::string::npos ? device : host;
    add_observation(g, std::move(entry.features), entry.seconds, share(entry));
  }

  TraceCalibration out;
  out.profile = base;
  out.profile.origin = "asteria calibrate --from-trace " + source;
  std::vector<Group*> groups = {&device, &host, &gaps};
  for (Group& g : links) groups.push_back(&g);
  std::size_t fitted_observations = 0;
  const ContentionFit contention = fit_contention({&device, &host}, base);
  // The other coefficients are fitted to what the intervals would have taken alone.
  const double slowdown = identified(contention) ? contention.slowdown : base.cpu.contention_slowdown.value;
  for (Group* g : {&device, &host}) take_out_contention(*g, slowdown);
  for (Group* g : groups) {
    if (g->observations.empty()) continue;
    fitted_observations += g->observations.size();
    const GroupFits fits = fit_group(*g, base);
    const LinearFit& alone = fits.alone;
    const LinearFit& fit = fits.with_prior;
    out.groups.push_back({g->name, alone.observations, alone.rms_relative_residual, alone.max_relative_residual});
    for (std::size_t k = 0; k < g->terms.size(); ++k) {
      const CoefficientFit& c = fit.coefficients[k];
      FittedCoefficient f;
      f.field = g->terms[k].field;
      f.group = g->name;
      f.identified = alone.coefficients[k].identified && !alone.coefficients[k].at_bound;
      f.value = g->terms[k].convert(c.value, base);
      f.relative_error = alone.coefficients[k].value > 0.0
                             ? alone.coefficients[k].standard_error / alone.coefficients[k].value
                             : std::nan("");
      const bool has_data = std::any_of(g->observations.begin(), g->observations.end(),
                                        [k](const LinearObservation& o) { return o.features[k] != 0.0; });
      if (!has_data) {
        f.note = "no work of this kind in the trace: kept the base value";
      } else if (!std::isfinite(f.value) || f.value <= 0.0) {
        f.note = "no valid value: kept the base value";
      } else {
        if (!f.identified) f.note = "not identified alone: split with the others as the base splits them";
        if (f.field.rfind("gpu.gemm_efficiency.", 0) == 0 && f.value > 1.0) {
          f.note = "fitted " + significant(f.value, 3) + " of the peak: clamped to 1";
          f.value = 1.0;
        }
        if (f.identified && std::isfinite(f.relative_error) && f.relative_error > kMaxRelativeError && !options.force) {
          // The trace does not pin it down: one more recording could move it anywhere.
          f.note = "standard error " + significant(100.0 * f.relative_error, 3) +
                   "% of the value: kept the base value (--force applies it)";
          out.coefficients.push_back(std::move(f));
          continue;
        }
        f.applied = true;
        std::string why = "fitted from the trace " + source + " (" + g->name + ": " +
                          std::to_string(alone.observations) + " intervals, rms relative residual " +
                          significant(100.0 * alone.rms_relative_residual, 3) + "%";
        if (std::isfinite(f.relative_error)) why += ", standard error " + significant(100.0 * f.relative_error, 3) + "%";
        if (!f.identified) why += "; not identified alone, split as the base profile splits it";
        why += ")";
        g->terms[k].quantity(out.profile) = Quantity{f.value, Provenance::measured, why};
      }
      out.coefficients.push_back(std::move(f));
    }
  }
  {
    FittedCoefficient f;
    f.field = "cpu.contention_slowdown";
    f.group = "core contention";
    f.value = contention.slowdown;
    f.relative_error = contention.relative_error;
    f.identified = identified(contention);
    if (contention.observations < kContentionObservations) {
      f.note = "fewer than " + std::to_string(kContentionObservations) +
               " intervals beside busy cores in the trace: kept the base value";
    } else if (!f.identified) {
      f.note = "not identified (fitted " + significant(contention.slowdown, 3) +
               "; the intervals beside busy cores do not separate it from the rates): kept the base value";
    } else {
      f.applied = true;
      std::string why = "fitted from the trace " + source + " (" + std::to_string(contention.observations) +
                        " intervals on the cores with at least " + significant(100.0 * kContended, 2) +
                        "% of the other cores busy, with the device and host worker coefficients";
      if (std::isfinite(f.relative_error)) why += ", standard error " + significant(100.0 * f.relative_error, 3) + "%";
      out.profile.cpu.contention_slowdown = Quantity{f.value, Provenance::measured, why + ")"};
    }
    out.coefficients.push_back(std::move(f));
  }
  follow_nearest_gemm_class(out, base, source);
  if (fitted_observations == 0)
    throw InputError(source, "records of unit " + std::to_string(unit),
                     "timed work to fit (forward/backward steps, launches, refresh jobs, copies)");
  return out;
}

}  // namespace asteria::hw::calibrate

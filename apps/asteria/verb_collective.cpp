// asteria collective: the nccl-tests of the simulator. One collective, sizes doubling from
// --min-bytes to --max-bytes, each timed as flows over the simulated NVLinks, NICs and backbone.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>

#include "core/run/option_values.hpp"
#include "apps/asteria/options.hpp"
#include "apps/asteria/output_dir.hpp"
#include "apps/asteria/progress.hpp"
#include "apps/asteria/table.hpp"
#include "apps/asteria/verbs.hpp"
#include "core/common/error.hpp"
#include "core/common/number_text.hpp"
#include "hwmodels/profile_loader.hpp"
#include "sim/collective/collective_choice.hpp"
#include "sim/collective/flow_schedule.hpp"
#include "sim/collective/run_flows.hpp"
#include "sim/simulation.hpp"
#include "sim/topology.hpp"

namespace asteria::cli {
namespace {

namespace collective = sim::collective;
using platform::Collective;

constexpr std::string_view kAbout =
    "Times one collective on a simulated machine, as nccl-tests does on a real one: for every size from\n"
    "--min-bytes to --max-bytes (doubling), the collective's algorithm (ring, tree, hierarchical) runs with\n"
    "an NCCL protocol (LL, LL128, Simple: wire bytes and per-step latencies of NCCL's tuning model) as\n"
    "flows over the links the hardware profile describes (GPU-GPU links inside a node; one NIC per GPU,\n"
    "its local index modulo the node's NICs, and a non-blocking backbone between nodes), sizes one after\n"
    "another in one simulation. By default the algorithm and protocol are NCCL's choice for each size:\n"
    "the least predicted time over the links (the simulator's default for training runs too). Prints per\n"
    "size the simulated time, the algorithm bandwidth (size / time), the bus bandwidth (algbw x\n"
    "nccl-tests' factor: all_reduce 2(n-1)/n, reduce_scatter and all_gather (n-1)/n, broadcast 1; n the\n"
    "number of ranks), the algorithm, protocol and channels that ran and the time predicted for them. A\n"
    "collective alone on its links whose predicted time is exact (flows sharing a link alike) takes that\n"
    "time without running its flows; --flows runs them.";

constexpr std::string_view kDetails =
    "Profiles: hwmodels/profiles/*.yaml (a100-40gb, a100-80gb, gb10, gh200, gh200-480gb, gh200-alps,\n"
    "  h100-pcie-host) or a path.\n"
    "Sizes follow nccl-tests: all_reduce and broadcast move a buffer of the size; reduce_scatter and\n"
    "  all_gather a gathered buffer of the size (n shards of size/n). Suffixes: KiB, MiB, GiB, KB, MB, GB.\n"
    "Ranks: the first --gpus-per-node units of each of the --nodes nodes, node by node.\n"
    "Files written with --out DIR:\n"
    "  table.csv     bytes,time_us,algbw_GBps,busbw_GBps,algorithm,protocol,channels,predicted_us, one row\n"
    "                per size\n";

constexpr RunOutput kOutputs[] = {{"table.csv"}};

po::options_description collective_options() {
  po::options_description o("Options");
  o.add_options()
      ("hw", po::value<std::string>()->required()->value_name("PROFILE"), "hardware profile name or path")
      ("nodes", po::value<int>()->default_value(1)->value_name("N"), "nodes simulated")
      ("gpus-per-node", po::value<int>()->value_name("G"),
       "ranks per node: the first G units of each node (default: the profile's units per node)")
      ("collective", po::value<std::string>()->default_value("all_reduce")->value_name("NAME"),
       "all_reduce, reduce_scatter, all_gather or broadcast")
      ("algorithm", po::value<std::string>()->default_value("auto")->value_name("NAME"),
       "auto (NCCL's choice: ring or tree, per size), ring, tree or hierarchical")
      ("protocol", po::value<std::string>()->default_value("auto")->value_name("NAME"),
       "auto (the least predicted time for the algorithm), ll, ll128 or simple")
      ("min-bytes", po::value<std::string>()->default_value("8")->value_name("SIZE"), "smallest size")
      ("max-bytes", po::value<std::string>()->default_value("128MiB")->value_name("SIZE"),
       "largest size (sizes double from --min-bytes while they do not exceed it)")
      ("root", po::value<int>()->default_value(0)->value_name("R"), "broadcast's source (a rank)")
      ("flows", "run every flow even where the predicted time is exact (by default such a size takes it: a "
                "check, slow at scale)")
      ("out", po::value<std::string>()->value_name("DIR"), "write table.csv here")
      ("overwrite", "replace the table of an earlier run in --out (refused otherwise)")
      ("no-progress", "no progress lines on stderr");
  return o;
}

Collective parse_collective(const std::string& name) {
  for (const Collective c :
       {Collective::all_reduce, Collective::reduce_scatter, Collective::all_gather, Collective::broadcast})
    if (name == platform::to_string(c)) return c;
  throw InputError("--collective", "collective",
                   "expected one of all_reduce, reduce_scatter, all_gather, broadcast; found '" + name + "'");
}

struct Settings {
  hw::HardwareProfile profile;
  int nodes = 1;
  int gpus_per_node = 1;
  Collective collective = Collective::all_reduce;
  std::optional<collective::Algorithm> algorithm;  // none: NCCL's choice
  std::optional<collective::Protocol> protocol;    // none: the least predicted time
  std::vector<std::uint64_t> sizes;
  int root = 0;
  bool flows = false;
};

Settings read_settings(const po::variables_map& v) {
  Settings s;
  s.profile = hw::load_profile(hw::find_profile(v["hw"].as<std::string>()));
  const int per_node = s.profile.units_per_node();
  s.nodes = v["nodes"].as<int>();
  if (s.nodes < 1) throw InputError("--nodes", "nodes", "expected an integer >= 1, found " + std::to_string(s.nodes));
  s.gpus_per_node = v.count("gpus-per-node") != 0 ? v["gpus-per-node"].as<int>() : per_node;
  if (s.gpus_per_node < 1 || s.gpus_per_node > per_node)
    throw InputError("--gpus-per-node", "gpus per node",
                     "expected an integer from 1 to " + std::to_string(per_node) + " (the units per node of " +
                         s.profile.name + "), found " + std::to_string(s.gpus_per_node));
  s.collective = parse_collective(v["collective"].as<std::string>());
  if (const std::string a = v["algorithm"].as<std::string>(); a != "auto") {
    try {
      s.algorithm = collective::parse_algorithm(a, "--algorithm");
    } catch (const InputError&) {
      throw InputError("--algorithm", "algorithm",
                       "expected one of auto, ring, tree, hierarchical; found '" + a + "'");
    }
  }
  if (const std::string p = v["protocol"].as<std::string>(); p != "auto") {
    try {
      s.protocol = collective::parse_protocol(p, "--protocol");
    } catch (const InputError&) {
      throw InputError("--protocol", "protocol", "expected one of auto, ll, ll128, simple; found '" + p + "'");
    }
  }
  const std::uint64_t min_bytes = run::parse_size(v["min-bytes"].as<std::string>(), "--min-bytes");
  const std::uint64_t max_bytes = run::parse_size(v["max-bytes"].as<std::string>(), "--max-bytes");
  if (min_bytes < 1) throw InputError("--min-bytes", "min bytes", "expected a size of at least 1 byte");
  if (max_bytes < min_bytes)
    throw InputError("--max-bytes", "max bytes",
                     "expected a size >= --min-bytes (" + std::to_string(min_bytes) + "), found " +
                         std::to_string(max_bytes));
  for (std::uint64_t size = min_bytes; size <= max_bytes; size *= 2) {
    s.sizes.push_back(size);
    if (size > max_bytes / 2) break;  // the next doubling would pass max_bytes (or overflow)
  }
  s.root = v["root"].as<int>();
  s.flows = v.count("flows") != 0;
  const int ranks = s.nodes * s.gpus_per_node;
  // One rank has no one to talk to: its collective takes no time and measures nothing.
  if (ranks < 2)
    throw InputError("--nodes, --gpus-per-node", "ranks",
                     "at least 2 ranks (nodes x GPUs per node), found " + std::to_string(ranks));
  if (s.root < 0 || s.root >= ranks)
    throw InputError("--root", "root",
                     "expected a rank from 0 to " + std::to_string(ranks - 1) + ", found " + std::to_string(s.root));
  return s;
}

// Rank order: node by node, the first gpus_per_node units of each.
collective::Members members_of(const Settings& s) {
  collective::Members m;
  for (int node = 0; node < s.nodes; ++node)
    for (int local = 0; local < s.gpus_per_node; ++local) {
      m.units.push_back(node * s.profile.units_per_node() + local);
      m.nodes.push_back(node);
    }
  return m;
}

struct Timed {
  double seconds = 0.0;
  collective::CollectiveChoice choice;
};

// Each size's choice and simulated seconds, in one simulation: the sizes run one after another,
// each in a fresh actor (an actor keeps its finished flows, run_flows.hpp).
std::vector<Timed> simulate(const Settings& s, const collective::Members& members, ItemProgress& progress) {
  sim::SimulationOptions options;
  options.profile = s.profile;
  options.units = s.nodes * s.profile.units_per_node();
  options.numerics = platform::Numerics::shapes;
  options.host_workers_per_unit = 1;  // no refresh work here: keep the idle actors few
  sim::Simulation simulation(options);
  std::vector<Timed> timed;
  simulation.run([&](int unit, platform::Platform&) {
    if (unit != 0) return;
    const sim::Topology& topology = simulation.topology();
    collective::LinkCosts costs(topology);
    for (const std::uint64_t size : s.sizes) {
      Timed t;
      const auto bytes = static_cast<double>(size);
      t.choice = collective::choose_collective(s.algorithm, s.protocol, s.collective, members, bytes, s.root, costs);
      if (t.choice.exact && !s.flows) {
        t.seconds = t.choice.predicted_seconds;  // alone on its links: the flows would take exactly this
      } else {
        const collective::FlowSchedule schedule = collective::compact_flow_schedule(
            t.choice.algorithm, s.collective, members, bytes, s.root, t.choice.options);
        const double start = simgrid::s4u::Engine::get_clock();
        simgrid::s4u::Actor::create("collective", topology.units.front().cpu,
                                    [&schedule, &topology] { collective::run_flows(schedule, topology); })
            ->join();
        t.seconds = simgrid::s4u::Engine::get_clock() - start;
      }
      timed.push_back(t);
      progress.done(timed.size(), std::to_string(size) + " bytes: " + significant(t.seconds * 1e6, 4) +
                                      " us simulated");
    }
  });
  return timed;
}

std::string fixed(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

}  // namespace

int collective_main(const Args& args, std::ostream& out, std::ostream& err) {
  int exit_code = 0;
  const auto values =
      parse_verb_options({"collective", "--hw PROFILE [options]", kAbout, kDetails}, collective_options(), args, out,
                         err, exit_code);
  if (!values) return exit_code;
  const Settings s = read_settings(*values);
  const std::string out_dir = values->count("out") != 0 ? (*values)["out"].as<std::string>() : "";
  if (!out_dir.empty()) prepare_output(out_dir, values->count("overwrite") != 0, "collective", kOutputs);

  const collective::Members members = members_of(s);
  ItemProgress progress(err, "collective", values->count("no-progress") == 0, s.sizes.size(),
                        std::to_string(s.sizes.size()) + " sizes over " + std::to_string(members.size()) + " ranks of " +
                            s.profile.name + " (" + std::to_string(s.nodes) + " nodes), simulating");
  const std::vector<Timed> timed = simulate(s, members, progress);
  const double factor = collective::bus_bandwidth_factor(s.collective, members.size());
  Table table{{"bytes", "time_us", "algbw_GBps", "busbw_GBps", "algorithm", "protocol", "channels", "predicted_us"},
              {true, true, true, true, false, false, true, true},
              {}};
  for (std::size_t i = 0; i < s.sizes.size(); ++i) {
    const double seconds = timed[i].seconds;
    const collective::CollectiveChoice& c = timed[i].choice;
    const double algbw = seconds > 0.0 ? static_cast<double>(s.sizes[i]) / seconds : 0.0;
    table.add_row({std::to_string(s.sizes[i]), fixed(seconds * 1e6, 3), fixed(algbw / 1e9, 4),
                   fixed(algbw * factor / 1e9, 4), std::string(collective::to_string(c.algorithm)),
                   std::string(collective::to_string(*c.options.protocol)), std::to_string(c.options.channels),
                   fixed(c.predicted_seconds * 1e6, 3)});
  }
  out << "# " << platform::to_string(s.collective) << ", "
      << (s.algorithm ? std::string(collective::to_string(*s.algorithm)) : std::string("auto")) << ", "
      << s.profile.name << ": " << s.nodes << " node(s) x " << s.gpus_per_node << " GPU(s) = " << members.size()
      << " ranks, busbw factor " << fixed(factor, 4) << '\n'
      << table_text(table);
  if (!out_dir.empty()) {
    std::ofstream file(std::filesystem::path(out_dir) / "table.csv");
    file << table_csv(table);
    if (!file) throw InputError(out_dir, "--out", "a directory table.csv can be written to");
    out << "wrote table.csv to " << out_dir << '\n';
  }
  return 0;
}

}  // namespace asteria::cli

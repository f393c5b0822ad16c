// `gpurent simulate alloc`: the FGD paper's allocation experiment on the Alibaba GPU trace
// (sim/alloc_experiment.h), run locally; no server involved. Bad inputs exit 2.
#include <chrono>
#include <charconv>
#include <iomanip>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include <unistd.h>

#include "sched/score_policy.h"
#include "sim/alloc_experiment.h"
#include "sim/alibaba_replay.h"
#include "sim/philly.h"

namespace gpurent {
namespace {

struct AllocOpts {
  std::string nodes, pods, policy = "fgd", seeds = "42-51";
  double tune = 1.3;
};

// "42-51", "42" or "42,45,47".
Result<std::vector<uint64_t>> parse_seeds(const std::string& s) {
  auto bad = [&](const std::string& why) { return Error::invalid("--seeds", why + " (got \"" + s + "\")"); };
  auto num = [](std::string_view t, uint64_t* v) {
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), *v);
    return ec == std::errc() && p == t.data() + t.size() && !t.empty();
  };
  std::vector<uint64_t> out;
  std::string_view rest = s;
  while (true) {
    const size_t comma = rest.find(',');
    std::string_view part = rest.substr(0, comma);
    const size_t dash = part.find('-');
    uint64_t a = 0, b = 0;
    if (dash == std::string_view::npos) {
      if (!num(part, &a)) return bad("expected a seed, a range A-B or a comma list");
      out.push_back(a);
    } else {
      if (!num(part.substr(0, dash), &a) || !num(part.substr(dash + 1), &b)) return bad("expected a range A-B");
      if (b < a) return bad("range end is below its start");
      if (b - a >= 10000) return bad("more than 10000 seeds");
      for (uint64_t k = 0; k <= b - a; ++k) out.push_back(a + k);  // b may be the largest seed
    }
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
  return out;
}

json series_json(const std::vector<std::optional<double>>& v) {
  json a = json::array();
  for (const auto& x : v) a.push_back(x ? json(std::round(*x * 1e4) / 1e4) : json(nullptr));
  return a;
}

int run_alloc(CliContext& ctx, const AllocOpts& o) {
  auto seeds = parse_seeds(o.seeds);
  if (!seeds) return ctx.fail(seeds.error(), kExitUsage);
  // The paper's figures go to 1.3; beyond 10 the clones would fill memory.
  if (!(o.tune > 0) || o.tune > 10) return ctx.fail(Error::invalid("--tune", "must be in (0, 10]"), kExitUsage);
  auto policy = make_score_policy(o.policy);
  if (!policy) return ctx.fail(Error::invalid("--policy", policy.error().fields.at(0).reason), kExitUsage);
  const std::string policy_name((*policy)->name());  // canonical lower-case name
  auto nodes = read_trace_nodes_file(o.nodes);
  if (!nodes) return ctx.fail(nodes.error(), kExitUsage);
  auto pods = read_trace_pods_file(o.pods);
  if (!pods) return ctx.fail(pods.error(), kExitUsage);
  auto exp = AllocExperiment::make(std::move(*nodes), std::move(*pods));
  if (!exp) return ctx.fail(exp.error(), kExitUsage);

  const auto start = std::chrono::steady_clock::now();
  std::vector<AllocSeries> runs;
  for (uint64_t seed : *seeds) {
    auto r = exp->run(policy_name, seed, o.tune);
    if (!r) return ctx.fail(r.error(), kExitUsage);
    runs.push_back(std::move(*r));
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto mean = mean_series(runs);

  json doc{{"policy", policy_name}, {"tune", o.tune}, {"seeds", *seeds}, {"alloc_pct", series_json(mean)},
           {"run_seconds", secs}};
  json per = json::array();
  for (const auto& r : runs)
    per.push_back({{"seed", r.seed}, {"pods", r.pods}, {"failed", r.failed}, {"alloc_pct", series_json(r.alloc_pct)}});
  doc["per_seed"] = std::move(per);
  return ctx.emit(doc, [&](std::ostream& out) {
    out << "policy " << policy_name << ", tune " << o.tune << ", " << runs.size() << " seed(s), "
        << exp->pod_count() << " pods in the trace\n";
    out << "arrived %   allocated % (mean over seeds)\n";
    out << std::fixed << std::setprecision(2);
    for (int x : {50, 80, 100, 110, 120, 130}) {
      out << std::setw(9) << x << "   ";
      if (mean[x]) out << std::setw(11) << *mean[x] << '\n';
      else out << std::setw(11) << "-" << '\n';
    }
    out << std::setprecision(3) << "run time " << secs << " s (" << secs / static_cast<double>(runs.size())
        << " s per experiment)\n";
  });
}

struct PhillyOpts {
  std::string trace, policies = "fgd,fgdpack,bestfit,random";
  double headroom = 1.25;
  int64_t nodes = 0;
  int64_t limit = 0;
};

// A one-line bar on stderr, only when stderr is a terminal.
std::function<void(int64_t, int64_t)> progress_bar(const std::string& label) {
  if (!isatty(STDERR_FILENO)) return {};
  return [label](int64_t done, int64_t total) {
    const int width = 30;
    const int filled = total ? static_cast<int>(width * done / total) : width;
    std::cerr << '\r' << label << " [" << std::string(filled, '#') << std::string(width - filled, ' ') << "] " << done
              << '/' << total << (done == total ? "\n" : "") << std::flush;
  };
}

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string x; std::getline(ss, x, ',');)
    if (!x.empty()) out.push_back(x);
  return out;
}

int run_replays(CliContext& ctx, const ReplayInput& in, const std::string& policies, json doc,
                const std::string& title) {
  const auto names = split_list(policies);
  if (names.empty()) return ctx.fail(Error::invalid("--policies", "name at least one policy"), kExitUsage);
  for (const auto& n : names)
    if (auto p = make_score_policy(n); !p) return ctx.fail(Error::invalid("--policies", p.error().fields.at(0).reason), kExitUsage);
  std::vector<ReplayReport> reports;
  for (const auto& n : names) {
    SchedConfig cfg;
    cfg.score_policy = n;
    auto r = replay(in, cfg, progress_bar(n));
    if (!r) return ctx.fail(r.error(), kExitUsage);
    reports.push_back(std::move(*r));
  }
  json rows = json::array();
  for (const auto& r : reports)
    rows.push_back({{"policy", r.policy}, {"finished", r.finished}, {"never_started", r.never_started},
                    {"preemptions", r.preemptions}, {"wait_mean_s", r.wait_mean_s}, {"wait_p50_s", r.wait_p50_s},
                    {"wait_p95_s", r.wait_p95_s}, {"jct_mean_s", r.jct_mean_s}, {"jct_p50_s", r.jct_p50_s},
                    {"jct_p95_s", r.jct_p95_s}, {"utilization_pct", r.utilization_pct},
                    {"makespan_s", r.makespan_s}, {"alloc_pct", r.alloc_pct}, {"passes", r.passes},
                    {"decisions", r.decisions}, {"run_seconds", r.run_seconds}});
  doc["policies"] = std::move(rows);
  return ctx.emit(doc, [&](std::ostream& out) {
    out << title << "\n";
    out << std::left << std::setw(14) << "POLICY" << std::right << std::setw(12) << "WAIT MEAN" << std::setw(11)
        << "WAIT P95" << std::setw(12) << "JCT MEAN" << std::setw(12) << "JCT P95" << std::setw(7) << "UTIL%"
        << std::setw(9) << "UNPLACED" << std::setw(9) << "RUN S" << "\n";
    out << std::fixed;
    for (const auto& r : reports)
      out << std::left << std::setw(14) << r.policy << std::right << std::setprecision(0) << std::setw(11)
          << r.wait_mean_s << "s" << std::setw(10) << r.wait_p95_s << "s" << std::setw(11) << r.jct_mean_s << "s"
          << std::setw(11) << r.jct_p95_s << "s" << std::setprecision(1) << std::setw(7) << r.utilization_pct
          << std::setw(9) << r.never_started << std::setprecision(2) << std::setw(9) << r.run_seconds << "\n";
  });
}

int run_philly(CliContext& ctx, const PhillyOpts& o) {
  if (!(o.headroom > 0) || o.headroom > 100) return ctx.fail(Error::invalid("--headroom", "must be in (0, 100]"), kExitUsage);
  auto jobs = read_philly_file(o.trace);
  if (!jobs) return ctx.fail(jobs.error(), kExitUsage);
  if (o.limit > 0 && static_cast<int64_t>(jobs->size()) > o.limit) jobs->resize(static_cast<size_t>(o.limit));
  const int64_t nodes = o.nodes > 0 ? o.nodes : philly_nodes_for(*jobs, o.headroom);
  // As --nodes allows: a trace of many short wide jobs would size a cluster past memory.
  if (nodes > 100000)
    return ctx.fail(Error::invalid("--nodes", o.trace + " sizes a cluster of " + std::to_string(nodes) +
                                                  " nodes (more than 100000): give --nodes or a smaller --headroom"),
                    kExitUsage);
  const ReplayInput in = philly_replay_input(*jobs, nodes);
  json doc{{"trace", o.trace}, {"jobs", in.jobs.size()}, {"nodes", nodes}, {"gpus", nodes * 8}};
  return run_replays(ctx, in, o.policies, doc,
                     std::to_string(in.jobs.size()) + " Philly jobs on " + std::to_string(nodes) + " nodes x 8 GPUs (" +
                         std::to_string(nodes * 8) + " GPUs)");
}

struct AlibabaOpts {
  std::string nodes, pods, policies = "fgd,fgdpack,bestfit,random";
  double speedup = 1.0;
};

int run_alibaba(CliContext& ctx, const AlibabaOpts& o) {
  auto nodes = read_trace_nodes_file(o.nodes);
  if (!nodes) return ctx.fail(nodes.error(), kExitUsage);
  auto pods = read_trace_pods_file(o.pods);
  if (!pods) return ctx.fail(pods.error(), kExitUsage);
  auto in = alibaba_replay_input(*nodes, *pods, o.speedup);
  if (!in) return ctx.fail(Error::invalid("--" + in.error().fields.at(0).field, in.error().fields.at(0).reason), kExitUsage);
  int64_t gpus = 0;
  for (const auto& n : *nodes) gpus += n.gpus;
  json doc{{"nodes_file", o.nodes}, {"pods_file", o.pods}, {"jobs", in->jobs.size()}, {"nodes", nodes->size()},
           {"gpus", gpus}, {"speedup", o.speedup}};
  return run_replays(ctx, *in, o.policies, doc,
                     std::to_string(in->jobs.size()) + " pods on " + std::to_string(nodes->size()) + " nodes (" +
                         std::to_string(gpus) + " GPUs), arrivals and departures");
}

}  // namespace

void add_simulate_command(CLI::App& app, CliContext& ctx) {
  auto* sim = app.add_subcommand("simulate", "run scheduler simulations locally on trace files");
  sim->require_subcommand(1);
  auto o = std::make_shared<AllocOpts>();
  auto* alloc = sim->add_subcommand(
      "alloc", "the FGD paper's allocation experiment (shared/data/traces/alibaba-gpu-v2023/PROTOCOL.md)");
  alloc->add_option("--nodes", o->nodes, "node list CSV (openb_node_list_gpu_node.csv)")->required();
  alloc->add_option("--pods", o->pods, "pod list CSV (openb_pod_list_*.csv)")->required();
  std::string names;
  for (const auto& n : score_policy_names()) names += (names.empty() ? "" : ", ") + n;
  alloc->add_option("--policy", o->policy, names)
      ->capture_default_str();
  alloc->add_option("--seeds", o->seeds, "seeds: A-B, one seed, or a comma list")->capture_default_str();
  alloc->add_option("--tune", o->tune, "GPU demand to arrive, as a multiple of the cluster's GPUs")
      ->capture_default_str();
  alloc->callback([&ctx, o] { ctx.action = [&ctx, o] { return run_alloc(ctx, *o); }; });

  auto po = std::make_shared<PhillyOpts>();
  auto* philly = sim->add_subcommand(
      "philly", "replay the Philly trace (arrivals and departures) through the live scheduler, per policy");
  philly->add_option("--trace", po->trace, "philly.csv (shared/data/traces/philly)")->required();
  philly->add_option("--policies", po->policies, "comma-separated placement policies")->capture_default_str();
  philly->add_option("--nodes", po->nodes, "8-GPU nodes, 1 to 100000 (default: sized from the trace's mean load)")
      ->check(CLI::Range(int64_t{1}, int64_t{100000}));
  philly->add_option("--headroom", po->headroom, "cluster size as a multiple of the mean GPU load")
      ->capture_default_str();
  philly->add_option("--limit", po->limit, "replay only the first N jobs by submission time")
      ->check(CLI::Range(int64_t{1}, std::numeric_limits<int64_t>::max()));
  philly->callback([&ctx, po] { ctx.action = [&ctx, po] { return run_philly(ctx, *po); }; });

  auto ao = std::make_shared<AlibabaOpts>();
  auto* ali = sim->add_subcommand(
      "alibaba", "replay the Alibaba GPU trace's pods (arrivals and departures) through the live scheduler");
  ali->add_option("--nodes", ao->nodes, "node list CSV (openb_node_list_gpu_node.csv)")->required();
  ali->add_option("--pods", ao->pods, "pod list CSV with creation_time and deletion_time")->required();
  ali->add_option("--policies", ao->policies, "comma-separated placement policies")->capture_default_str();
  ali->add_option("--speedup", ao->speedup, "compress arrival times by this factor (durations unchanged)")
      ->capture_default_str();
  ali->callback([&ctx, ao] { ctx.action = [&ctx, ao] { return run_alibaba(ctx, *ao); }; });
}

}  // namespace gpurent

// `gpurent simulate alloc`: the FGD paper's allocation experiment on the Alibaba GPU trace
// (sim/alloc_experiment.h), run locally; no server involved. Bad inputs exit 2.
#include <chrono>
#include <charconv>
#include <iomanip>
#include <memory>

#include "cli/commands.h"
#include "sched/score_policy.h"
#include "sim/alloc_experiment.h"

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
      for (uint64_t x = a; x <= b; ++x) out.push_back(x);
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
  if (!(o.tune > 0)) return ctx.fail(Error::invalid("--tune", "must be > 0"), kExitUsage);
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

}  // namespace

void add_simulate_command(CLI::App& app, CliContext& ctx) {
  auto* sim = app.add_subcommand("simulate", "run scheduler simulations locally on trace files");
  sim->require_subcommand(1);
  auto o = std::make_shared<AllocOpts>();
  auto* alloc = sim->add_subcommand(
      "alloc", "the FGD paper's allocation experiment (shared/data/traces/alibaba-gpu-v2023/PROTOCOL.md)");
  alloc->add_option("--nodes", o->nodes, "node list CSV (openb_node_list_gpu_node.csv)")->required();
  alloc->add_option("--pods", o->pods, "pod list CSV (openb_pod_list_*.csv)")->required();
  alloc->add_option("--policy", o->policy, "random, dotprod, gpuclustering, gpupacking, bestfit or fgd")
      ->capture_default_str();
  alloc->add_option("--seeds", o->seeds, "seeds: A-B, one seed, or a comma list")->capture_default_str();
  alloc->add_option("--tune", o->tune, "GPU demand to arrive, as a multiple of the cluster's GPUs")
      ->capture_default_str();
  alloc->callback([&ctx, o] { ctx.action = [&ctx, o] { return run_alloc(ctx, *o); }; });
}

}  // namespace gpurent

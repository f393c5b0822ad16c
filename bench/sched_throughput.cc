// bench/run sched_throughput [TRACE_DIR] [JOBS_100K]: placement decisions per second of the live
// engine (SchedEngine, the server's scheduler) on a deep queue, in one scheduling pass:
//  1. the Alibaba trace's 6,212-GPU cluster (openb_node_list_gpu_node.csv) with every pod of
//     openb_pod_list_default.csv queued at once (8,152 jobs; whole GPUs, shares, CPU-only, GPU-model
//     constraints; converted as `gpurent simulate alibaba` does); baseline in the same run: the allocation experiment's one-pod placer
//     (AllocScheduler, no quotas, gangs or fair share) placing the same pods in the same order,
//     scanning every node for each pod as it did before the placement indexes (Mode::kScan);
//  2. a synthetic 100,000-GPU cluster (12,500 nodes × 8 H100) with JOBS_100K (default 50,000)
//     queued jobs of mixed shapes (1/2/4/8 GPUs, 2×8 gangs, 0.25-GPU shares), seeded.
//  3. fgdauto on the trace cluster: the first pass with its rehearsal inside (offline runs) beside
//     the pass the server runs (SchedConfig::defer_slow_prepare: FGD's scores while the
//     rehearsal, timed on its own, runs elsewhere) — what a control-loop write waits for.
// A decision is a job the pass placed or left pending with a reason. Published context (not
// measured here): kube-scheduler 680–810 pods/s at 5,000 nodes (scheduler_perf), Slurm ~500 jobs/s.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>

#include "sched/alloc_scheduler.h"
#include "sched/engine.h"
#include "sim/alibaba_replay.h"
#include "sim/trace_reader.h"

using namespace gpurent;

namespace {

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

SchedProject open_project() {
  SchedProject p;
  p.id = p.name = p.tenant = "bench";
  p.quota.gpus_per_model[kAnyGpuModel] = kMaxQuotaGpus;
  return p;
}

struct PassResult {
  double seconds = 0;
  size_t placed = 0, decided = 0;
};

PassResult one_pass(SchedEngine& e, size_t jobs) {
  const auto t0 = std::chrono::steady_clock::now();
  auto ev = e.schedule(1000);
  PassResult r;
  r.seconds = since(t0);
  r.placed = e.running_count();
  r.decided = jobs;
  (void)ev;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "../shared/data/traces/alibaba-gpu-v2023";
  const size_t jobs_100k = argc > 2 ? std::stoul(argv[2]) : 50000;
  double engine_rate = 0, baseline_rate = 0;

  // 1. The 6,212-GPU trace cluster.
  const std::string nodes_csv = dir + "/openb_node_list_gpu_node.csv", pods_csv = dir + "/openb_pod_list_default.csv";
  if (!std::filesystem::exists(nodes_csv) || !std::filesystem::exists(pods_csv)) {
    std::printf("skipping the trace cluster: %s not found (see README: data sets)\n", nodes_csv.c_str());
  } else {
    auto nodes = read_trace_nodes_file(nodes_csv);
    auto pods = read_trace_pods_file(pods_csv);
    if (!nodes || !pods) return std::printf("cannot read the trace\n"), 1;
    auto in = alibaba_replay_input(*nodes, *pods);
    if (!in) return std::printf("%s\n", in.error().message.c_str()), 1;
    int64_t gpus = 0;
    for (const auto& n : *nodes) gpus += n.gpus;
    for (const char* policy : {"fgd", "bestfit"}) {
      SchedConfig cfg;
      cfg.score_policy = policy;
      auto e = SchedEngine::make(cfg);
      for (const auto& n : in->nodes) (void)(*e)->add_node(n);
      for (const auto& p : in->projects) (*e)->set_project(p);
      TimeMs order = 0;
      for (auto j : in->jobs) {  // all queued at once, in file order
        j.job.submitted_at = order++;
        (void)(*e)->submit(j.job);
      }
      const PassResult r = one_pass(**e, pods->size());
      const double rate = static_cast<double>(r.decided) / r.seconds;
      std::printf("trace cluster (%lld GPUs, %zu nodes), %-7s: %zu jobs decided in %.3f s (%zu placed): %.0f decisions/s\n",
                  static_cast<long long>(gpus), nodes->size(), policy, r.decided, r.seconds, r.placed, rate);
      if (std::string(policy) == "fgd") engine_rate = rate;
    }
    for (const bool defer : {false, true}) {
      SchedConfig cfg;
      cfg.score_policy = "fgdauto";
      cfg.defer_slow_prepare = defer;
      auto e = SchedEngine::make(cfg);
      for (const auto& n : in->nodes) (void)(*e)->add_node(n);
      for (const auto& p : in->projects) (*e)->set_project(p);
      TimeMs order = 0;
      for (auto j : in->jobs) {
        j.job.submitted_at = order++;
        (void)(*e)->submit(j.job);
      }
      const PassResult r = one_pass(**e, pods->size());
      std::printf("trace cluster, fgdauto, rehearsal %s: first pass %.3f s (%zu placed)", defer ? "deferred " : "in the pass",
                  r.seconds, r.placed);
      if (auto task = (*e)->take_policy_task()) {
        const auto t0 = std::chrono::steady_clock::now();
        const int choice = task();
        std::printf("; the rehearsal on its own: %.3f s (chose variant %d)", since(t0), choice);
        (*e)->adopt_policy_choice(choice);
      }
      std::printf("\n");
    }
    // Baseline: the experiment's placer, same pods, same order.
    AllocCluster c;
    for (const auto& n : *nodes) (void)c.add_node(n.name, n.cpu_milli, n.memory_mib, n.gpus, n.model);
    std::vector<int> order(c.size());
    for (int k = 0; k < c.size(); ++k) order[k] = k;
    auto policy = make_score_policy("fgd");
    std::vector<AllocPod> workload;
    for (auto p : *pods) c.intern_spec(p.pod), workload.push_back(p.pod);
    (*policy)->prepare(c, workload);
    AllocScheduler s(c, **policy, order, AllocScheduler::Mode::kScan);  // as before the indexes
    SimRng rng(42);
    const auto t0 = std::chrono::steady_clock::now();
    size_t placed = 0;
    for (const auto& p : workload) placed += s.place(p, rng).has_value();
    const double secs = since(t0);
    baseline_rate = static_cast<double>(workload.size()) / secs;
    std::printf("baseline: experiment placer, fgd: %zu pods in %.3f s (%zu placed): %.0f decisions/s\n",
                workload.size(), secs, placed, baseline_rate);
  }

  // 2. Synthetic 100,000 GPUs with a deep queue.
  for (const char* policy : {"fgd", "bestfit"}) {
    SchedConfig cfg;
    cfg.score_policy = policy;
    auto e = SchedEngine::make(cfg);
    for (int i = 0; i < 12500; ++i) {
      SchedNode n;
      n.id = "n" + std::to_string(i);
      n.gpu_model = "h100-sxm5-80gb";
      n.form_factor = FormFactor::kSxm;
      n.gpu_memory_gib = 80;
      n.cpu_cores = 112;
      n.memory_gib = 2048;
      n.rdma = kRdmaIb;
      n.gpu_domains.assign(8, n.id + "/nv");
      (void)(*e)->add_node(n);
    }
    (*e)->set_project(open_project());
    std::mt19937_64 rng(7);
    for (size_t i = 0; i < jobs_100k; ++i) {
      SchedJob j;
      j.id = "j" + std::to_string(i);
      j.tenant = j.project = "bench";
      const int kind = static_cast<int>(rng() % 10);
      if (kind < 3) j.gpus_per_worker = 1;
      else if (kind < 5) j.gpus_per_worker = 2;
      else if (kind < 6) j.gpus_per_worker = 4;
      else if (kind < 8) j.gpus_per_worker = 8;
      else if (kind < 9) j.workers = 2, j.gpus_per_worker = 8;
      else j.gpu_milli = 250, j.cpu_cores = 4, j.memory_gib = 32;
      j.submitted_at = static_cast<TimeMs>(i);
      (void)(*e)->submit(j);
    }
    const PassResult r = one_pass(**e, jobs_100k);
    std::printf("synthetic 100,000 GPUs, %-7s: %zu jobs decided in %.3f s (%zu placed): %.0f decisions/s\n", policy,
                r.decided, r.seconds, r.placed, static_cast<double>(r.decided) / r.seconds);
    if (engine_rate == 0 && std::string(policy) == "fgd") engine_rate = static_cast<double>(r.decided) / r.seconds;
  }
  std::printf("sched_throughput: %.0f decisions/s (baseline: %.0f decisions/s)\n", engine_rate, baseline_rate);
  return 0;
}

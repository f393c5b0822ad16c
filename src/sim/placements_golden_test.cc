// The live engine's placements on fixed queues, compared with those recorded before the placement
// indexes (docs/scheduler.md#speed) were built: the Alibaba trace queue (every pod at once, fgd and
// bestfit; from ../shared/data when present), a synthetic H100 cluster with gangs and shares, and a
// synthetic commercial world (sites, offers in two currencies, contracts, price caps, spot).
// Each world runs a pass, loses a seeded tenth of its running jobs, and runs a second pass; every
// event (placements with their GPUs and offers, pending reasons) is compared line by line.
// The Philly trace's first 6,000 jobs are replayed (arrivals, departures, backfill on recorded
// durations: thousands of passes over a deep queue) and the report compared to full precision.
// Re-record only for an intended change of placement: GPURENT_RECORD_PLACEMENTS=1 writes the file.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "sched/engine.h"
#include "sim/alibaba_replay.h"
#include "sim/philly.h"
#include "sim/replay.h"
#include "sim/trace_reader.h"

namespace gpurent {
namespace {

const char* const kGolden = GPURENT_SOURCE_DIR "/src/sim/testdata/placements_golden.txt.gz";

void write_events(std::ostream& out, const std::string& world, const std::vector<SchedEvent>& events) {
  for (const SchedEvent& e : events) {
    out << world << ' ' << sched_event_kind_name(e.kind) << ' ' << e.job;
    for (const SchedWorker& w : e.placement) {
      out << ' ' << w.replica << '.' << w.worker << '@' << w.node << ':';
      for (size_t g = 0; g < w.gpus.size(); ++g) out << (g ? "," : "") << w.gpus[g];
      if (w.gpu_milli) out << '/' << w.gpu_milli;
      if (!w.offer.empty()) out << '$' << w.offer;
    }
    if (!e.reason.empty()) out << " | " << render_en(e.reason);
    out << '\n';
  }
}

// Two passes with a seeded tenth of the running jobs removed between them.
void run_world(std::ostream& out, const std::string& world, SchedEngine& e, const std::vector<std::string>& ids) {
  write_events(out, world + "/1", e.schedule(1000));
  std::mt19937_64 rng(11);
  for (const std::string& id : ids)
    if (e.is_running(id) && rng() % 10 == 0) e.remove(id);
  write_events(out, world + "/2", e.schedule(2000));
}

SchedProject open_project(const std::string& id, const std::string& tenant) {
  SchedProject p;
  p.id = p.name = id;
  p.tenant = tenant;
  p.quota.gpus_per_model[kAnyGpuModel] = kMaxQuotaGpus;
  return p;
}

void trace_worlds(std::ostream& out, bool& have_trace) {
  const std::filesystem::path dir = GPURENT_SOURCE_DIR "/../shared/data/traces/alibaba-gpu-v2023";
  have_trace = std::filesystem::exists(dir / "openb_pod_list_default.csv");
  if (!have_trace) return;
  auto nodes = read_trace_nodes_file((dir / "openb_node_list_gpu_node.csv").string());
  auto pods = read_trace_pods_file((dir / "openb_pod_list_default.csv").string());
  ASSERT_TRUE(nodes.ok() && pods.ok());
  auto in = alibaba_replay_input(*nodes, *pods);
  ASSERT_TRUE(in.ok());
  for (const char* policy : {"fgd", "bestfit"}) {
    SchedConfig cfg;
    cfg.score_policy = policy;
    auto e = SchedEngine::make(cfg);
    ASSERT_TRUE(e.ok());
    for (const auto& n : in->nodes) ASSERT_TRUE((*e)->add_node(n).ok());
    for (const auto& p : in->projects) (*e)->set_project(p);
    std::vector<std::string> ids;
    TimeMs order = 0;
    for (auto j : in->jobs) {
      j.job.submitted_at = order++;
      ids.push_back(j.job.id);
      ASSERT_TRUE((*e)->submit(j.job).ok());
    }
    run_world(out, std::string("trace-") + policy, **e, ids);
  }
}

// 2,000 nodes × 8 H100 in NVLink domains of 8, 12,000 jobs: 1/2/4/8 GPUs, 2×8 gangs, 0.25 shares.
void synthetic_world(std::ostream& out) {
  auto e = SchedEngine::make({});
  ASSERT_TRUE(e.ok());
  for (int i = 0; i < 2000; ++i) {
    SchedNode n;
    n.id = "n" + std::to_string(i);
    n.gpu_model = "h100-sxm5-80gb";
    n.form_factor = FormFactor::kSxm;
    n.gpu_memory_gib = 80;
    n.cpu_cores = 112;
    n.memory_gib = 2048;
    n.rdma = kRdmaIb;
    n.gpu_domains.assign(8, n.id + "/nv");
    ASSERT_TRUE((*e)->add_node(n).ok());
  }
  (*e)->set_project(open_project("p", "t"));
  std::mt19937_64 rng(7);
  std::vector<std::string> ids;
  for (int i = 0; i < 12000; ++i) {
    SchedJob j;
    j.id = "j" + std::to_string(i);
    j.tenant = "t";
    j.project = "p";
    const int kind = static_cast<int>(rng() % 10);
    if (kind < 3) j.gpus_per_worker = 1;
    else if (kind < 5) j.gpus_per_worker = 2;
    else if (kind < 6) j.gpus_per_worker = 4;
    else if (kind < 8) j.gpus_per_worker = 8;
    else if (kind < 9) j.workers = 2, j.gpus_per_worker = 8;
    else j.gpu_milli = 250, j.cpu_cores = 4, j.memory_gib = 32;
    j.submitted_at = i;
    ids.push_back(j.id);
    ASSERT_TRUE((*e)->submit(j).ok());
  }
  run_world(out, "synthetic", **e, ids);
}

// Two suppliers, four sites in two countries, offers in CNY and USD (one contract-only, one with a
// spot price), three tenants (one with a contract and sovereignty), price caps, named offers,
// regions, gangs kept on one site and gangs that span.
void commercial_world(std::ostream& out) {
  auto e = SchedEngine::make({});
  ASSERT_TRUE(e.ok());
  auto offer = [](std::string id, std::string cur, int64_t price) {
    SchedOffer o;
    o.id = o.name = std::move(id);
    o.currency = std::move(cur);
    o.on_demand = price;
    return o;
  };
  SchedOffer cn_a = offer("cn-a", "CNY", 17'500'000), cn_b = offer("cn-b", "CNY", 15'000'000),
             cn_c = offer("cn-c", "CNY", 12'000'000), us_a = offer("us-a", "USD", 2'990'000),
             us_b = offer("us-b", "USD", 3'500'000);
  cn_c.contract_only = true;
  cn_c.contract_tenants = {"t-cn"};
  cn_c.committed_milli["t-cn"] = 64'000;
  us_b.spot = 1'200'000;
  for (const SchedOffer& o : {cn_a, cn_b, cn_c, us_a, us_b}) ASSERT_TRUE((*e)->set_offer(o).ok());
  struct Site {
    const char *supplier, *site, *region, *country;
    std::vector<std::string> offers;
  };
  const std::vector<Site> sites = {{"s1", "sh", "cn-east", "CN", {"cn-a", "cn-c"}},
                                   {"s1", "wh", "cn-central", "CN", {"cn-a", "cn-b"}},
                                   {"s2", "va", "us-east", "US", {"us-a", "us-b"}},
                                   {"s2", "or", "us-west", "US", {"us-a"}}};
  const char* models[] = {"h100-sxm5-80gb", "a100-sxm4-80gb", "l40s-48gb"};
  for (int i = 0; i < 400; ++i) {
    const Site& s = sites[i % 4];
    SchedNode n;
    n.id = "c" + std::to_string(i);
    n.gpu_model = models[(i / 4) % 3];
    n.form_factor = (i / 4) % 3 == 2 ? FormFactor::kPcie : FormFactor::kSxm;
    n.gpu_memory_gib = (i / 4) % 3 == 2 ? 48 : 80;
    n.cpu_cores = 96;
    n.memory_gib = 1024;
    n.rdma = i % 3 == 0 ? kRdmaIb : i % 3 == 1 ? kRdmaRoce : 0;
    for (int g = 0; g < 8; ++g) n.gpu_domains.push_back(n.form_factor == FormFactor::kSxm ? n.id + "/nv" : "");
    n.supplier = s.supplier;
    n.site = s.site;
    n.region = s.region;
    n.country = s.country;
    n.offers = s.offers;
    if (i % 50 == 7) n.reserved_for = "t-us";
    ASSERT_TRUE((*e)->add_node(n).ok());
  }
  for (const char* t : {"t-cn", "t-us", "t-any"}) (*e)->set_project(open_project(std::string("p-") + t, t));
  std::mt19937_64 rng(13);
  std::vector<std::string> ids;
  for (int i = 0; i < 3000; ++i) {
    SchedJob j;
    j.id = "k" + std::to_string(i);
    const int t = static_cast<int>(rng() % 3);
    j.tenant = t == 0 ? "t-cn" : t == 1 ? "t-us" : "t-any";
    j.project = "p-" + j.tenant;
    j.terms.currency = t == 0 ? "CNY" : t == 1 ? "USD" : "";
    if (t == 0) j.terms.places = {"CN"};
    const int kind = static_cast<int>(rng() % 12);
    if (kind < 4) j.gpus_per_worker = 1 + static_cast<int64_t>(rng() % 4);
    else if (kind < 6) j.gpus_per_worker = 8;
    else if (kind < 8) j.workers = 2 + static_cast<int64_t>(rng() % 3), j.gpus_per_worker = 8;
    else if (kind < 9) j.gpu_milli = 500, j.cpu_cores = 8, j.memory_gib = 64;
    else if (kind < 10) j.cpu_cores = 4, j.memory_gib = 16;
    else j.workers = 2, j.gpus_per_worker = 4, j.terms.span_sites = true;
    switch (rng() % 8) {
      case 0: j.gpu_models = {models[rng() % 3]}; break;
      case 1: j.rdma = RdmaRequirement::kInfiniband; break;
      case 2: j.terms.max_price = t == 0 ? 16'000'000 : 3'000'000; break;
      case 3: j.spot = true, j.terms.max_price = t == 0 ? 13'000'000 : 1'500'000; break;
      case 4: if (t == 0) j.reserved = true; else j.terms.regions = {"us-west"}; break;
      case 5: j.terms.offers = {t == 0 ? "cn-b" : "us-b"}; break;
      case 6: j.form_factor = FormFactor::kSxm, j.min_gpu_memory_gib = 80; break;
      default: break;
    }
    j.priority = rng() % 5 == 0 ? PriorityClass::kHigh : PriorityClass::kNormal;
    j.submitted_at = i;
    ids.push_back(j.id);
    ASSERT_TRUE((*e)->submit(j).ok());
  }
  run_world(out, "commercial", **e, ids);
}

void philly_world(std::ostream& out, bool& have_philly) {
  const std::filesystem::path csv = GPURENT_SOURCE_DIR "/../shared/data/traces/philly/philly.csv";
  have_philly = std::filesystem::exists(csv);
  if (!have_philly) return;
  auto all = read_philly_file(csv.string());
  ASSERT_TRUE(all.ok());
  std::vector<PhillyJob> jobs(all->begin(), all->begin() + std::min<size_t>(6000, all->size()));
  const ReplayInput in = philly_replay_input(jobs, philly_nodes_for(jobs, 1.25));
  for (const char* policy : {"bestfit", "fgd"}) {
    SchedConfig cfg;
    cfg.score_policy = policy;
    auto r = replay(in, cfg);
    ASSERT_TRUE(r.ok());
    char line[512];
    std::snprintf(line, sizeof line,
                  "philly-%s report jobs %lld finished %lld never %lld preemptions %lld passes %lld decisions %lld "
                  "wait %.17g %.17g %.17g jct %.17g %.17g %.17g util %.17g makespan %.17g\n",
                  policy, static_cast<long long>(r->jobs), static_cast<long long>(r->finished),
                  static_cast<long long>(r->never_started), static_cast<long long>(r->preemptions),
                  static_cast<long long>(r->passes), static_cast<long long>(r->decisions), r->wait_mean_s, r->wait_p50_s,
                  r->wait_p95_s, r->jct_mean_s, r->jct_p50_s, r->jct_p95_s, r->utilization_pct, r->makespan_s);
    out << line;
    out << "philly-" << policy << " alloc";
    for (double a : r->alloc_pct) {
      std::snprintf(line, sizeof line, " %.17g", a);
      out << line;
    }
    out << '\n';
  }
}

std::string gunzip(const char* path) {
  std::string out;
  FILE* f = popen((std::string("gzip -dc ") + path).c_str(), "r");
  if (!f) return out;
  char buf[65536];
  for (size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;) out.append(buf, n);
  pclose(f);
  return out;
}

TEST(PlacementsGolden, EqualTheRecordedPlacements) {
  std::ostringstream out;
  bool have_trace = false;
  trace_worlds(out, have_trace);
  synthetic_world(out);
  commercial_world(out);
  bool have_philly = false;
  philly_world(out, have_philly);
  if (std::getenv("GPURENT_RECORD_PLACEMENTS")) {
    ASSERT_TRUE(have_trace && have_philly) << "record with the traces present";
    std::filesystem::create_directories(std::filesystem::path(kGolden).parent_path());
    FILE* f = popen((std::string("gzip -9n > ") + kGolden).c_str(), "w");
    ASSERT_NE(f, nullptr);
    fwrite(out.str().data(), 1, out.str().size(), f);
    ASSERT_EQ(pclose(f), 0);
    GTEST_SKIP() << "recorded " << kGolden;
  }
  const std::string want = gunzip(kGolden);
  ASSERT_FALSE(want.empty()) << "cannot read " << kGolden;
  std::istringstream a(out.str()), b(want);
  std::string got_line, want_line;
  size_t line = 0, compared = 0;
  // Without the trace the recorded trace lines are skipped, the rest compared.
  while (std::getline(b, want_line)) {
    if (!have_trace && want_line.rfind("trace-", 0) == 0) continue;
    if (!have_philly && want_line.rfind("philly-", 0) == 0) continue;
    ++line;
    ASSERT_TRUE(std::getline(a, got_line)) << "placements end early; recorded line " << line << ": " << want_line;
    ASSERT_EQ(got_line, want_line) << "first difference at line " << line;
    ++compared;
  }
  EXPECT_FALSE(std::getline(a, got_line)) << "more placements than recorded: " << got_line;
  EXPECT_GT(compared, 10000u);
  if (!have_trace || !have_philly)
    std::printf("trace data absent (../shared/data): compared the worlds whose data is present\n");
}

}  // namespace
}  // namespace gpurent

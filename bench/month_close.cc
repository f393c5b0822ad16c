// Benchmark: month close. TENANTS tenants (default 1,000) with ALLOCATIONS runs each (default
// 1,000) in a SQLite store, every run closed inside November 2026 on one of two offers of one
// supplier at list prices (on-demand, and spot at the sheet's price), 1 to 8 GPUs, 10 minutes to
// 3 days. close_month() (server/services/issued_invoices.h) reads each tenant's runs from the
// store, rates them with the billing engine and writes one issued invoice per tenant (numbered,
// hashed) through the control loop, synchronous=FULL as the server runs.
// Baseline in the same run: rate() over the same runs built in memory, tenant by tenant (the
// engine alone): the difference is the store's reading, decoding and the issuing.
// Usage: month_close [TENANTS] [ALLOCATIONS]
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "billing/rating.h"
#include "io/files.h"
#include "model/job_run.h"
#include "model/offer.h"
#include "server/server.h"
#include "server/services/control_loop.h"
#include "server/services/invoices.h"
#include "server/services/issued_invoices.h"
#include "server/services/metrics.h"
#include "store/store.h"

using namespace gpurent;

namespace {

using Wall = std::chrono::steady_clock;
constexpr TimeMs kMinute = 60'000, kHour = 60 * kMinute, kDay = 24 * kHour;

double since(Wall::time_point t0) { return std::chrono::duration<double>(Wall::now() - t0).count(); }

[[noreturn]] void die(const std::string& what, const Error& e) {
  std::fprintf(stderr, "%s: %s\n", what.c_str(), e.message.c_str());
  std::exit(1);
}

Offer make_offer(const std::string& name, bool spot) {
  Offer o;
  o.name = name;
  o.supplier = "cloud";
  o.supplier_id = "sup_0000000000000001";
  o.region = "us-east";
  o.gpu_model = "h100-sxm5-80gb";
  o.currency = Currency::kUSD;
  o.prices.on_demand = Money(2'990'000, Currency::kUSD);
  if (spot) o.prices.spot = Money(1'490'000, Currency::kUSD);
  o.min_increment_seconds = 60;
  o.fees.billing_starts = BillingStart::kRunning;
  return o;
}

struct Run {
  int offer;  // 0 on-demand, 1 spot
  int64_t gpus;
  TimeMs start, end;
};

}  // namespace

int main(int argc, char** argv) {
  const int tenants = argc > 1 ? std::atoi(argv[1]) : 1000;
  const int per = argc > 2 ? std::atoi(argv[2]) : 1000;
  if (tenants < 1 || per < 1) {
    std::fprintf(stderr, "usage: month_close [TENANTS] [ALLOCATIONS]\n");
    return 2;
  }
  auto catalog = load_catalog_file(default_catalog_path());
  if (!catalog) die("catalog", catalog.error());
  char tmpl[] = "/tmp/gpurent-bench-close-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  auto store = open_sqlite_store({dir + "/close.db", true, 5000});
  if (!store) die("open", store.error());

  const TimeMs nov = days_from_civil(2026, 11, 1) * kDay, dec = days_from_civil(2026, 12, 1) * kDay;
  const Offer offers[2] = {make_offer("h100-od", false), make_offer("h100-spot", true)};
  const char* offer_ids[2] = {"off_0000000000000001", "off_0000000000000002"};
  std::mt19937_64 rng(42);
  auto uni = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  std::vector<std::vector<Run>> runs(tenants);
  for (auto& t : runs)
    for (int i = 0; i < per; ++i) {
      const TimeMs start = nov + uni(0, dec - nov - 4 * kDay);
      t.push_back({static_cast<int>(uni(0, 1)), int64_t{1} << uni(0, 3), start, start + uni(10 * kMinute, 3 * kDay)});
    }

  // The world, written in batches of 20,000 records (loading is not measured).
  const auto load0 = Wall::now();
  std::vector<Record> batch;
  auto flush = [&] {
    auto st = (*store)->write([&](StoreTx& tx) -> Status {
      for (const Record& r : batch)
        if (auto s = tx.insert(r); !s) return s;
      return ok_status();
    });
    if (!st) die("load", st.error());
    batch.clear();
  };
  auto rec = [&](const char* kind, const std::string& id, const std::string& name, json body) {
    Record r;
    r.kind = kind;
    r.id = id;
    r.name = name;
    r.created_at = r.updated_at = nov;
    r.version = 1;
    r.body = std::move(body);
    return r;
  };
  Record sup = rec("suppliers", "sup_0000000000000001", "cloud", {{"name", "cloud"}});
  batch.push_back(sup);
  for (int k = 0; k < 2; ++k) {
    Record o = rec("offers", offer_ids[k], offers[k].name, to_json(offers[k]));
    o.supplier_id = sup.id;
    o.region = "us-east";
    o.gpu_model = offers[k].gpu_model;
    batch.push_back(o);
  }
  char id[40];
  for (int t = 0; t < tenants; ++t) {
    std::snprintf(id, sizeof id, "ten_%016x", t + 1);
    const std::string tid = id, tname = "tenant-" + std::to_string(t + 1);
    batch.push_back(rec("tenants", tid, tname, {{"name", tname}, {"display_name", tname}, {"currency", "USD"}}));
    for (int i = 0; i < per; ++i) {
      const Run& x = runs[t][i];
      JobRun run;
      std::snprintf(id, sizeof id, "job_%08x%08x", t, i);
      run.job_id = id;
      run.job = "job-" + std::to_string(i);
      run.project_id = "prj_" + tid.substr(4);
      run.tenant_id = tid;
      run.supplier_id = sup.id;
      run.offer_id = offer_ids[x.offer];
      run.billing_mode = x.offer == 1 ? BillingMode::kSpot : BillingMode::kOnDemand;
      run.gpu_milli = x.gpus * 1000;
      RunCards cards{"nod_0000000000000001", "node-1", {}};
      for (int64_t g = 0; g < x.gpus; ++g) cards.gpus.push_back(g);
      run.placement.push_back(cards);
      run.requested_at = run.running_at = run.ready_at = x.start;
      run.ended_at = x.end;
      run.state = RunState::kClosed;
      std::snprintf(id, sizeof id, "alc_%08x%08x", t, i);
      Record r = rec("allocations", id, "", to_json(run));
      r.tenant_id = tid;
      r.supplier_id = sup.id;
      r.project_id = run.project_id;
      r.state = "closed";
      r.gpu_model = "h100-sxm5-80gb";
      batch.push_back(std::move(r));
      if (batch.size() >= 20'000) flush();
    }
  }
  flush();
  std::printf("loaded %d tenants x %d runs in %.1f s\n", tenants, per, since(load0));

  // Baseline: the engine alone on the same runs, tenant by tenant.
  const auto base0 = Wall::now();
  int64_t base_lines = 0;
  for (int t = 0; t < tenants; ++t) {
    RatingInput in;
    in.from = nov;
    in.to = dec;
    in.contract.currency = Currency::kUSD;
    in.contract.cap_credits = false;
    for (const Offer& o : offers) in.offers[o.name] = o;
    for (int i = 0; i < per; ++i) {
      const Run& x = runs[t][i];
      Allocation a;
      a.id = "a" + std::to_string(i);
      a.job = "job-" + std::to_string(i);
      a.offer = offers[x.offer].name;
      a.mode = x.offer == 1 ? BillingMode::kSpot : BillingMode::kOnDemand;
      a.gpu_milli = x.gpus * 1000;
      a.requested_at = x.start;
      a.running_at = a.ready_at = x.start;
      a.ended_at = x.end;
      in.allocations.push_back(std::move(a));
    }
    auto r = rate(in);
    if (!r) die("rate", r.error());
    base_lines += static_cast<int64_t>(r->lines.size());
  }
  const double base_s = since(base0);

  // The month close itself.
  ControlLoop loop(**store);
  Metrics metrics;
  ServerOptions opts;
  SystemClock clock;
  ServiceContext ctx{**store, *catalog, loop, clock, metrics, opts};
  // What the close spends reading and rating (build_invoice per tenant, nothing written).
  const auto read0 = Wall::now();
  for (int t = 0; t < tenants; ++t) {
    std::snprintf(id, sizeof id, "ten_%016x", t + 1);
    auto inv = build_invoice(**store, *catalog, id, nov, dec, dec + kDay);
    if (!inv) die("build_invoice", inv.error());
  }
  const double read_s = since(read0);
  const auto close0 = Wall::now();
  auto out = close_month(ctx, nov, dec + kDay, "");
  const double close_s = since(close0);
  if (!out) die("close", out.error());
  if (static_cast<int>(out->issued.size()) != tenants || !out->failed.empty()) {
    std::fprintf(stderr, "issued %zu invoices for %d tenants (%zu failed)\n", out->issued.size(), tenants,
                 out->failed.size());
    return 1;
  }
  loop.stop();
  std::filesystem::remove_all(dir);
  std::printf("issued %zu invoices (%.0f allocations/s); of which reading and rating from the store: %.1f s; "
              "baseline rate() in memory: %lld lines, %.0f allocations/s\n",
              out->issued.size(), tenants * double(per) / close_s, read_s, static_cast<long long>(base_lines),
              tenants * double(per) / base_s);
  std::printf("month_close: %.1f s (baseline: %.1f s)\n", close_s, base_s);
  return 0;
}

// Benchmark: a tenant's month-to-date invoice when the tenant has a long history of finished runs.
// On a database the demo left (`gpurent serve --demo --demo-days 7` writes one), the tenant with
// the most finished runs gets HISTORY more, older ones: copies of its runs, each of a job of its
// own, moved 40 to 400 days back (record times too). Measured: build_invoice of the month to date,
// which reads only the runs that can count in it (open ones, those written since a day before the
// month, and the run before each that began in it). Baseline in the same run: the same invoice from
// every run the tenant ever had (build_invoice_from_every_run: how every invoice, firewall pass
// and dashboard read runs before 2026-12-07). Both must give the same invoice, or the benchmark
// fails. It WRITES the copies into DB: run it on a copy of a stopped server's database.
// Usage: invoice_history DB [HISTORY] [ROUNDS] [AT]  (HISTORY default 100000; ROUNDS 3; AT an
// RFC 3339 instant, default now)
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "billing/rating_input.h"
#include "demo_db.h"
#include "model/job_run.h"
#include "server/services/invoices.h"

using namespace gpurent;
using namespace gpurent::bench;

namespace {

void shift(std::optional<TimeMs>& t, TimeMs by) {
  if (t) *t -= by;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 5) {
    std::fprintf(stderr, "usage: invoice_history DB [HISTORY] [ROUNDS] [AT]\n");
    return 2;
  }
  const long history = argc > 2 ? std::atol(argv[2]) : 100'000;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 3;
  if (history < 0 || rounds < 1) return std::fprintf(stderr, "HISTORY must be 0 or more, ROUNDS at least 1\n"), 2;
  const TimeMs now = at_or_now(argc > 4 ? argv[4] : nullptr);
  const DemoDb db = open_demo_db(argv[1]);
  const Record* tenant = nullptr;
  std::vector<Record> closed;
  for (const Record& t : db.tenants) {
    auto c = list_all(*db.store, "allocations", {{"tenant_id", t.id}, {"state", "closed"}});
    if (!c) die("allocations", c.error());
    if (c->size() > closed.size()) tenant = &t, closed = std::move(*c);
  }
  if (!tenant) return std::fprintf(stderr, "no tenant has a finished run: run the demo first\n"), 1;

  // The history, in transactions of 5,000.
  const auto w0 = Wall::now();
  for (long k = 0; k < history;) {
    auto st = db.store->write([&](StoreTx& tx) -> Status {
      for (long end = std::min(history, k + 5000); k < end; ++k) {
        Record r = closed[static_cast<size_t>(k) % closed.size()];
        auto run = decode_run(r.body);
        if (!run) return run.error();
        const TimeMs back = (40 + k % 360) * kMsPerDay;
        shift(run->requested_at, back);
        shift(run->admitted_at, back);
        shift(run->running_at, back);
        shift(run->ready_at, back);
        shift(run->ended_at, back);
        run->job_id = "job_history" + std::to_string(k);
        run->previous_run = "";
        r.id = "alc_history" + std::to_string(k);
        r.created_at -= back;
        r.updated_at -= back;
        r.body = to_json(*run);
        if (auto s = tx.insert(r); !s) return s;
      }
      return ok_status();
    });
    if (!st) die("writing the history", st.error());
  }
  const double wrote = since(w0);

  const TimeMs month = month_start(now), next = add_months(month, 1);
  double recent = 0, every = 0;
  size_t lines = 0;
  for (int r = 0; r < rounds; ++r) {
    std::string a, b;
    auto read_recent = [&] {
      const auto t0 = Wall::now();
      auto inv = build_invoice(*db.store, db.catalog, tenant->id, month, next, now, true);
      if (!inv) die("build_invoice", inv.error());
      recent += since(t0);
      a = to_json(*inv).dump();
      for (const auto& s : inv->sections) lines += s.rated.lines.size();
    };
    auto read_every = [&] {
      const auto t0 = Wall::now();
      auto inv = build_invoice_from_every_run(*db.store, db.catalog, tenant->id, month, next, now, true);
      if (!inv) die("build_invoice_from_every_run", inv.error());
      every += since(t0);
      b = to_json(*inv).dump();
    };
    if (r % 2 == 0)
      read_recent(), read_every();  // each goes first in every other round
    else
      read_every(), read_recent();
    if (a != b) return std::fprintf(stderr, "the two reads rated the month differently\n"), 1;
  }
  std::printf(
      "tenant %s: %zu finished runs plus %ld older ones written (%.1f s); month to date at %s, %zu lines "
      "rated per round; the same invoice both ways\n",
      tenant->name.c_str(), closed.size(), history, wrote, format_rfc3339(now).c_str(),
      lines / static_cast<size_t>(rounds));
  std::printf("invoice_history: %.1f ms per invoice (baseline: %.1f ms per invoice)\n", 1000 * recent / rounds,
              1000 * every / rounds);
  return 0;
}

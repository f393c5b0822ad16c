// Benchmark: what one cost-firewall pass reads and rates for a watched tenant (prepaid, or
// postpaid with a credit limit), on a database the demo left (`gpurent serve --demo --demo-days 7`
// writes one). The pass rates the tenant's month to date with lines per day (the daily rules), and
// the balance rates it again to date and an hour ahead (the burn). Measured: the three from one
// read of the month (MonthInvoiceSource, what the pass does). Baseline in the same run: the three
// built apart (build_invoice each, what the pass did before 2026-12-06). Both must give the same
// invoices, or the benchmark fails. It writes nothing of its own, but opening the store applies
// pending migrations: run it on a copy of a stopped server's database.
// Usage: firewall_reads DB [ROUNDS] [AT]  (ROUNDS default 3; AT an RFC 3339 instant, default now)
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "billing/rating_input.h"
#include "demo_db.h"
#include "server/services/invoices.h"

using namespace gpurent;
using namespace gpurent::bench;

namespace {

struct Ask {
  TimeMs from, to, now;
  bool per_day;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 4) {
    std::fprintf(stderr, "usage: firewall_reads DB [ROUNDS] [AT]\n");
    return 2;
  }
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 3;
  if (rounds < 1) return std::fprintf(stderr, "ROUNDS must be at least 1\n"), 2;
  const TimeMs now = at_or_now(argc > 3 ? argv[3] : nullptr);
  const DemoDb db = open_demo_db(argv[1]);

  const TimeMs month = month_start(now), later = now + kMsPerHour;
  const std::vector<Ask> asks = {{month, add_months(month, 1), now, true},   // the firewall's daily rules
                                 {month, add_months(month, 1), now, false},  // the balance's draft
                                 {month, later, later, false}};              // its burn, an hour ahead
  double apart = 0, shared = 0;
  size_t lines = 0;
  for (int r = 0; r < rounds; ++r)
    for (const Record& t : db.tenants) {
      std::vector<std::string> alone, together;
      auto build_apart = [&] {
        const auto t0 = Wall::now();
        for (const Ask& a : asks) {
          auto inv = build_invoice(*db.store, db.catalog, t.id, a.from, a.to, a.now, a.per_day);
          if (!inv) die("build_invoice " + t.name, inv.error());
          alone.push_back(to_json(*inv).dump());
          for (const auto& s : inv->sections) lines += s.rated.lines.size();
        }
        apart += since(t0);
      };
      auto build_shared = [&] {
        const auto t0 = Wall::now();
        MonthInvoiceSource source(*db.store, db.catalog, t.id, later);
        for (const Ask& a : asks) {
          auto inv = source.invoice(a.from, a.to, a.now, a.per_day);
          if (!inv) die("MonthInvoiceSource " + t.name, inv.error());
          together.push_back(to_json(*inv).dump());
        }
        shared += since(t0);
      };
      if (r % 2 == 0)
        build_apart(), build_shared();  // each goes first in every other round
      else
        build_shared(), build_apart();
      for (size_t i = 0; i < asks.size(); ++i)
        if (together[i] != alone[i]) {
          std::fprintf(stderr, "%s: the shared read rated ask %zu differently from build_invoice\n", t.name.c_str(), i);
          return 1;
        }
    }
  const double n = static_cast<double>(rounds) * static_cast<double>(db.tenants.size());
  std::printf("%zu tenants x %d rounds at %s, %zu lines rated per round; the same invoices both ways\n",
              db.tenants.size(), rounds, format_rfc3339(now).c_str(), lines / static_cast<size_t>(rounds));
  std::printf("firewall_reads: %.1f ms per tenant (baseline: %.1f ms per tenant)\n", 1000 * shared / n,
              1000 * apart / n);
  return 0;
}

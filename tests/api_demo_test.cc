// `gpurent serve --demo`: the demo world is seeded through the API's own validated path into an
// empty database — suppliers, nodes with their topology, offers with explicit fees, tenants,
// projects, users and jobs — and a restart does not seed it again.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "core/clock.h"
#include "server_fixture.h"

namespace gpurent::testing {
namespace {

namespace fs = std::filesystem;

const char* const kKinds[] = {"suppliers", "nodes", "offers", "tenants", "projects", "users", "reservations", "volumes", "instances", "contracts", "measurements", "acceptance-runs", "poc-runs", "jobs", "images", "spot-prices", "issued-invoices", "credit-notes", "top-ups", "market-orders", "market-trades"};

// ../shared/data when this checkout has it (the price lists the demo reads), else "".
std::string shared_data_dir() {
  fs::path p = fs::path(GPURENT_SOURCE_DIR) / ".." / "shared" / "data";
  return fs::exists(p / "prices") ? fs::weakly_canonical(p).string() : "";
}

std::vector<json> list_all(const ServerProcess& s, const std::string& kind, const std::string& token) {
  Resp r = expect_2xx(s.req("GET", "/api/v1/" + kind + "?limit=1000", token), "list " + kind);
  EXPECT_TRUE(r.body.at("next_after").is_null()) << kind << ": more than 1000 demo objects";
  return r.body.at("items").get<std::vector<json>>();
}

std::map<std::string, std::vector<std::string>> ids_by_kind(const ServerProcess& s) {
  std::map<std::string, std::vector<std::string>> out;
  for (const char* k : kKinds) out[k] = list_ids(s, std::string("/api/v1/") + k, s.admin_token());
  return out;
}

// The demo world's shape: what the dashboard and the README's walk-through rely on.
void expect_demo_world(const ServerProcess& s) {
  const std::string op = s.admin_token();
  EXPECT_GE(list_all(s, "suppliers", op).size(), 2u);

  auto nodes = list_all(s, "nodes", op);
  ASSERT_FALSE(nodes.empty());
  size_t gpus = 0, with_nvlink = 0;
  for (const auto& n : nodes) {
    SCOPED_TRACE(n.value("name", "?"));
    ASSERT_TRUE(n.contains("gpus") && n["gpus"].is_array() && !n["gpus"].empty()) << n.dump();
    const int64_t numa_nodes = n.value("numa_nodes", 0);
    for (const auto& g : n["gpus"]) {
      ++gpus;
      ASSERT_TRUE(g.contains("numa_node") && g["numa_node"].is_number_integer()) << g.dump();
      EXPECT_GE(g["numa_node"].get<int64_t>(), 0);
      EXPECT_LT(g["numa_node"].get<int64_t>(), numa_nodes);
      if (g.contains("nvlink_domain")) ++with_nvlink;
    }
    EXPECT_EQ(s.admin("GET", "/api/v1/gpu-models/" + n.value("gpu_model", "?")).status, 200);
  }
  EXPECT_GE(gpus, 64u) << "the demo should rent out a realistic fleet";
  EXPECT_GT(with_nvlink, 0u) << "no demo GPU has an NVLink domain";

  auto offers = list_all(s, "offers", op);
  ASSERT_FALSE(offers.empty());
  for (const auto& o : offers) {
    SCOPED_TRACE(o.value("name", "?"));
    ASSERT_TRUE(o.contains("prices")) << o.dump();
    EXPECT_TRUE(o["prices"].value("on_demand", json()).is_string()) << "money must be a decimal string: " << o.dump();
    ASSERT_TRUE(o.contains("fees") && o["fees"].is_object()) << o.dump();
    EXPECT_TRUE(o["fees"].contains("billing_starts")) << o.dump();
  }
  EXPECT_GE(list_all(s, "tenants", op).size(), 2u);
  EXPECT_FALSE(list_all(s, "projects", op).empty());
  EXPECT_FALSE(list_all(s, "jobs", op).empty());
  EXPECT_GE(list_all(s, "users", op).size(), 3u);
}

// The per-user tokens the demo writes next to the database each act within their own scope.
void expect_demo_tokens_scoped(const ServerProcess& s) {
  std::ifstream in(s.db_path() + ".demo-tokens.json");
  ASSERT_TRUE(in) << "no demo tokens file";
  json tokens = json::parse(in);
  ASSERT_TRUE(tokens.is_array() && !tokens.empty()) << tokens.dump();
  bool saw_tenant = false, saw_supplier = false;
  for (const auto& t : tokens) {
    const std::string role = t.value("role", ""), secret = t.value("token", "");
    SCOPED_TRACE(t.value("user", "?") + " (" + role + ")");
    Resp me = s.req("GET", "/api/v1/users", secret);
    ASSERT_EQ(me.status, 200) << me.describe();
    if (role == "tenant_admin" || role == "tenant_member" || role == "viewer") {
      saw_tenant = true;
      std::set<std::string> tenants;
      for (const auto& j : list_all(s, "jobs", secret)) tenants.insert(j.value("tenant_id", ""));
      EXPECT_LE(tenants.size(), 1u) << "a tenant user sees another tenant's jobs";
      EXPECT_EQ(list_all(s, "tenants", secret).size(), 1u);
      EXPECT_EQ(s.req("POST", "/api/v1/nodes", secret, json::object()).status, 403);
    } else if (role == "supplier") {
      saw_supplier = true;
      EXPECT_EQ(s.req("GET", "/api/v1/tenants", secret).status, 403);
      EXPECT_EQ(s.req("POST", "/api/v1/suppliers", secret, json::object()).status, 403);
    }
  }
  EXPECT_TRUE(saw_tenant) << tokens.dump();
  EXPECT_TRUE(saw_supplier) << tokens.dump();
}

TEST(Demo, SeedsTheWorldOnceFromTheSharedPriceLists) {
  std::vector<std::string> args = {"--demo"};
  const std::string data = shared_data_dir();
  if (!data.empty()) args.insert(args.end(), {"--data-dir", data});
  ServerProcess s(args);
  const json demo = s.listening_event().value("demo", json());
  ASSERT_TRUE(demo.is_object()) << s.listening_event().dump();
  EXPECT_TRUE(demo.value("seeded", false)) << demo.dump();
  const std::string source = demo.value("price_source", "");
  if (data.empty())
    EXPECT_EQ(source.rfind("built-in", 0), 0u) << source;
  else
    EXPECT_EQ(source.rfind(data + "/prices", 0), 0u) << "the shared price lists were not used: " << source;
  expect_demo_world(s);
  expect_demo_tokens_scoped(s);

  auto before = ids_by_kind(s);
  const json counts = demo.value("counts", json::object());
  ASSERT_FALSE(counts.empty()) << demo.dump();
  for (const auto& [kind, n] : counts.items())
    EXPECT_EQ(before[kind].size() - (kind == "users" ? 1 : 0), n.get<size_t>()) << kind;
  s.restart();
  EXPECT_EQ(s.last_exit_status(), 0);
  EXPECT_FALSE(s.listening_event().value("demo", json::object()).value("seeded", true))
      << s.listening_event().dump();
  EXPECT_EQ(ids_by_kind(s), before) << "the demo was seeded twice";
}

// --demo-days replays the past through the live services: jobs were submitted and ran, the meter
// wrote every minute of every closed run (reconciliation finds no gap), and training jobs reported
// their metric.
TEST(Demo, ReplaysItsPastDaysThroughTheLiveServices) {
  ServerProcess s({"--demo", "--demo-days", "2"});
  const json week = s.listening_event().value("demo", json::object()).value("week", json());
  ASSERT_TRUE(week.is_object()) << s.listening_event().dump();
  EXPECT_GE(week.value("steps", 0), 576) << week.dump();  // 48 h in 5-minute steps, then the present
  EXPECT_GE(week.value("jobs_submitted", 0), 6) << week.dump();
  EXPECT_GE(week.value("firewall_passes", 0), 8) << week.dump();
  EXPECT_EQ(week.value("outages", 0), 1) << week.dump();  // runpod-ustx3-h200-01, 30 h ago
  const std::string from = week.value("from", "");

  // code-assist's six-hour egress burst (yesterday 04:00-10:00 UTC) raised the egress alert for
  // that day, though the service has run (and sent a little) since the replay's first day: each
  // day's egress counts on its own day.
  const TimeMs start = *parse_rfc3339(from, "from");
  const std::string yesterday = format_rfc3339(start - start % 86'400'000 + 86'400'000).substr(0, 10);
  Resp alerts = s.admin("GET", "/api/v1/alerts?tenant=qingyun-tech");
  ASSERT_EQ(alerts.status, 200) << alerts.describe();
  std::vector<std::string> egress;
  for (const json& a : alerts.body["items"])
    if (a.value("kind", "") == "egress_daily_cost") egress.push_back(a.value("key", ""));
  EXPECT_EQ(egress, std::vector<std::string>{"egress_daily_cost:copilot:" + yesterday}) << alerts.body.dump();

  // Every whole day of the costs dashboard equals that day's invoice to the cent, over a replay with
  // outages, requeues, idle cards, commitments and volume fees (the dashboard loads a month once
  // and narrows it per day; GET /invoices loads the day).
  Resp costs = s.admin("GET", "/api/v1/dashboard/costs");
  ASSERT_EQ(costs.status, 200) << costs.describe();
  int days_checked = 0;
  for (const json& t : costs.body["tenants"]) {
    const std::string cur = t["currency"];
    for (size_t i = 0; i < costs.body["days"].size(); ++i) {
      const std::string day = costs.body["days"][i];
      const TimeMs d = *parse_rfc3339(day, "day");
      Resp inv = s.admin("GET", "/api/v1/invoices?tenant=" + t["tenant"].get<std::string>() + "&from=" + day +
                                    "&to=" + format_rfc3339(d + 86'400'000).substr(0, 10));
      ASSERT_EQ(inv.status, 200) << inv.describe();
      const std::string want = inv.body["totals"].contains(cur) ? inv.body["totals"][cur]["total"].get<std::string>() : "0.00";
      if (d + 86'400'000 <= SystemClock().now()) {
        EXPECT_EQ(t["daily_total"][i], want) << t["tenant"] << " " << day;
        ++days_checked;
      } else {  // today runs on: the invoice, read later, has billed a little more time
        auto cents = [](const std::string& x) { return std::llround(std::stod(x) * 100); };
        EXPECT_LE(cents(t["daily_total"][i]), cents(want)) << t["tenant"] << " " << day;
      }
    }
  }
  EXPECT_GE(days_checked, 12);  // two tenants × the 6 whole days of the 7

  Resp jobs = s.admin("GET", "/api/v1/jobs?limit=1000");
  ASSERT_EQ(jobs.status, 200) << jobs.describe();
  int succeeded = 0, from_week = 0;
  std::string vit;
  for (const json& j : jobs.body["items"]) {
    const std::string name = j.value("name", "");
    if (j["status"].value("state", "") == "succeeded") ++succeeded;
    if ((name.rfind("eval-", 0) == 0 && name != "eval-nightly") || name.rfind("detr-sweep-", 0) == 0 || name.rfind("nb-sam-", 0) == 0 ||
        name.rfind("llama-cpt-", 0) == 0)
      ++from_week;
    if (name == "vit-h-pretrain") vit = j.value("id", "");
  }
  EXPECT_GE(succeeded, 3) << "the world's short jobs (2-12 h) should have finished in the replayed day";
  EXPECT_EQ(from_week, week.value("jobs_submitted", 0));

  // Every run that ended inside the replay was metered minute by minute.
  int closed = 0;
  for (const char* tenant : {"aurora-ai", "qingyun-tech"}) {
    Resp rec = s.admin("GET", std::string("/api/v1/reports/reconciliation?tenant=") + tenant + "&from=" + from +
                                  "&to=" + format_rfc3339(SystemClock().now() - 60'000));
    ASSERT_EQ(rec.status, 200) << rec.describe();
    for (const json& row : rec.body["rows"]) {
      const bool ended = row.value("to", "") < format_rfc3339(SystemClock().now() - 5 * 60'000);
      if (!ended) continue;
      ++closed;
      EXPECT_FALSE(row.value("flagged", true)) << row.dump();
    }
  }
  EXPECT_GT(closed, 0);

  // vit-h-pretrain reported val_top1 every 30 minutes, rising.
  ASSERT_FALSE(vit.empty());
  Resp metrics = s.admin("GET", "/api/v1/jobs/" + vit + "/metrics");
  ASSERT_EQ(metrics.status, 200) << metrics.describe();
  ASSERT_EQ(metrics.body["metrics"].size(), 1u) << metrics.describe();
  const json& series = metrics.body["metrics"][0];
  EXPECT_EQ(series.value("name", ""), "val_top1");
  ASSERT_GE(series["points"].size(), 40u);
  EXPECT_GT(series["points"].back()["value"].get<double>(), series["points"].front()["value"].get<double>() + 0.2);

  // The market end to end (docs/market.md#settlement): Aurora's forward order, placed at the
  // replay's start for the next UTC day, filled at 2.10 and settled into a reservation and a
  // commitment; during the replayed day Aurora's jobs ran under the market contract, and the
  // invoice bills the window at the trade price and covers their time. (That a job lands on the
  // reserved node itself is MarketSettlement's test: here the replay's placements vary by hour.)
  // The same orders in tomorrow's book made the other trade, and that book is open: its resting
  // orders are open, while the replayed book's have expired.
  const json trades = s.admin("GET", "/api/v1/market-trades").body.at("items");
  ASSERT_EQ(trades.size(), 2u) << trades.dump();
  auto ends = [](const json& t) { return *parse_rfc3339(t["ends_at"].get<std::string>(), "ends_at"); };
  const bool first_replayed = ends(trades[0]) <= SystemClock().now();
  const json& trade = trades[first_replayed ? 0 : 1];
  const json& live = trades[first_replayed ? 1 : 0];
  EXPECT_EQ(trade["state"], "settled") << trade.dump();
  EXPECT_EQ(live["state"], "settled") << live.dump();
  const TimeMs w0 = *parse_rfc3339(trade["starts_at"].get<std::string>(), "starts_at");
  const TimeMs w1 = ends(trade);
  EXPECT_LT(*parse_rfc3339(trade["at"].get<std::string>(), "at"), w0) << "a forward order: filled before its window";
  ASSERT_LE(w1, SystemClock().now()) << "the window was replayed";
  EXPECT_GT(ends(live), SystemClock().now() + 3'600'000) << "tomorrow's book: " << live.dump();
  EXPECT_EQ(live["settlement"]["contract_id"], trade["settlement"]["contract_id"]) << "one market contract";
  json expired;
  for (int i = 0; i < 300 && expired.size() < 3; ++i) {
    if (i > 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    expired = s.admin("GET", "/api/v1/market-orders?state=expired").body.at("items");
  }
  ASSERT_EQ(expired.size(), 3u) << "the replayed book's resting orders (8 at 2.10, 16 at 2.40, the bid at 1.90): "
                                << expired.dump();
  for (const json& o : expired) {
    EXPECT_EQ(o["starts_at"], trade["starts_at"]) << o.dump();
    EXPECT_EQ(o["reason"], "its delivery window is over") << o.dump();
  }
  const json open = s.admin("GET", "/api/v1/market-orders?state=open").body.at("items");
  ASSERT_EQ(open.size(), 3u) << open.dump();
  for (const json& o : open) EXPECT_EQ(o["starts_at"], live["starts_at"]) << o.dump();
  const json& st = trade["settlement"];
  Resp inv = s.admin("GET", "/api/v1/invoices?tenant=aurora-ai&from=" + format_rfc3339(w0) + "&to=" + format_rfc3339(w1));
  ASSERT_EQ(inv.status, 200) << inv.describe();
  json market_section;
  for (const json& sec : inv.body["sections"])
    if (sec.value("contract_id", "") == st["contract_id"]) market_section = sec;
  ASSERT_FALSE(market_section.is_null()) << inv.body.dump();
  int commitment_lines = 0, covered = 0;
  for (const json& l : market_section["lines"]) {
    if (l["rule"] == "market_commitment") {
      ++commitment_lines;
      EXPECT_EQ(l["unit_price"], "2.10");
      EXPECT_EQ(l["amount"], "403.20") << "8 GPUs × 24 h × 2.10";
    }
    if (l["rule"] == "reserved_covered" && !l.value("job", "").empty()) ++covered;
  }
  EXPECT_EQ(commitment_lines, 1) << market_section.dump();
  EXPECT_GE(covered, 1) << "Aurora's runs on the offer in the window are covered: " << market_section.dump();
  int during = 0;  // Aurora's runs billed under the market contract while the window lasted
  const json runs = s.admin("GET", "/api/v1/allocations?tenant=aurora-ai&limit=1000").body;
  for (const json& a : runs.at("items")) {
    const TimeMs ran = *parse_rfc3339(a.value("running_at", format_rfc3339(0)), "running_at");
    const json end = a.value("ended_at", json());
    const TimeMs ended = end.is_string() ? *parse_rfc3339(end.get<std::string>(), "ended_at") : SystemClock().now();
    if (a.value("contract_id", "") == st["contract_id"] && ran < w1 && ended > w0) ++during;
  }
  EXPECT_GE(during, 1) << "Aurora's jobs ran under the market contract in its window: " << trade.dump() << "\n"
                        << runs.dump().substr(0, 6000);

  // The cost firewall and the balance rate a tenant's month from one read of the store
  // (MonthInvoiceSource); on the replayed store every period they ask for is the invoice built on
  // its own, to the line.
  const TimeMs stopped = SystemClock().now();
  s.stop();
  expect_month_reads_equal_invoices(
      s.db_path(), {stopped, stopped - 90 * 60'000, start + 3 * 3'600'000, stopped - stopped % 86'400'000 + 1});
}

TEST(Demo, FallsBackToBuiltInPrices) {
  fs::path empty = fs::temp_directory_path() / ("gpurent-no-data-" + std::to_string(::getpid()));
  fs::create_directories(empty);
  {
    ServerProcess s({"--demo", "--data-dir", empty.string()});
    const std::string source = s.listening_event().value("demo", json::object()).value("price_source", "");
    EXPECT_EQ(source.rfind("built-in", 0), 0u) << s.listening_event().dump();
    expect_demo_world(s);
  }
  fs::remove_all(empty);
}

TEST(Demo, ADataDirThatIsNoFolderStopsTheServerNamingIt) {
  fs::path typo = fs::temp_directory_path() / ("gpurent-no-such-data-" + std::to_string(::getpid()));
  try {  // with or without --demo: the flag names a folder the server would read
    ServerProcess s({"--data-dir", typo.string()});
    ADD_FAILURE() << "started on built-in prices without a word: " << s.listening_event().dump();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("--data-dir"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpurent::testing

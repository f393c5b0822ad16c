// Issued invoices through the real server: an operator closes an ended month (a contract's reserved
// commitment bills it whether used or not); the invoice is numbered per tenant and currency,
// equals the month's draft, carries a content hash that verifies, and never changes when the
// offer's prices change afterwards; tenants read only their own; credit notes correct it within
// its total; pay and void move only its state; the printable invoice reads in both languages.
#include <gtest/gtest.h>

#include <chrono>
#include <ctime>
#include <map>

#include "server_fixture.h"

namespace gpurent::testing {
namespace {

// "YYYY-MM" of the month `back` months before the current one (UTC).
std::string month_ago(int back) {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  int y = tm.tm_year + 1900, m = tm.tm_mon + 1 - back;
  while (m < 1) m += 12, --y;
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04d-%02d", y, m);
  return buf;
}

// Supplier dc (node n1, offer h100, CNY) and tenants acme and beta. The offer's id.
std::string priced_world(ServerProcess& s) {
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", "n1")), "node");
  const std::string offer_id =
      expect_2xx(s.admin("POST", "/api/v1/offers", offer_doc("dc", "h100")), "offer").body.at("id");
  acme_and_beta(s);
  return offer_id;
}

// Supplier dc (node n1, offer h100), tenants acme and beta, and acme's contract with dc from two
// months ago whose one-GPU commitment, from last month, bills every month whether used or not.
// The offer's id.
std::string committed_world(ServerProcess& s) {
  const std::string offer_id = priced_world(s);
  expect_2xx(s.admin("POST", "/api/v1/contracts",
                     json{{"name", "acme-dc"},
                          {"tenant", "acme"},
                          {"supplier", "dc"},
                          {"offers", {"h100"}},
                          {"currency", "CNY"},
                          {"starts_at", month_ago(2) + "-01T00:00:00Z"},
                          {"commitments",
                           {{{"name", "one"},
                             {"offer", "h100"},
                             {"gpus", 1},
                             {"term_months", 12},
                             {"starts_at", month_ago(1) + "-01T00:00:00Z"}}}}}),
             "contract");
  return offer_id;
}

TEST(IssuedInvoices, AClosedMonthIsFrozenNumberedHashedAndCorrectedOnlyByCreditNotes) {
  ServerProcess s({"--firewall-interval-s", "0"});
  const std::string offer_id = committed_world(s);
  const json offer = offer_doc("dc", "h100");
  const std::string last = month_ago(1);
  const std::string acme_viewer = make_user_token(s, "acme-fin", "viewer", "acme");
  const std::string beta_admin = make_user_token(s, "beta-admin", "tenant_admin", "beta");

  EXPECT_EQ(s.admin("POST", "/api/v1/invoices/close", json{{"month", month_ago(0)}}).error_fields(),
            std::vector<std::string>{"month"}) << "a month still running cannot be closed";
  EXPECT_EQ(s.admin("POST", "/api/v1/invoices/close", json{{"month", "2026-13x"}}).error_fields(),
            std::vector<std::string>{"month"});
  EXPECT_EQ(s.req("POST", "/api/v1/invoices/close", acme_viewer, json{{"month", last}}).status, 403);
  // Usage of the month's last minute is taken while the month is open, and refused, naming the
  // field, once it is closed: no invoice would ever bill it.
  std::tm first{};
  strptime((month_ago(0) + "-01").c_str(), "%Y-%m-%d", &first);
  char at[32];
  const std::time_t late = timegm(&first) - 60;
  std::strftime(at, sizeof at, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&late));
  auto usage = [&](const std::string& key) {
    return json{{"idempotency_key", key},
                {"gpu_samples", {{{"at", at}, {"node", "n1"}, {"gpu", 0}, {"utilization_pct", 50}}}}};
  };
  EXPECT_EQ(s.admin("POST", "/api/v1/usage", usage("late-1")).status, 201);
  const json draft = s.admin("GET", "/api/v1/invoices?tenant=acme&month=" + last).body;
  const json closed = expect_2xx(s.admin("POST", "/api/v1/invoices/close", json{{"month", last}}), "close").body;
  const Resp refused = s.admin("POST", "/api/v1/usage", usage("late-2"));
  EXPECT_EQ(refused.status, 422) << refused.describe();
  EXPECT_EQ(refused.error_fields(), std::vector<std::string>{"gpu_samples[0].at"}) << refused.describe();
  EXPECT_NE(refused.reason_for("gpu_samples[0].at").find("closed for invoicing"), std::string::npos)
      << refused.describe();
  ASSERT_EQ(closed["issued"].size(), 1u) << closed.dump() << "\nbeta has no charges: no invoice";
  EXPECT_EQ(closed["already_closed"], false);
  const json again = expect_2xx(s.admin("POST", "/api/v1/invoices/close", json{{"month", last}}), "close").body;
  EXPECT_EQ(again["already_closed"], true);
  EXPECT_TRUE(again["issued"].empty());
  // A close marks its month `closing` before it rates the first tenant, and closed once all are
  // issued. One stopped between (a crash) leaves the mark: usage stays refused, and the next close
  // finishes the month without issuing anything twice.
  edit_database(s, "UPDATE objects SET state = 'closing' WHERE kind = 'month-closes'", 1);
  EXPECT_EQ(s.admin("POST", "/api/v1/usage", usage("late-3")).status, 422);
  const json resumed = expect_2xx(s.admin("POST", "/api/v1/invoices/close", json{{"month", last}}), "close").body;
  EXPECT_EQ(resumed["already_closed"], false) << resumed.dump();
  EXPECT_TRUE(resumed["issued"].empty()) << resumed.dump();
  EXPECT_EQ(s.admin("POST", "/api/v1/invoices/close", json{{"month", last}}).body["already_closed"], true);

  const std::string id = closed["issued"][0];
  const std::string path = "/api/v1/issued-invoices/" + id;
  const json inv = s.admin("GET", path).body;
  EXPECT_EQ(inv["number"], "acme-CNY-000001");
  EXPECT_EQ(inv["state"], "issued");
  EXPECT_EQ(inv["month"], last);
  EXPECT_EQ(inv["totals"], draft["totals"]["CNY"]) << "the issued invoice is the month's draft, frozen";
  ASSERT_EQ(inv["sections"].size(), 1u);
  EXPECT_EQ(inv["sections"][0]["lines"], draft["sections"][0]["lines"]);
  EXPECT_EQ(inv["sections"][0]["lines"][0]["rule"], "reserved_commitment");
  EXPECT_EQ(s.admin("GET", path + "/verify").body["verified"], true);
  EXPECT_EQ(s.admin("GET", "/api/v1/issued-invoices/acme-CNY-000001").body["id"], id) << "found by number";

  // Tenants read their own invoices only; nobody changes one through CRUD.
  EXPECT_EQ(s.req("GET", path, acme_viewer).status, 200);
  EXPECT_EQ(s.req("GET", path, beta_admin).status, 404);
  EXPECT_EQ(s.req("GET", "/api/v1/issued-invoices", beta_admin).body["items"].size(), 0u);
  EXPECT_EQ(s.admin("PUT", path, inv).status, 405);
  EXPECT_EQ(s.admin("DELETE", path).status, 405);
  EXPECT_EQ(s.admin("POST", "/api/v1/issued-invoices", inv).status, 405);

  // A supplier who reprices the offer afterwards changes nothing issued.
  json dearer = offer;
  dearer["prices"]["on_demand"] = "40.00";
  dearer["prices"]["reserved_12m"] = "30.00";
  expect_2xx(s.admin("PUT", "/api/v1/offers/" + offer_id, dearer), "price change");
  const json after = s.admin("GET", path).body;
  EXPECT_EQ(after["sections"], inv["sections"]);
  EXPECT_EQ(after["hash"], inv["hash"]);
  EXPECT_EQ(s.admin("GET", path + "/verify").body["verified"], true);
  EXPECT_EQ(s.admin("GET", "/api/v1/invoices?tenant=acme&month=" + last).body["totals"], draft["totals"])
      << "nor the month's draft: the commitment keeps the price it was made at";

  // Credit notes: operators only, whole cents, never beyond the invoice's total.
  auto credit = [&](const std::string& amount, const std::string& token = "", const std::string& reference = "") {
    json b{{"invoice", inv["number"]}, {"amount", amount}, {"reason", "maintenance window"}};
    if (!reference.empty()) b["reference"] = reference;
    return token.empty() ? s.admin("POST", "/api/v1/credit-notes", b) : s.req("POST", "/api/v1/credit-notes", token, b);
  };
  EXPECT_EQ(credit("10.00", acme_viewer).status, 403);
  EXPECT_EQ(credit("0.001").error_fields(), std::vector<std::string>{"amount"});
  EXPECT_EQ(credit("0").error_fields(), std::vector<std::string>{"amount"});
  EXPECT_EQ(credit("99999999.00").error_fields(), std::vector<std::string>{"amount"});
  const json note = expect_2xx(credit("10.00", "", "ticket-7"), "credit note").body;
  EXPECT_EQ(note["number"], "acme-CNY-CN-000001");
  EXPECT_EQ(note["reference"], "ticket-7");
  // Retried after a lost answer, with its reference: refused, credited once.
  Resp retried = credit("10.00", "", "ticket-7");
  EXPECT_EQ(retried.status, 409) << retried.describe();
  EXPECT_EQ(retried.error_fields(), std::vector<std::string>{"reference"}) << retried.describe();
  EXPECT_NE(retried.body.value("detail", "").find("acme-CNY-CN-000001"), std::string::npos) << retried.describe();
  EXPECT_EQ(note["invoice_id"], id);
  EXPECT_EQ(note["amount"], "10.00");
  EXPECT_EQ(s.admin("GET", "/api/v1/credit-notes?invoice=" + id).body["items"].size(), 1u);
  EXPECT_EQ(s.req("GET", "/api/v1/credit-notes", acme_viewer).body["items"].size(), 1u);
  EXPECT_EQ(s.req("GET", "/api/v1/credit-notes", beta_admin).body["items"].size(), 0u);
  EXPECT_EQ(s.admin("DELETE", "/api/v1/credit-notes/" + note["id"].get<std::string>()).status, 405);

  // Void only what was neither paid nor credited; pay moves the state, never the content.
  EXPECT_EQ(s.admin("POST", path + "/void", json{{"reason", "wrong"}}).status, 409);
  EXPECT_EQ(s.req("POST", path + "/pay", acme_viewer, json::object()).status, 403);
  const json paid = expect_2xx(s.admin("POST", path + "/pay", json{{"reference", "wire 42"}}), "pay").body;
  EXPECT_EQ(paid["state"], "paid");
  EXPECT_EQ(paid["payment_reference"], "wire 42");
  EXPECT_EQ(paid["hash"], inv["hash"]);
  EXPECT_EQ(s.admin("GET", path + "/verify").body["verified"], true);
  EXPECT_EQ(s.admin("POST", path + "/pay", json::object()).status, 409);
  EXPECT_EQ(s.admin("GET", "/api/v1/issued-invoices?state=paid").body["items"].size(), 1u);
  // Issued while acme paid afterwards (postpaid) and paid: settled, also once acme prepays.
  EXPECT_EQ(inv["payment"], "postpaid");
  EXPECT_EQ(s.admin("GET", "/api/v1/tenants/acme/balance").body["balances"][0]["invoiced"], "0.00");
  expect_2xx(s.admin("PUT", "/api/v1/tenants/acme/billing", json{{"payment", "prepaid"}}), "prepaid");
  const json now_prepaid = s.admin("GET", "/api/v1/tenants/acme/balance").body["balances"][0];
  EXPECT_EQ(now_prepaid["invoiced"], "0.00") << now_prepaid.dump();
  expect_2xx(s.admin("PUT", "/api/v1/tenants/acme/billing", json{{"payment", "postpaid"}}), "postpaid");

  // The printable invoice, in English and Chinese.
  Resp zh = s.req("GET", path + "/print?lang=zh", acme_viewer);
  EXPECT_EQ(zh.status, 200);
  EXPECT_EQ(zh.content_type, "text/html");
  EXPECT_NE(zh.text.find("发票"), std::string::npos) << zh.text.substr(0, 600);
  EXPECT_NE(zh.text.find("acme-CNY-000001"), std::string::npos);
  EXPECT_NE(zh.text.find("acme-CNY-CN-000001"), std::string::npos);
  EXPECT_NE(zh.text.find(inv["hash"].get<std::string>()), std::string::npos);
  Resp en = s.admin("GET", path + "/print");
  // Paid, then credited 10.00: nothing is due, the credit note is owed back.
  EXPECT_EQ(en.text.find("Balance due"), std::string::npos);
  EXPECT_NE(en.text.find("Credited back to you</td><td class=\"n\">10.00 CNY"), std::string::npos)
      << en.text.substr(en.text.find("Invoice total"), 600);
  // Its lines in the reader's language too: each description from its message, as the API gives
  // it with ?lang=zh (the stored content, and so the hash, keeps the English).
  const json line = inv["sections"][0]["lines"][0];
  ASSERT_TRUE(line.contains("description_message")) << line.dump();
  const json zh_line = s.req("GET", path + "?lang=zh", acme_viewer).body["sections"][0]["lines"][0];
  EXPECT_NE(zh_line["description"], line["description"]) << zh_line.dump();
  auto as_html = [](std::string t) {  // the page escapes what HTML would read
    for (size_t p = 0; (p = t.find('\'', p)) != std::string::npos; p += 5) t.replace(p, 1, "&#39;");
    return t;
  };
  EXPECT_NE(zh.text.find(as_html(zh_line["description"])), std::string::npos) << zh.text.substr(0, 3000);
  EXPECT_NE(en.text.find(as_html(line["description"])), std::string::npos) << en.text.substr(0, 3000);
  EXPECT_EQ(s.admin("GET", path + "/verify").body["verified"], true);
  EXPECT_NE(en.text.find("@page{size:A4"), std::string::npos);
  EXPECT_EQ(s.admin("GET", path + "/print?lang=fr").error_fields(), std::vector<std::string>{"lang"});

  // The numbers begin with the tenant's name, so the name stays: renamed, a new "acme" would number
  // its invoices acme-CNY-000001 again. (Nor is such a tenant deleted: tenants.cc's on_delete.)
  json renamed = s.admin("GET", "/api/v1/tenants/acme").body;
  renamed["name"] = "acme-old";
  Resp rename = s.admin("PUT", "/api/v1/tenants/" + renamed["id"].get<std::string>(), renamed);
  EXPECT_EQ(rename.status, 422) << rename.describe();
  EXPECT_EQ(rename.error_fields(), std::vector<std::string>{"name"}) << rename.describe();
  EXPECT_NE(rename.reason_for("name").find("issued invoice(s) numbered by its name"), std::string::npos)
      << rename.describe();
  EXPECT_EQ(s.admin("GET", "/api/v1/tenants/acme").status, 200);
}

// Whole cents of an amount string ("123.45", "-0.10").
int64_t cents_of(const json& amount) {
  std::string a = amount.get<std::string>();
  const bool neg = !a.empty() && a[0] == '-';
  if (neg) a.erase(0, 1);
  const size_t dot = a.find('.');
  std::string frac = dot == std::string::npos ? "" : a.substr(dot + 1);
  frac.resize(2, '0');
  const int64_t v = std::stoll(a.substr(0, dot)) * 100 + std::stoll(frac);
  return neg ? -v : v;
}

// Months a close never reached (the server down over a month end, or a close that failed) are
// closed by the server's own pass, oldest first, and count in the balance until then. The
// server's clock is pinned (--demo-clock): the world is made in August, and the server comes
// back in November with August, September and October unclosed.
TEST(IssuedInvoices, MonthsLeftOpenAreClosedOldestFirstAndCountInTheBalanceUntilThen) {
  auto at = [](const std::string& t, const char* firewall) {
    return std::vector<std::string>{"--firewall-interval-s", firewall, "--demo-clock", t};
  };
  ServerProcess s(at("2026-08-20T00:00:00Z", "0"));
  priced_world(s);
  expect_2xx(s.admin("POST", "/api/v1/contracts",
                     json{{"name", "acme-dc"}, {"tenant", "acme"}, {"supplier", "dc"}, {"offers", {"h100"}},
                          {"currency", "CNY"}, {"starts_at", "2026-08-01T00:00:00Z"},
                          {"commitments", {{{"name", "one"}, {"offer", "h100"}, {"gpus", 1}, {"term_months", 12},
                                            {"starts_at", "2026-08-01T00:00:00Z"}}}}}),
             "contract");

  // November 10th, no pass yet: three ended months and this one accrue.
  s.set_extra_args(at("2026-11-10T00:00:00Z", "0"));
  s.restart();
  int64_t drafts = 0, ended = 0;
  for (const char* m : {"2026-08", "2026-09", "2026-10", "2026-11"}) {
    const json d = s.admin("GET", std::string("/api/v1/invoices?tenant=acme&month=") + m).body;
    ASSERT_TRUE(d["totals"].contains("CNY")) << m << d.dump();
    const int64_t c = cents_of(d["totals"]["CNY"]["total"]);
    EXPECT_GT(c, 0) << m << ": the commitment bills every month";
    drafts += c;
    if (std::string(m) != "2026-11") ended += c;
  }
  json b = s.admin("GET", "/api/v1/tenants/acme/balance").body["balances"][0];
  EXPECT_EQ(cents_of(b["accruing"]), drafts) << b.dump();
  EXPECT_EQ(cents_of(b["invoiced"]), 0) << b.dump();
  EXPECT_TRUE(s.admin("GET", "/api/v1/issued-invoices?tenant=acme").body["items"].empty());

  // With the cost firewall's pass: each ended month closed, oldest first, one invoice each.
  s.set_extra_args(at("2026-11-10T00:00:00Z", "1"));
  s.restart();
  const json issued = wait_for(s, "/api/v1/issued-invoices?tenant=acme", [](const json& j) { return j["items"].size() >= 3; });
  std::map<std::string, std::string> numbers;  // month -> number
  for (const json& inv : issued["items"]) numbers[inv["month"]] = inv["number"];
  EXPECT_EQ(numbers, (std::map<std::string, std::string>{
                         {"2026-08", "acme-CNY-000001"}, {"2026-09", "acme-CNY-000002"}, {"2026-10", "acme-CNY-000003"}}))
      << issued.dump();
  b = s.admin("GET", "/api/v1/tenants/acme/balance").body["balances"][0];
  EXPECT_EQ(cents_of(b["invoiced"]), ended) << b.dump();
  EXPECT_EQ(cents_of(b["accruing"]), drafts - ended) << b.dump();
}

// A month closed for invoicing is frozen for contracts too: a commitment may not start there, nor
// one that started there change or go, nor an exit take effect there (each would reach no invoice,
// or bill twice); what starts after it may; a contract whose commitment still bills is not deleted.
TEST(IssuedInvoices, AContractChangeThatWouldRebillAClosedMonthIsRefused) {
  ServerProcess s({"--firewall-interval-s", "0", "--demo-clock", "2026-11-10T00:00:00Z"});
  priced_world(s);
  const auto commitment = [](const char* name, const char* from, int64_t gpus, bool prepaid) {
    return json{{"name", name},      {"offer", "h100"},   {"gpus", gpus},
                {"term_months", 12}, {"starts_at", from}, {"prepaid", prepaid}};
  };
  json c = {{"name", "acme-dc"},
            {"tenant", "acme"},
            {"supplier", "dc"},
            {"offers", {"h100"}},
            {"currency", "CNY"},
            {"starts_at", "2026-08-01T00:00:00Z"},
            {"commitments", {commitment("one", "2026-08-01T00:00:00Z", 1, false)}}};
  expect_2xx(s.admin("POST", "/api/v1/contracts", c), "contract");
  // While October is open, a commitment may start in it (a market commitment too: a window at a
  // price, its supplier's defaults listed).
  c["commitments"].push_back(commitment("early", "2026-10-20T00:00:00Z", 1, true));
  c["commitments"].push_back(json{{"name", "window"},
                                  {"offer", "h100"},
                                  {"gpus", 2},
                                  {"starts_at", "2026-10-01T00:00:00Z"},
                                  {"ends_at", "2026-12-01T00:00:00Z"},
                                  {"price_per_gpu_hour", "10.00"},
                                  {"defaults", json::array()},
                                  {"resales",
                                   {{{"gpus", 1},
                                     {"from", "2026-10-01T00:00:00Z"},
                                     {"to", "2026-12-01T00:00:00Z"},
                                     {"price_per_gpu_hour", "11.00"},
                                     {"trade", "mtr_resale"}}}}});
  expect_2xx(s.admin("PUT", "/api/v1/contracts/acme-dc", c), "a commitment in an open month");
  // A contract created without clauses of its own, whose exit (notice on 09-25, 30 days from the
  // offer's template, copied in at signing) took effect on 10-25, in October.
  json leaving = c;
  leaving["name"] = "acme-leaving";
  leaving.erase("commitments");
  leaving["exit"] = {{"notice_at", "2026-09-25T00:00:00Z"}};
  expect_2xx(s.admin("POST", "/api/v1/contracts", leaving), "a contract given notice");
  expect_2xx(s.admin("POST", "/api/v1/invoices/close", json{{"month", "2026-10"}}), "close October");
  // The offer's template is no longer the contract's: a longer notice period there leaves its exit
  // in closed October (its exit refund is on October's issued invoice).
  json offer = s.admin("GET", "/api/v1/offers/h100").body;
  offer["contract_template"]["exit_notice_days"] = 60;
  expect_2xx(s.admin("PUT", "/api/v1/offers/h100", offer), "a longer notice period on the offer");
  EXPECT_EQ(s.admin("GET", "/api/v1/contracts/acme-leaving").body["clauses"]["exit_notice_days"], 30);

  const auto refused = [&](json body, const char* field, const char* what) {
    const Resp r = s.admin("PUT", "/api/v1/contracts/acme-dc", body);
    EXPECT_EQ(r.status, 422) << what << ": " << r.describe();
    EXPECT_EQ(r.error_fields(), std::vector<std::string>{field}) << what << ": " << r.describe();
    EXPECT_NE(r.body.dump().find("2026-11-01T00:00:00.000Z"), std::string::npos) << r.describe();
  };
  json b = c;
  b["commitments"].push_back(commitment("late", "2026-10-25T00:00:00Z", 1, true));
  refused(b, "commitments[3].starts_at", "a prepaid commitment starting in closed October (never charged)");
  b = c;
  b["commitments"][1]["starts_at"] = "2026-11-20T00:00:00Z";
  refused(b, "commitments[1]", "October's prepaid commitment moved out of it (charged twice)");
  b = c;
  b["commitments"][0]["gpus"] = 2;
  refused(b, "commitments[0]", "a commitment billed in August to October grown");
  b = c;
  b["commitments"].erase(1);
  refused(b, "commitments", "October's commitment removed");
  b = c;
  b["exit"] = {{"notice_at", "2026-09-01T00:00:00Z"}, {"exit_at", "2026-09-15T00:00:00Z"}};
  refused(b, "exit.exit_at", "an exit effective on October 1st (30 days' notice)");
  b = c;
  b["exit"] = {{"notice_at", "2026-09-15T00:00:00Z"}};
  refused(b, "exit.notice_at", "notice effective on October 15th");
  b = c;
  b["commitments"][2]["defaults"] = {{{"gpus", 1}, {"from", "2026-10-25T00:00:00Z"}, {"to", "2026-11-05T00:00:00Z"}}};
  refused(b, "commitments[2].defaults", "a default recorded from a day in closed October");
  // A default from November may be recorded, and its end moved, both in November.
  b = c;
  b["commitments"][2]["defaults"] = {{{"gpus", 1}, {"from", "2026-11-02T00:00:00Z"}, {"to", "2026-11-05T00:00:00Z"}}};
  expect_2xx(s.admin("PUT", "/api/v1/contracts/acme-dc", b), "a default from November");
  b["commitments"][2]["defaults"][0]["to"] = "2026-11-07T00:00:00Z";
  expect_2xx(s.admin("PUT", "/api/v1/contracts/acme-dc", b), "its end moved");
  // So may a piece of the October resale its buyer did not get, from November: its own times
  // decide, not the resale's start. The resale itself stays as October billed it.
  json& resale = b["commitments"][2]["resales"][0];
  resale["undelivered"] = {
      {{"gpus", 1}, {"from", "2026-11-02T00:00:00Z"}, {"to", "2026-12-01T00:00:00Z"}, {"node", "gpn1"}}};
  expect_2xx(s.admin("PUT", "/api/v1/contracts/acme-dc", b), "a resold GPU undelivered from November");
  resale["undelivered"][0]["to"] = "2026-11-09T00:00:00Z";
  expect_2xx(s.admin("PUT", "/api/v1/contracts/acme-dc", b), "its end moved");
  json x = b;
  x["commitments"][2]["resales"][0]["undelivered"][0]["from"] = "2026-10-20T00:00:00Z";
  refused(x, "commitments[2].resales", "an undelivered piece from a day in closed October");
  x = b;
  x["commitments"][2]["resales"][0]["price_per_gpu_hour"] = "12.00";
  refused(x, "commitments[2].resales", "the October resale repriced");
  c = b;
  // Through a new contract too.
  json other = c;
  other["name"] = "acme-dc-2";
  other["commitments"] = {commitment("late", "2026-10-31T23:59:59Z", 1, false)};
  const Resp created = s.admin("POST", "/api/v1/contracts", other);
  EXPECT_EQ(created.status, 422) << created.describe();
  EXPECT_EQ(created.error_fields(), std::vector<std::string>{"commitments[0].starts_at"}) << created.describe();

  // From November on, all of it may be done.
  b = c;
  b["commitments"].push_back(commitment("late", "2026-11-01T00:00:00Z", 2, true));
  b["exit"] = {{"notice_at", "2026-09-01T00:00:00Z"}, {"exit_at", "2026-11-05T00:00:00Z"}};
  expect_2xx(s.admin("PUT", "/api/v1/contracts/acme-dc", b), "a commitment from November and an exit in it");
  b["commitments"].erase(3);
  b.erase("exit");
  expect_2xx(s.admin("PUT", "/api/v1/contracts/acme-dc", b), "November's commitment and exit taken back");
  // The commitments from August and October and the window bill November: the contract stays.
  const Resp del = s.admin("DELETE", "/api/v1/contracts/acme-dc");
  EXPECT_EQ(del.status, 409) << del.describe();
  EXPECT_NE(del.body.dump().find("3 commitment(s)"), std::string::npos) << del.describe();
}

// An issued invoice whose stored total no longer reads fails the tenant's balance, naming the
// record: counted as 0 (as it was), the tenant looked solvent to the firewall's balance stop.
TEST(IssuedInvoices, AnIssuedInvoiceThatNoLongerReadsFailsTheBalance) {
  ServerProcess s({"--firewall-interval-s", "0"});
  committed_world(s);
  const json closed =
      expect_2xx(s.admin("POST", "/api/v1/invoices/close", json{{"month", month_ago(1)}}), "close").body;
  ASSERT_EQ(closed["issued"].size(), 1u) << closed.dump();
  const std::string id = closed["issued"][0];
  ASSERT_EQ(s.admin("GET", "/api/v1/tenants/acme/balance").status, 200);
  edit_database(s, "UPDATE objects SET body = json_set(body, '$.totals.total', '12,00') WHERE id = '" + id + "'");
  const Resp broken = s.admin("GET", "/api/v1/tenants/acme/balance");
  EXPECT_EQ(broken.status, 500) << broken.describe();
  EXPECT_NE(broken.describe().find(id), std::string::npos) << broken.describe();
}

// An invoice issued while its tenant prepaid came out of its top-ups: it counts against them, and
// once the tenant pays afterwards (postpaid) only what it took beyond them is still owed.
TEST(IssuedInvoices, AnInvoiceIssuedPrepaidIsReadAsPrepaidAfterTheTenantTurnsPostpaid) {
  ServerProcess s({"--firewall-interval-s", "0"});
  committed_world(s);
  const std::string last = month_ago(1);
  expect_2xx(s.admin("PUT", "/api/v1/tenants/acme/billing", json{{"payment", "prepaid"}}), "prepaid");
  expect_2xx(s.admin("POST", "/api/v1/top-ups", json{{"tenant", "acme"}, {"amount", "1.00"}, {"reference", "r1"}}),
             "top-up");
  const json closed = expect_2xx(s.admin("POST", "/api/v1/invoices/close", json{{"month", last}}), "close").body;
  ASSERT_EQ(closed["issued"].size(), 1u) << closed.dump();
  const json inv = s.admin("GET", "/api/v1/issued-invoices/" + closed["issued"][0].get<std::string>()).body;
  EXPECT_EQ(inv["payment"], "prepaid");
  const int64_t total = cents_of(inv["totals"]["total"]);
  ASSERT_GT(total, 100) << inv.dump();
  auto balance = [&] { return s.admin("GET", "/api/v1/tenants/acme/balance").body["balances"][0]; };
  EXPECT_EQ(cents_of(balance()["invoiced"]), total) << balance().dump();
  // Printed, it says so: charged to the balance, and no "balance due" of its own (the top-ups cover
  // 1.00 of it: the balance says what is owed; it stays `issued`).
  const std::string print = s.admin("GET", "/api/v1/issued-invoices/" + inv["id"].get<std::string>() + "/print").text;
  const std::string total_text = inv["totals"]["total"].get<std::string>() + " " + inv["currency"].get<std::string>();
  EXPECT_NE(print.find("Charged to the prepaid balance (what the top-ups do not cover is owed: see the "
                       "balance)</td><td class=\"n\">" +
                       total_text),
            std::string::npos)
      << print.substr(print.find("Invoice total"), 600);
  EXPECT_EQ(print.find("Balance due"), std::string::npos);
  expect_2xx(s.admin("PUT", "/api/v1/tenants/acme/billing", json{{"payment", "postpaid"}}), "postpaid");
  EXPECT_EQ(cents_of(balance()["invoiced"]), total - 100) << balance().dump() << "\nthe top-ups settled 1.00 of it";
}

}  // namespace
}  // namespace gpurent::testing

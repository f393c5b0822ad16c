// Billing inside the real server: contracts validate; the scheduler's runs land in the allocation
// ledger under the contract's offer; invoices rate them (lines sum to the totals, tenants see only
// their own, CSV and FOCUS exports); a node failure becomes an outage credit; a card benchmark
// below the floor a credit naming it, and a tenant's dispute one once accepted; the cost firewall
// raises a budget alert, delivers it to a webhook and holds new jobs until the budget is raised,
// and alerts on a card by the tenant's own threshold;
// the reconciliation report compares metered with allocated GPU-seconds.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <chrono>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include <sqlite3.h>

#include "core/clock.h"
#include "core/ids.h"
#include "core/money.h"
#include "server_fixture.h"

namespace gpurent::testing {
namespace {

std::string this_month() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[8];
  std::strftime(buf, sizeof buf, "%Y-%m", &tm);
  return buf;
}

// The closed run of job `id` (null when there is none).
json closed_run_of(const ServerProcess& s, const std::string& id) {
  json found;
  const json runs = s.admin("GET", "/api/v1/allocations?state=closed").body.at("items");
  for (const auto& a : runs)
    if (a["job_id"] == id) found = a;
  return found;
}

// Acme's invoice lines of this month whose rule starts with `prefix`.
json lines_of_rule(const ServerProcess& s, const std::string& prefix) {
  json out = json::array();
  json inv = s.admin("GET", "/api/v1/invoices?tenant=acme&month=" + this_month()).body;
  for (const auto& sec : inv["sections"])
    for (const auto& l : sec["lines"])
      if (l["rule"].get<std::string>().rfind(prefix, 0) == 0) out.push_back(l);
  return out;
}

void world(const ServerProcess& s) {
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  for (const char* n : {"n1", "n2"}) expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", n)), "node");
  expect_2xx(s.admin("POST", "/api/v1/offers", offer_doc("dc", "h100")), "offer");
  // In CNY, as the offer: the scheduler uses offers in a tenant's own currency (or its contracts').
  expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme", "CNY")), "tenant");
  expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("acme", "vision")), "project");
}

json contract_doc() {
  return acme_dc_contract({{{"name", "one-gpu"},
                            {"offer", "h100"},
                            {"gpus", 1},
                            {"term_months", 1},
                            {"starts_at", this_month() + "-01T00:00:00Z"}}});
}

// The lines of acme's invoice of this month (its first section) under one rule.
std::vector<json> acme_lines(const ServerProcess& s, const std::string& rule) {
  std::vector<json> out;
  json inv = s.admin("GET", "/api/v1/invoices?tenant=acme&month=" + this_month()).body;
  for (const auto& l : inv["sections"][0]["lines"])
    if (l["rule"] == rule) out.push_back(l);
  return out;
}

std::string run_job(const ServerProcess& s, const std::string& name, int gpus, int seconds) {
  json j = job_doc("vision", name);
  j["gpus_per_worker"] = gpus;
  j["expected_duration_seconds"] = seconds;
  return expect_2xx(s.admin("POST", "/api/v1/jobs", j), name).body.at("id");
}

int64_t cents(const std::string& amount) {  // "-12.34" -> -1234
  const bool neg = !amount.empty() && amount[0] == '-';
  const std::string a = neg ? amount.substr(1) : amount;
  const size_t dot = a.find('.');
  int64_t whole = std::stoll(a.substr(0, dot)), frac = 0;
  if (dot != std::string::npos) frac = std::stoll((a.substr(dot + 1) + "00").substr(0, 2));
  return (neg ? -1 : 1) * (whole * 100 + frac);
}

// RFC 4180 rows: quoted fields may hold commas, newlines and doubled quotes.
std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1);
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') field += '"', ++i;
      else if (c == '"') quoted = false;
      else field += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      rows.back().push_back(std::move(field)), field.clear();
    } else if (c == '\n') {
      rows.back().push_back(std::move(field)), field.clear();
      rows.emplace_back();
    } else if (c != '\r') {
      field += c;
    }
  }
  if (!field.empty() || !rows.back().empty()) rows.back().push_back(field);
  if (rows.back().empty()) rows.pop_back();
  return rows;
}


TEST(Billing, ContractsValidateAndInvoicesEqualTheSumOfTheirLines) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0"});
  world(s);
  json bad = contract_doc();
  bad["currency"] = "USD";
  Resp r = s.admin("POST", "/api/v1/contracts", bad);
  EXPECT_EQ(r.status, 422) << r.describe();
  EXPECT_NE(r.reason_for("offers[0]").find("priced in CNY but the contract is in USD"), std::string::npos) << r.describe();
  bad = contract_doc();
  bad["commitments"][0]["term_months"] = 7;
  EXPECT_EQ(s.admin("POST", "/api/v1/contracts", bad).reason_for("commitments[0].term_months"), "must be 1, 12 or 36");
  expect_2xx(s.admin("POST", "/api/v1/contracts", contract_doc()), "contract");

  const std::string id = run_job(s, "short", 2, 1);
  wait_for(s, "/api/v1/jobs/" + id, [](const json& j) { return j["status"]["state"] == "succeeded"; });
  json allocs = s.admin("GET", "/api/v1/allocations?state=closed").body.at("items");
  ASSERT_EQ(allocs.size(), 1u);
  EXPECT_EQ(allocs[0]["job_id"], id);
  EXPECT_EQ(allocs[0]["gpu_milli"], 2000);
  EXPECT_FALSE(allocs[0]["contract_id"].get<std::string>().empty());
  EXPECT_FALSE(allocs[0]["ended_at"].is_null());

  json inv = s.admin("GET", "/api/v1/invoices?tenant=acme&month=" + this_month()).body;
  ASSERT_EQ(inv["sections"].size(), 1u) << inv.dump();
  const json& sec = inv["sections"][0];
  EXPECT_EQ(sec["contract"], "acme-dc");
  EXPECT_EQ(sec["currency"], "CNY");
  int64_t sum = 0;
  std::set<std::string> rules;
  for (const auto& l : sec["lines"]) sum += cents(l["amount"]), rules.insert(l["rule"]);
  EXPECT_EQ(sum, cents(sec["totals"]["total"]));
  EXPECT_EQ(sec["totals"]["total"], inv["totals"]["CNY"]["total"]);
  EXPECT_TRUE(rules.count("reserved_commitment")) << sec.dump();
  // One GPU of the two is covered by the one-GPU commitment, the other is on-demand (60 s minimum).
  EXPECT_TRUE(rules.count("reserved_covered")) << sec.dump();
  EXPECT_TRUE(rules.count("on_demand")) << sec.dump();
  EXPECT_TRUE(rules.count("min_increment")) << sec.dump();

  // The month's commitment line grows while the month runs (a cent every few seconds): the export
  // is compared with the invoice read on both sides of it, unchanged between.
  Resp csv;
  json focus_inv;
  for (int tries = 0; tries < 10; ++tries) {
    const json before = s.admin("GET", "/api/v1/invoices?tenant=acme&month=" + this_month()).body;
    csv = s.admin("GET", "/api/v1/invoices?tenant=acme&month=" + this_month() + "&format=focus");
    focus_inv = s.admin("GET", "/api/v1/invoices?tenant=acme&month=" + this_month()).body;
    if (before == focus_inv) break;
  }
  ASSERT_EQ(focus_inv["sections"].size(), 1u) << focus_inv.dump();
  const json& fsec = focus_inv["sections"][0];
  EXPECT_EQ(csv.status, 200);
  EXPECT_EQ(csv.content_type, "text/csv");
  EXPECT_EQ(csv.text.rfind("BilledCost,BillingAccountId", 0), 0u) << csv.text.substr(0, 200);
  // The FOCUS rows are the invoice's lines (one row each, the same amounts, the same currency) and
  // at most one Unused row for the commitment, billed 0; EffectiveCost spreads the commitment's
  // share over the time it covered and that row, so it adds up to the invoice too.
  const auto rows = csv_rows(csv.text);
  ASSERT_GE(rows.size(), fsec["lines"].size() + 1) << csv.text;
  ASSERT_LE(rows.size(), fsec["lines"].size() + 2) << csv.text;
  const auto col = [&](const std::string& name) {
    for (size_t i = 0; i < rows[0].size(); ++i)
      if (rows[0][i] == name) return i;
    ADD_FAILURE() << "no column " << name;
    return size_t{0};
  };
  const size_t billed = col("BilledCost"), currency = col("BillingCurrency"), charge = col("ChargeCategory"),
               effective = col("EffectiveCost"), status = col("CommitmentDiscountStatus"),
               account = col("BillingAccountName"), provider = col("ProviderName");
  int64_t focus_sum = 0, effective_sum = 0;
  std::multiset<int64_t> focus_amounts, line_amounts;
  for (size_t r = 1; r < rows.size(); ++r) {
    ASSERT_EQ(rows[r].size(), rows[0].size()) << "row " << r;
    EXPECT_EQ(rows[r][currency], "CNY");
    EXPECT_EQ(rows[r][account], "acme");
    EXPECT_EQ(rows[r][provider], "dc");  // the supplier's name, not its id
    EXPECT_TRUE(rows[r][charge] == "Usage" || rows[r][charge] == "Purchase" || rows[r][charge] == "Credit")
        << rows[r][charge];
    focus_sum += cents(rows[r][billed]);
    effective_sum += cents(rows[r][effective]);
    if (rows[r][status] != "Unused") focus_amounts.insert(cents(rows[r][billed]));
  }
  for (const auto& l : fsec["lines"]) line_amounts.insert(cents(l["amount"]));
  EXPECT_EQ(focus_amounts, line_amounts);
  EXPECT_EQ(focus_sum, cents(fsec["totals"]["total"]));
  EXPECT_EQ(effective_sum, cents(fsec["totals"]["total"]));

  // Tenants read their own invoice; another tenant's is not found.
  const std::string own = make_user_token(s, "acme-admin", "tenant_admin", "acme");
  EXPECT_EQ(s.req("GET", "/api/v1/invoices?month=" + this_month(), own).status, 200);
  expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("rival")), "tenant");
  const std::string rival = make_user_token(s, "rival-admin", "tenant_admin", "rival");
  EXPECT_EQ(s.req("GET", "/api/v1/invoices?tenant=acme&month=" + this_month(), rival).status, 404);
  EXPECT_EQ(s.req("GET", "/api/v1/contracts/acme-dc", rival).status, 404);
  json rival_inv = s.req("GET", "/api/v1/invoices?month=" + this_month(), rival).body;
  EXPECT_TRUE(rival_inv["sections"].empty()) << rival_inv.dump();
  // A contract that bills runs stays: deleting it would re-price them at list prices.
  Resp gone = s.admin("DELETE", "/api/v1/contracts/acme-dc");
  EXPECT_EQ(gone.status, 409) << gone.describe();
  EXPECT_NE(gone.describe().find("1 run(s) or kept storage record(s) and 1 commitment(s) are billed under it"),
            std::string::npos)
      << gone.describe();
  EXPECT_EQ(s.admin("GET", "/api/v1/invoices?tenant=acme&month=" + this_month()).body["sections"][0]["contract"],
            "acme-dc");
  // Nor may it move to another tenant: acme's run would leave it (re-priced at list prices) and
  // the commitment would bill rival. The same contract written again is fine.
  json moved = contract_doc();
  moved["tenant"] = "rival";
  Resp refused = s.admin("PUT", "/api/v1/contracts/acme-dc", moved);
  EXPECT_EQ(refused.status, 422) << refused.describe();
  EXPECT_EQ(refused.error_fields(), std::vector<std::string>{"tenant"}) << refused.describe();
  EXPECT_NE(refused.reason_for("tenant").find("keeps its tenant, supplier and currency: 1 run(s)"), std::string::npos)
      << refused.describe();
  EXPECT_EQ(s.admin("GET", "/api/v1/contracts/acme-dc").body["tenant_id"],
            s.admin("GET", "/api/v1/tenants/acme").body["id"]);
  expect_2xx(s.admin("PUT", "/api/v1/contracts/acme-dc", contract_doc()), "the same contract again");
  // Bad periods name the parameter.
  EXPECT_EQ(s.admin("GET", "/api/v1/invoices?tenant=acme&month=2026-13").error_fields(), std::vector<std::string>{"month"});
  EXPECT_EQ(s.admin("GET", "/api/v1/invoices?month=" + this_month()).error_fields(), std::vector<std::string>{"tenant"});
}

// A contract's exit takes effect at the later of its exit_at and the notice plus its notice days
// (30, its offer's template), as billing cuts its commitments there: a run started after exit_at
// but before that is still placed and billed under it — covered by the commitment that is still
// billed — not at list prices beside it.
TEST(Billing, RunsStayUnderAContractUntilItsExitTakesEffect) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0"});
  world(s);
  json c = contract_doc();
  const TimeMs now = SystemClock().now();
  c["exit"] = {{"notice_at", format_rfc3339(now - 3'600'000)}, {"exit_at", format_rfc3339(now - 60'000)}};
  const std::string contract = expect_2xx(s.admin("POST", "/api/v1/contracts", c), "contract, notice given").body.at("id");
  const std::string id = run_job(s, "after-exit-at", 1, 1);
  wait_for(s, "/api/v1/jobs/" + id, [](const json& j) { return j["status"]["state"] == "succeeded"; });
  const json allocs = s.admin("GET", "/api/v1/allocations?state=closed").body.at("items");
  ASSERT_EQ(allocs.size(), 1u) << allocs.dump();
  EXPECT_EQ(allocs[0]["contract_id"], contract) << allocs.dump();
  const json inv = s.admin("GET", "/api/v1/invoices?tenant=acme&month=" + this_month()).body;
  ASSERT_EQ(inv["sections"].size(), 1u) << "no list-price section beside the contract's: " << inv.dump();
  std::set<std::string> rules;
  for (const auto& l : inv["sections"][0]["lines"]) rules.insert(l["rule"]);
  EXPECT_TRUE(rules.count("reserved_covered")) << inv.dump();
  EXPECT_FALSE(rules.count("on_demand")) << inv.dump();
}

// A tenant's own image is kept on the offer's nodes from its first run there until it is deleted,
// billed per GB-month: one record per image and offer, whatever the number of runs; the invoice's
// line is the image's bytes × the time kept (GB-seconds, exact); a public image is not billed.
TEST(Billing, ATenantsOwnImageIsBilledPerGbMonthWhileKept) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0"});
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", "n1")), "node");
  json offer = offer_doc("dc", "h100");
  offer["fees"]["image_storage"] = {{"per_gb_month", "0.70"}, {"free_gb", 0}};
  expect_2xx(s.admin("POST", "/api/v1/offers", offer), "offer");
  EXPECT_EQ(s.admin("GET", "/api/v1/offers/h100").body["fees"]["image_storage"],
            (json{{"per_gb_month", "0.70"}, {"free_gb", 0}}));
  json no_price = offer_doc("dc", "h100-b");
  no_price["fees"]["image_storage"] = {{"free_gb", 3}};
  EXPECT_EQ(s.admin("POST", "/api/v1/offers", no_price).error_fields(),
            std::vector<std::string>{"fees.image_storage.per_gb_month"});
  expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme", "CNY")), "tenant");
  expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("acme", "vision")), "project");
  const std::string dev = make_user_token(s, "acme-dev", "tenant_member", "acme");
  const std::string bytes(4096, 'x');
  for (const char* name : {"mine", "public-base"}) {
    const bool pub = std::string(name) == "public-base";
    json img = {{"name", name}, {"archive", {{"format", "docker-archive"}, {"sha256", sha256_hex(bytes)}, {"size_bytes", bytes.size()}}}};
    const std::string who = pub ? s.admin_token() : dev;
    ASSERT_EQ(s.req("POST", "/api/v1/images", who, img).status, 201);
    ASSERT_EQ(s.raw("PUT", std::string("/api/v1/images/") + name + "/archive?offset=0", who, bytes, "application/octet-stream").status, 200);
  }
  std::vector<std::string> ids;
  for (const char* image : {"mine", "mine", "public-base"}) {
    json j = job_doc("vision", "in-" + std::to_string(ids.size()));
    j["image"] = image;
    j["expected_duration_seconds"] = 1;
    ids.push_back(expect_2xx(s.req("POST", "/api/v1/jobs", dev, j), "job").body.at("id"));
    wait_for(s, "/api/v1/jobs/" + ids.back(), [](const json& x) { return x["status"]["state"] == "succeeded"; });
  }
  const json first = closed_run_of(s, ids[0]);
  ASSERT_FALSE(first.is_null());
  auto image_lines = [&] { return lines_of_rule(s, "image_storage"); };
  json lines = image_lines();
  ASSERT_EQ(lines.size(), 1u) << "one line for the tenant's own image (two runs), none for the public one: " << lines.dump();
  EXPECT_EQ(lines[0]["rule"], "image_storage");
  EXPECT_EQ(lines[0]["unit"], "GB-second");
  EXPECT_EQ(lines[0]["unit_price"], "0.70");
  EXPECT_EQ(lines[0]["from"], first["running_at"]) << "kept from the first run's start";
  EXPECT_NE(lines[0]["description"].get<std::string>().find("Image mine (4096 bytes) kept on offer h100"), std::string::npos)
      << lines[0].dump();
  // Deleted: the storage stops then, and the line no longer grows.
  ASSERT_EQ(s.req("DELETE", "/api/v1/images/mine", dev).status, 204);
  json closed = image_lines();
  ASSERT_EQ(closed.size(), 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(image_lines(), closed) << "an image deleted is no longer billed";
  // The quantity is bytes × the time kept, exactly: 4096 bytes × ms / 10^12 GB-seconds.
  auto ms_of = [](const json& t) {
    const std::string v = t.get<std::string>();  // 2026-12-02T15:04:05.123Z
    std::tm tm{};
    strptime(v.substr(0, 19).c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
    return static_cast<int64_t>(timegm(&tm)) * 1000 + (v.size() > 20 ? std::stoll(v.substr(20, 3)) : 0);
  };
  const int64_t kept_ms = ms_of(closed[0]["to"]) - ms_of(closed[0]["from"]);
  ASSERT_GT(kept_ms, 0);
  const std::string digits = std::to_string(int64_t{4096} * kept_ms);  // / 10^12
  std::string want = digits.size() > 12 ? digits.substr(0, digits.size() - 12) : "0";
  std::string frac = std::string(digits.size() < 12 ? 12 - digits.size() : 0, '0') + digits.substr(digits.size() > 12 ? digits.size() - 12 : 0);
  while (!frac.empty() && frac.back() == '0') frac.pop_back();
  if (!frac.empty()) want += "." + frac;
  EXPECT_EQ(closed[0]["quantity"], want) << closed[0].dump();
}

// A project's artifact is kept for the offer's nodes from the first run that mounts it until it is
// deleted, billed per GB-month under the offer's artifact_storage fee: one record per artifact and
// offer whatever the number of runs.
TEST(Billing, AProjectsArtifactIsBilledPerGbMonthWhileKept) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0"});
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", "n1")), "node");
  json offer = offer_doc("dc", "h100");
  offer["fees"]["artifact_storage"] = {{"per_gb_month", "0.07"}, {"free_gb", 0}};
  expect_2xx(s.admin("POST", "/api/v1/offers", offer), "offer");
  EXPECT_EQ(s.admin("GET", "/api/v1/offers/h100").body["fees"]["artifact_storage"],
            (json{{"per_gb_month", "0.07"}, {"free_gb", 0}}));
  expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme", "CNY")), "tenant");
  expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("acme", "vision")), "project");
  const std::string dev = make_user_token(s, "acme-dev", "tenant_admin", "acme");
  const std::string weights(8192, 'w');
  ASSERT_EQ(s.req("POST", "/api/v1/projects/vision/artifacts", dev,
                  json{{"name", "weights"}, {"sha256", sha256_hex(weights)}, {"size_bytes", weights.size()}, {"kind", "model"}})
                .status,
            201);
  ASSERT_EQ(s.raw("PUT", "/api/v1/projects/vision/artifacts/weights/content?offset=0", dev, weights, "application/octet-stream").status,
            200);
  std::vector<std::string> ids;
  for (int i = 0; i < 2; ++i) {
    json j = job_doc("vision", "uses-weights-" + std::to_string(i));
    j["artifacts"] = {{{"name", "weights"}, {"sha256", sha256_hex(weights)}, {"mount", "/models/w.bin"}}};
    j["expected_duration_seconds"] = 1;
    ids.push_back(expect_2xx(s.req("POST", "/api/v1/jobs", dev, j), "job").body.at("id"));
    wait_for(s, "/api/v1/jobs/" + ids.back(), [](const json& x) { return x["status"]["state"] == "succeeded"; });
  }
  const json first = closed_run_of(s, ids[0]);
  ASSERT_FALSE(first.is_null());
  auto artifact_lines = [&] { return lines_of_rule(s, "artifact_storage"); };
  json lines = artifact_lines();
  ASSERT_EQ(lines.size(), 1u) << "one line for the artifact (two runs): " << lines.dump();
  EXPECT_EQ(lines[0]["rule"], "artifact_storage");
  EXPECT_EQ(lines[0]["unit_price"], "0.07");
  EXPECT_EQ(lines[0]["from"], first["running_at"]) << "kept from the first run's start";
  EXPECT_NE(lines[0]["description"].get<std::string>().find("Artifact weights (8192 bytes) kept on offer h100"),
            std::string::npos)
      << lines[0].dump();
  // Deleted: the storage stops then, and the line no longer grows.
  ASSERT_EQ(s.req("DELETE", "/api/v1/projects/vision/artifacts/weights", dev).status, 204);
  json closed = artifact_lines();
  ASSERT_EQ(closed.size(), 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(artifact_lines(), closed) << "an artifact deleted is no longer billed";
  EXPECT_NE(closed[0]["to"], lines[0]["to"]) << "its end is the deletion, no longer the period's";
}

// Spot market prices: appended by operators and the offer's supplier, never in the past, never
// changed; a spot run is rated at the price in force in each interval.
TEST(Billing, SpotTimeIsRatedAtTheMarketPriceOfEachInterval) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0"});
  world(s);
  json plain = offer_doc("dc", "h100-nospot");  // another model's: it sells none of the H100 nodes
  plain["prices"].erase("spot");
  plain["gpu_model"] = "a100-sxm4-80gb";
  plain["contract_template"].erase("min_fp16_tflops");
  expect_2xx(s.admin("POST", "/api/v1/offers", plain), "offer");
  const json offer = s.admin("GET", "/api/v1/offers/h100").body;
  auto post = [&](json body) { return s.admin("POST", "/api/v1/spot-prices", body); };
  EXPECT_EQ(post({{"offer", "h100-nospot"}, {"price", "1.00"}}).error_fields(), std::vector<std::string>{"offer"});
  EXPECT_EQ(post({{"offer", "h100"}, {"price", 1.5}}).error_fields(), std::vector<std::string>{"price"});
  Resp above = post({{"offer", "h100"}, {"price", "9999.00"}});
  EXPECT_EQ(above.error_fields(), std::vector<std::string>{"price"}) << above.describe();
  EXPECT_EQ(post({{"offer", "h100"}, {"price", "0"}}).error_fields(), std::vector<std::string>{"price"});
  EXPECT_EQ(post({{"offer", "h100"}, {"price", "1.00"}, {"from", "2020-01-01T00:00:00Z"}}).error_fields(),
            std::vector<std::string>{"from"}) << "a price never reaches back into metered usage";
  EXPECT_EQ(post({{"offer", "nope"}, {"price", "1.00"}}).status, 422);
  const json first = expect_2xx(post({{"offer", "h100"}, {"price", "2.00"}}), "spot price").body;
  EXPECT_EQ(first["offer_id"], offer["id"]);
  EXPECT_EQ(first["currency"], offer["currency"]);
  EXPECT_EQ(s.admin("PUT", "/api/v1/spot-prices/" + first["id"].get<std::string>(), json{{"offer", "h100"}, {"price", "1.00"}}).status, 405);
  EXPECT_EQ(s.admin("DELETE", "/api/v1/spot-prices/" + first["id"].get<std::string>()).status, 405);
  EXPECT_EQ(post({{"offer", "h100"}, {"price", "1.00"}, {"from", first["from"]}}).error_fields(), std::vector<std::string>{"from"})
      << "each price starts after the latest";
  json j = job_doc("vision", "cheap");
  j["billing"] = {{"mode", "spot"}};
  j["expected_duration_seconds"] = 3600;  // ended by a cancel once the price has changed under it
  const std::string id = expect_2xx(s.admin("POST", "/api/v1/jobs", j), "job").body.at("id");
  wait_for(s, "/api/v1/jobs/" + id, [](const json& x) { return x["status"]["state"] == "running"; });
  std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  expect_2xx(post({{"offer", "h100"}, {"price", "3.00"}}), "spot price");
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  expect_2xx(s.admin("POST", "/api/v1/jobs/" + id + "/cancel", json::object()), "cancel");
  wait_for(s, "/api/v1/jobs/" + id, [](const json& x) { return x["status"]["state"] == "cancelled"; });
  const json list = s.admin("GET", "/api/v1/spot-prices?offer=" + offer["id"].get<std::string>()).body;
  ASSERT_EQ(list["items"].size(), 2u) << list.dump();
  std::string changed;  // the list is in id order, not time order
  for (const auto& p : list["items"])
    if (p["price"] == "3.00") changed = p["from"];
  std::map<std::string, json> spot;  // unit price -> line
  json inv = s.admin("GET", "/api/v1/invoices?tenant=acme&month=" + this_month()).body;
  for (const auto& sec : inv["sections"])
    for (const auto& l : sec["lines"])
      if (l["rule"] == "spot") spot[l["unit_price"]] = l;
  ASSERT_EQ(spot.size(), 2u) << "one spot line per price in force: " << inv.dump();
  EXPECT_EQ(spot["2.00"]["to"], changed);
  EXPECT_EQ(spot["3.00"]["from"], changed);

  // At most 100 prices wait to take effect (the offer's timeline holds them: services/spot_timeline.h).
  const TimeMs tomorrow = (SystemClock().now() / 60'000 + 24 * 60) * 60'000;
  for (int i = 0; i < 100; ++i)
    ASSERT_EQ(post({{"offer", "h100"}, {"price", "2.50"}, {"from", format_rfc3339(tomorrow + i * 60'000LL)}}).status,
              201)
        << i;
  Resp more = post({{"offer", "h100"}, {"price", "2.50"}, {"from", format_rfc3339(tomorrow + 100 * 60'000LL)}});
  EXPECT_EQ(more.error_fields(), std::vector<std::string>{"from"}) << more.describe();
  EXPECT_NE(more.body.dump().find("100 spot prices waiting"), std::string::npos) << more.describe();
  EXPECT_EQ(post({{"offer", "h100"}, {"price", "2.50"}, {"from", format_rfc3339(tomorrow)}}).error_fields(),
            std::vector<std::string>{"from"})
      << "still after the latest, which the timeline knows";
}

TEST(Billing, ARequeueAfterANodeFailureIsAnOutageCredit) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0"});
  world(s);
  expect_2xx(s.admin("POST", "/api/v1/contracts", contract_doc()), "contract");
  const std::string id = run_job(s, "long", 8, 3600);
  json running = wait_for(s, "/api/v1/jobs/" + id, [](const json& j) { return j["status"]["state"] == "running"; });
  const std::string node = running["status"]["placement"][0]["node"];
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  json n = s.admin("GET", "/api/v1/nodes/" + node).body;
  n["state"] = "unavailable";
  n["state_reason"] = "PSU failure";
  expect_2xx(s.admin("PUT", "/api/v1/nodes/" + node, n), "node down");
  // The job restarts on the other node; the time in between is an outage.
  wait_for(s, "/api/v1/allocations?state=closed", [](const json& j) { return j["items"].size() == 1; });
  const auto credits = acme_lines(s, "sla_outage");
  for (const json& l : credits) {
    EXPECT_EQ(l["kind"], "credit");
    EXPECT_LT(cents(l["amount"]), 1);  // a credit: negative (or rounding to 0.00 for a short outage)
    EXPECT_NE(l["description"].get<std::string>().find("PSU failure"), std::string::npos) << l.dump();
  }
  EXPECT_FALSE(credits.empty()) << "no sla_outage line";
}

TEST(Billing, ACardBenchmarkBelowTheFloorIsRefundedInProportion) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0"});
  world(s);
  json contract = contract_doc();  // the offer's template: a 900 TFLOPS floor per card
  contract["commitments"] = json::array();
  expect_2xx(s.admin("POST", "/api/v1/contracts", contract), "contract");
  const std::string id = run_job(s, "slow-card", 1, 1);
  json done = wait_for(s, "/api/v1/jobs/" + id, [](const json& j) { return j["status"]["state"] == "succeeded"; });
  json run = s.admin("GET", "/api/v1/allocations").body["items"][0];
  const std::string node = run["placement"][0]["node"];
  const int64_t gpu = run["placement"][0]["gpus"][0];
  // The node's supplier records a benchmark of that card at half the floor, from before the run.
  const std::string supplier = make_user_token(s, "dc-ops", "supplier", "", "dc");
  json bench = {{"kind", "fp16_tflops"}, {"node", node}, {"gpu", gpu}, {"at", "2020-01-01T00:00:00Z"}, {"fp16_tflops", "450"}};
  Resp made = s.req("POST", "/api/v1/measurements", supplier, bench);
  ASSERT_EQ(made.status, 201) << made.describe();
  EXPECT_EQ(made.body["fp16_tflops"], "450");
  const std::string member = make_user_token(s, "acme-dev", "tenant_member", "acme");
  EXPECT_EQ(s.req("POST", "/api/v1/measurements", member, bench).status, 403) << "tenant members file nothing";
  bench["gpu"] = 99;
  EXPECT_EQ(s.admin("POST", "/api/v1/measurements", bench).error_fields(), std::vector<std::string>{"gpu"});
  bench["gpu"] = gpu;
  bench["from"] = "2020-01-01T00:00:00Z";
  EXPECT_EQ(s.admin("POST", "/api/v1/measurements", bench).error_fields(), std::vector<std::string>{"from"});

  // The card's whole fee (the on-demand time; the contract here has no commitment) is refunded at
  // (900 - 450) / 900 = 50%, exactly to the micro-unit.
  json inv = s.admin("GET", "/api/v1/invoices?tenant=acme&month=" + this_month()).body;
  std::string fee, base, credit;
  for (const auto& l : inv["sections"][0]["lines"]) {
    if (l["allocation"] == run["id"] && l["rule"] == "on_demand") fee = l["amount_exact"];
    if (l["rule"] == "sla_tflops") base = l["quantity"], credit = l["amount_exact"];
  }
  ASSERT_FALSE(credit.empty()) << inv.dump();
  EXPECT_EQ(base, fee);
  for (const auto& l : inv["sections"][0]["lines"])
    if (l["rule"] == "sla_tflops") {
      EXPECT_EQ(l["measurements"], json::array({made.body["id"]})) << "the credit names its measurement";
    }
  auto micros = [](const std::string& a) { return static_cast<int64_t>(std::llround(std::stod(a) * 1e6)); };
  EXPECT_LE(std::llabs(2 * micros(credit) + micros(fee)), 1) << credit << " for a fee of " << fee;
  // The contract keeps the floor it was signed with (its clauses were copied from the template):
  // the supplier lowering the offer's floor afterwards reaches new contracts only, and a PUT of
  // the contract without clauses keeps its own.
  json offer = s.admin("GET", "/api/v1/offers/h100").body;
  offer["contract_template"]["min_fp16_tflops"] = "400";
  expect_2xx(s.req("PUT", "/api/v1/offers/h100", supplier, offer), "a lower floor on the offer");
  expect_2xx(s.admin("PUT", "/api/v1/contracts/acme-dc", contract), "the contract, without clauses");
  EXPECT_EQ(s.admin("GET", "/api/v1/contracts/acme-dc").body["clauses"]["min_fp16_tflops"], "900");
  EXPECT_EQ(acme_lines(s, "sla_tflops").size(), 1u) << "the signed floor still credits the slow card";
  contract["name"] = "acme-dc-later";
  EXPECT_EQ(
      expect_2xx(s.admin("POST", "/api/v1/contracts", contract), "a later contract").body["clauses"]["min_fp16_tflops"],
      "400");
  expect_2xx(s.admin("DELETE", "/api/v1/contracts/acme-dc-later"), "the later contract");

  // Measurements are append-only: the supplier it penalises can neither rewrite nor withdraw it.
  const std::string mid = made.body["id"];
  EXPECT_EQ(made.body["method"], "manual");
  EXPECT_FALSE(made.body["recorded_by"].get<std::string>().empty()) << made.body.dump();
  bench.erase("from");
  bench["fp16_tflops"] = "950";
  EXPECT_EQ(s.req("PUT", "/api/v1/measurements/" + mid, supplier, bench).status, 405);
  EXPECT_EQ(s.req("DELETE", "/api/v1/measurements/" + mid, supplier).status, 405);
  // A correction is a new record naming the old one (same kind, same node, once), with its evidence.
  json wrong_kind = {{"kind", "incident"}, {"node", node}, {"from", "2020-01-01T00:00:00Z"}, {"to", "2020-01-01T01:00:00Z"},
                     {"note", "x"}, {"corrects", mid}};
  EXPECT_EQ(s.req("POST", "/api/v1/measurements", supplier, wrong_kind).error_fields(), std::vector<std::string>{"corrects"});
  bench["corrects"] = mid;
  bench["method"] = "acceptance";
  bench["evidence"] = "gemm fp16 8192^3: 950.2 TFLOPS";
  Resp fixed = s.req("POST", "/api/v1/measurements", supplier, bench);
  ASSERT_EQ(fixed.status, 201) << fixed.describe();
  EXPECT_EQ(fixed.body["evidence"], "gemm fp16 8192^3: 950.2 TFLOPS");
  EXPECT_EQ(s.req("POST", "/api/v1/measurements", supplier, bench).error_fields(), std::vector<std::string>{"corrects"})
      << "corrected once: a second correction corrects the correction";
  // The correction holds: the card now meets the floor, and no credit is left.
  auto tflops_credits = [&] {
    int n = 0;
    const json inv = s.admin("GET", "/api/v1/invoices?tenant=acme&month=" + this_month()).body;
    for (const auto& l : inv["sections"][0]["lines"]) n += l["rule"] == "sla_tflops";
    return n;
  };
  EXPECT_EQ(tflops_credits(), 0);

  // What the supplier did not type in itself — here an operator's later benchmark — it cannot
  // correct away: its correction waits, disputed, for an operator (the supplier cannot accept it),
  // and the credit stands meanwhile. A correction names the same card.
  json low = {
      {"kind", "fp16_tflops"}, {"node", node}, {"gpu", gpu}, {"at", "2020-01-02T00:00:00Z"}, {"fp16_tflops", "450"}};
  Resp measured = s.admin("POST", "/api/v1/measurements", low);
  ASSERT_EQ(measured.status, 201) << measured.describe();
  EXPECT_EQ(tflops_credits(), 1);
  json contest = low;
  contest["fp16_tflops"] = "950";
  contest["corrects"] = measured.body["id"];
  contest["gpu"] = gpu + 1;
  EXPECT_EQ(s.req("POST", "/api/v1/measurements", supplier, contest).error_fields(),
            std::vector<std::string>{"corrects"})
      << "a correction of another card";
  contest["gpu"] = gpu;
  Resp contested = s.req("POST", "/api/v1/measurements", supplier, contest);
  ASSERT_EQ(contested.status, 201) << contested.describe();
  EXPECT_EQ(contested.body["status"], "disputed");
  EXPECT_EQ(tflops_credits(), 1) << "a contested measurement still counts";
  const std::string cid = contested.body["id"];
  EXPECT_EQ(s.req("POST", "/api/v1/measurements/" + cid + "/accept", supplier, json::object()).status, 403);
  Resp judged = s.admin("POST", "/api/v1/measurements/" + cid + "/accept", json{{"note", "re-run on site: 950"}});
  ASSERT_EQ(judged.status, 200) << judged.describe();
  EXPECT_EQ(tflops_credits(), 0) << "the operator's acceptance makes the correction hold";
}

// A tenant's admin files a dispute about a card its job ran on: nothing changes until the node's
// supplier accepts it; then the credit appears and names the dispute. A rejected dispute never counts.
TEST(Billing, ATenantsDisputeCountsOnlyOnceTheSupplierAcceptsIt) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0",
                   "--acceptance-count-simulated"});
  world(s);
  json contract = contract_doc();
  contract["commitments"] = json::array();
  expect_2xx(s.admin("POST", "/api/v1/contracts", contract), "contract");
  const std::string id = run_job(s, "slow-card", 1, 1);
  wait_for(s, "/api/v1/jobs/" + id, [](const json& j) { return j["status"]["state"] == "succeeded"; });
  json run = s.admin("GET", "/api/v1/allocations").body["items"][0];
  const std::string node = run["placement"][0]["node"];
  const std::string other = node == "n1" ? "n2" : "n1";
  const int64_t gpu = run["placement"][0]["gpus"][0];
  const std::string tenant = make_user_token(s, "acme-admin", "tenant_admin", "acme");
  const std::string supplier = make_user_token(s, "dc-ops", "supplier", "", "dc");
  auto credits = [&] {
    json inv = s.admin("GET", "/api/v1/invoices?tenant=acme&month=" + this_month()).body;
    std::vector<json> out;
    for (const auto& sec : inv["sections"])
      for (const auto& l : sec["lines"])
        if (l["kind"] == "credit") out.push_back(l);
    return out;
  };
  json bench = {{"kind", "fp16_tflops"}, {"node", node}, {"gpu", gpu}, {"at", "2020-01-01T00:00:00Z"},
                {"fp16_tflops", "450"}, {"method", "manual"}, {"evidence", "gemm fp16 8192^3: 450.0 TFLOPS"}};
  json on_other = bench;
  on_other["node"] = other;
  EXPECT_EQ(s.req("POST", "/api/v1/measurements", tenant, on_other).error_fields(), std::vector<std::string>{"node"})
      << "a dispute is about hardware the tenant rented";
  json noted = bench;
  noted["note"] = "card throttles under load";
  Resp filed = s.req("POST", "/api/v1/measurements", tenant, noted);
  ASSERT_EQ(filed.status, 201) << filed.describe();
  EXPECT_EQ(filed.body["status"], "disputed");
  EXPECT_FALSE(filed.body["tenant_id"].get<std::string>().empty());
  const std::string dispute = filed.body["id"];
  // Who filed it is acme's own: another tenant reads the measurement without its filer or note, the
  // node's supplier with the note it answers, acme and operators whole.
  expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("rival")), "another tenant");
  const std::string rival = make_user_token(s, "rival-viewer", "viewer", "rival");
  for (const json& seen : {s.req("GET", "/api/v1/measurements/" + dispute, rival).body,
                           s.req("GET", "/api/v1/measurements?kind=fp16_tflops", rival).body["items"][0]}) {
    EXPECT_EQ(seen["id"], dispute) << seen.dump();
    EXPECT_EQ(seen["status"], "disputed");
    EXPECT_FALSE(seen.contains("tenant_id") || seen.contains("recorded_by") || seen.contains("note")) << seen.dump();
  }
  EXPECT_EQ(s.req("GET", "/api/v1/measurements?tenant=acme", rival).status, 404);
  json by_supplier = s.req("GET", "/api/v1/measurements/" + dispute, supplier).body;
  EXPECT_EQ(by_supplier["note"], "card throttles under load") << by_supplier.dump();
  EXPECT_FALSE(by_supplier.contains("tenant_id") || by_supplier.contains("recorded_by")) << by_supplier.dump();
  for (const std::string& whole : {tenant, s.admin_token()})
    EXPECT_EQ(s.req("GET", "/api/v1/measurements/" + dispute, whole).body["tenant_id"], filed.body["tenant_id"]);
  EXPECT_TRUE(credits().empty()) << "a pending dispute credits nothing";

  EXPECT_EQ(s.req("POST", "/api/v1/measurements/" + dispute + "/accept", tenant, json::object()).status, 403);
  Resp accepted = s.req("POST", "/api/v1/measurements/" + dispute + "/accept", supplier, json{{"note", "reproduced"}});
  ASSERT_EQ(accepted.status, 200) << accepted.describe();
  EXPECT_EQ(accepted.body["status"], "accepted");
  EXPECT_FALSE(accepted.body.contains("tenant_id")) << "the supplier's answer hides the filer too";
  EXPECT_EQ(accepted.body["resolution_note"], "reproduced");
  EXPECT_EQ(s.req("POST", "/api/v1/measurements/" + dispute + "/reject", supplier, json{{"note", "x"}}).status, 409);
  auto after = credits();
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0]["rule"], "sla_tflops");
  EXPECT_EQ(after[0]["measurements"], json::array({dispute}));

  // A second dispute, rejected (a note is required): the invoice stays as it was.
  bench["at"] = "2020-02-01T00:00:00Z";
  bench["fp16_tflops"] = "90";
  const std::string second = expect_2xx(s.req("POST", "/api/v1/measurements", tenant, bench), "dispute").body["id"];
  EXPECT_EQ(s.req("POST", "/api/v1/measurements/" + second + "/reject", supplier, json::object()).error_fields(),
            std::vector<std::string>{"note"});
  EXPECT_EQ(s.req("POST", "/api/v1/measurements/" + second + "/reject", supplier, json{{"note", "not reproduced"}}).body["status"],
            "rejected");
  EXPECT_EQ(credits(), after);
  EXPECT_EQ(s.req("GET", "/api/v1/measurements?tenant=acme", tenant).body["items"].size(), 2u);

  // At most 100 disputes wait at once (one filed and copied 99 times here); the next is refused.
  bench["at"] = "2020-03-01T00:00:00Z";
  const std::string third = expect_2xx(s.req("POST", "/api/v1/measurements", tenant, bench), "dispute").body["id"];
  edit_database(s,
                "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 99) "
                "INSERT INTO objects (kind, id, name, tenant_id, supplier_id, project_id, state, region, gpu_model, "
                "created_at, updated_at, version, body) SELECT kind, id || '-' || x, name, tenant_id, supplier_id, "
                "project_id, state, region, gpu_model, created_at, updated_at, version, body FROM objects, n "
                "WHERE kind = 'measurements' AND id = '" +
                    third + "'",
                99);
  bench["at"] = "2020-04-01T00:00:00Z";
  Resp over = s.req("POST", "/api/v1/measurements", tenant, bench);
  EXPECT_EQ(over.status, 422) << over.describe();
  EXPECT_EQ(over.error_fields(), std::vector<std::string>{"node"}) << over.describe();
  EXPECT_EQ(s.req("POST", "/api/v1/measurements/" + third + "/reject", supplier, json{{"note", "no"}}).status, 200);
  const std::string last =
      expect_2xx(s.req("POST", "/api/v1/measurements", tenant, bench), "a dispute once one was resolved").body["id"];

  // An acceptance run the tenant's admin records is disputes too, two here (a simulated card each):
  // within the same 100, or refused naming the report with nothing stored.
  const json report = run_accept(s.dir(), node, s.admin("GET", "/api/v1/nodes/" + node).body, "--stages gpu");
  Resp full = s.req("POST", "/api/v1/acceptance-runs", tenant, json{{"report", report}});
  EXPECT_EQ(full.status, 422) << full.describe();
  EXPECT_EQ(full.error_fields(), std::vector<std::string>{"report"}) << full.describe();
  EXPECT_TRUE(s.admin("GET", "/api/v1/acceptance-runs").body["items"].empty());
  // One slot free is not enough for two.
  EXPECT_EQ(s.req("POST", "/api/v1/measurements/" + last + "/reject", supplier, json{{"note", "no"}}).status, 200);
  EXPECT_EQ(s.req("POST", "/api/v1/acceptance-runs", tenant, json{{"report", report}}).status, 422);
  edit_database(s, "DELETE FROM objects WHERE kind = 'measurements' AND id = '" + third + "-1'", 1);
  Resp room = s.req("POST", "/api/v1/acceptance-runs", tenant, json{{"report", report}});
  ASSERT_EQ(room.status, 201) << room.describe();
  EXPECT_EQ(room.body["status"], "disputed");
  EXPECT_EQ(room.body["measurements"].size(), 2u) << room.describe();
}

TEST(Billing, ABudgetBreachAlertsAWebhookAndHoldsNewJobsUntilTheBudgetIsRaised) {
  HookSink sink;
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "1"});
  world(s);
  Resp hook = s.admin("POST", "/api/v1/webhooks",
                      json{{"name", "ops"}, {"type", "generic"}, {"url", sink.url()}, {"secret", "s3cret"}});
  ASSERT_EQ(hook.status, 201) << hook.describe();
  EXPECT_EQ(hook.body["secret_set"], true);
  EXPECT_FALSE(hook.body.contains("secret"));
  EXPECT_EQ(s.admin("POST", "/api/v1/webhooks", json{{"name", "x"}, {"type", "slack"}, {"url", sink.url()}}).error_fields(),
            std::vector<std::string>{"type"});
  const std::string member = make_user_token(s, "acme-dev", "tenant_member", "acme");
  EXPECT_EQ(s.req("GET", "/api/v1/webhooks", member).status, 403);

  json q = s.admin("GET", "/api/v1/projects/vision/quota").body;
  q["monthly_budget"] = "0.00";
  q["budget_action"] = "hold";
  expect_2xx(s.admin("PUT", "/api/v1/projects/vision/quota", q), "budget");
  json alerts = wait_for(s, "/api/v1/alerts?state=active", [](const json& j) { return !j["items"].empty(); });
  ASSERT_FALSE(alerts["items"].empty());
  const json& a = alerts["items"][0];
  EXPECT_EQ(a["kind"], "budget_breach");
  EXPECT_EQ(a["project"], "vision");
  EXPECT_EQ(a["hold_submissions"], true);
  EXPECT_FALSE(a["message_zh"].get<std::string>().empty());

  const std::string id = run_job(s, "held", 1, 60);
  json held = wait_for(s, "/api/v1/jobs/" + id, [](const json& j) {
    return j["status"]["reason"].get<std::string>().rfind("budget:", 0) == 0;
  });
  EXPECT_EQ(held["status"]["state"], "pending");
  for (int i = 0; i < 1500 && sink.bodies().empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_FALSE(sink.bodies().empty());
  json delivered = json::parse(sink.bodies()[0]);
  EXPECT_EQ(delivered["kind"], "budget_breach");
  EXPECT_EQ(sink.signatures()[0].rfind("sha256=", 0), 0u);
  // An alert recorded and never delivered (the server stopped between the two) is delivered by a
  // later pass once it is 5 minutes old.
  const size_t before = sink.bodies().size();
  edit_database(
      s,
      "UPDATE objects SET body = json_set(body, '$.delivery_pending', json('true')), created_at = created_at - 600000 "
      "WHERE kind = 'alerts' AND id = '" +
          a["id"].get<std::string>() + "'");
  for (int i = 0; i < 1500 && sink.bodies().size() == before; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(sink.bodies().size(), before + 1);
  const json redelivered = wait_for(s, "/api/v1/alerts/" + a["id"].get<std::string>(),
                                    [](const json& j) { return !j.contains("delivery_pending"); });
  EXPECT_GE(redelivered["deliveries"].size(), 2u) << redelivered.dump();

  // A tenant member cannot lift; raising the budget resolves the alert and the job runs.
  EXPECT_EQ(s.req("POST", "/api/v1/alerts/" + a["id"].get<std::string>() + "/lift", member).status, 403);
  q["monthly_budget"] = "1000000.00";
  expect_2xx(s.admin("PUT", "/api/v1/projects/vision/quota", q), "budget raised");
  wait_for(s, "/api/v1/jobs/" + id, [](const json& j) { return j["status"]["state"] == "running"; });
  json after = s.admin("GET", "/api/v1/alerts/" + a["id"].get<std::string>()).body;
  EXPECT_EQ(after["state"], "resolved") << after.dump();
}

TEST(Billing, ReconciliationComparesMeteredWithAllocatedGpuSeconds) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0"});
  world(s);
  const std::string metered = run_job(s, "metered", 1, 2);
  const std::string silent = run_job(s, "silent", 1, 2);
  for (const auto& id : {metered, silent})
    wait_for(s, "/api/v1/jobs/" + id, [](const json& j) { return j["status"]["state"] == "succeeded"; });
  // One utilization sample at the start of the metered run's GPU covers the whole (short) run.
  json allocs = s.admin("GET", "/api/v1/allocations").body.at("items");
  ASSERT_EQ(allocs.size(), 2u);
  const json& run = allocs[0]["job_id"] == metered ? allocs[0] : allocs[1];
  json batch = {{"idempotency_key", "test-1"},
                {"gpu_samples",
                 {{{"at", run["running_at"]},
                   {"node", run["placement"][0]["node"]},
                   {"gpu", run["placement"][0]["gpus"][0]},
                   {"utilization_pct", 97}}}}};
  Resp in = s.admin("POST", "/api/v1/usage", batch);
  ASSERT_EQ(in.status, 201) << in.describe();
  Resp rec = s.admin("GET", "/api/v1/reports/reconciliation?tenant=acme&month=" + this_month());
  ASSERT_EQ(rec.status, 200) << rec.describe();
  json rep = rec.body;
  ASSERT_EQ(rep["rows"].size(), 2u) << rep.dump();
  for (const auto& row : rep["rows"]) {
    if (row["job_id"] == metered) {
      EXPECT_EQ(row["metered_gpu_seconds"], row["allocated_gpu_seconds"]) << row.dump();
      EXPECT_FALSE(row["flagged"].get<bool>());
    } else {
      EXPECT_EQ(row["metered_gpu_seconds"], "0");
      EXPECT_TRUE(row["flagged"].get<bool>());
      EXPECT_EQ(row["note_message"]["code"], "reconciliation.no_samples") << row.dump();
    }
  }
  // The note in the reader's language.
  json zh = s.admin("GET", "/api/v1/reports/reconciliation?lang=zh&tenant=acme&month=" + this_month()).body;
  for (const auto& row : zh["rows"])
    if (row["job_id"] != metered) {
      EXPECT_EQ(row["note"].get<std::string>().rfind("该运行的 GPU 没有利用率样本", 0), 0u) << row.dump();
    }
}

TEST(Billing, ATenantsOwnCardThresholdDecidesACardAlert) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "1"});
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", "n1")), "node");
  expect_2xx(s.admin("POST", "/api/v1/offers", offer_doc("dc", "h100")), "offer");  // CNY 17.50/h, 60 s minimum
  json tenant = tenant_doc("acme");
  tenant["currency"] = "CNY";
  expect_2xx(s.admin("POST", "/api/v1/tenants", tenant), "tenant");
  expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("acme", "vision")), "project");

  // Thresholds are validated by path; only an operator changes a tenant (its admin may not).
  tenant = s.admin("GET", "/api/v1/tenants/acme").body;
  EXPECT_FALSE(tenant.contains("cost_firewall"));
  tenant["cost_firewall"] = {{"card_daily_cost", "0.10"}, {"foo", 1}};
  EXPECT_EQ(s.admin("PUT", "/api/v1/tenants/acme", tenant).error_fields(), std::vector<std::string>{"cost_firewall.foo"});
  tenant["cost_firewall"].erase("foo");
  const std::string admin = make_user_token(s, "acme-admin", "tenant_admin", "acme");
  EXPECT_EQ(s.req("PUT", "/api/v1/tenants/acme", admin, tenant).status, 403);
  Resp put = s.admin("PUT", "/api/v1/tenants/acme", tenant);
  ASSERT_EQ(put.status, 200) << put.describe();
  EXPECT_EQ(put.body["cost_firewall"], json({{"card_daily_cost", "0.10"}}));

  // One GPU for the 60 s minimum: 0.29 CNY, far under the default 100.00, over the tenant's 0.10.
  const std::string id = run_job(s, "short", 1, 1);
  wait_for(s, "/api/v1/jobs/" + id, [](const json& j) { return j["status"]["state"] == "succeeded"; });
  json alerts = wait_for(s, "/api/v1/alerts?state=active", [](const json& j) {
    for (const auto& a : j["items"])
      if (a["kind"] == "card_daily_cost") return true;
    return false;
  });
  json card;
  for (const auto& a : alerts["items"])
    if (a["kind"] == "card_daily_cost") card = a;
  ASSERT_TRUE(card.is_object()) << alerts.dump();
  EXPECT_EQ(card["threshold"], "0.10");
  EXPECT_EQ(card["unit"], "CNY");
  EXPECT_EQ(card["project"], "vision");
  EXPECT_GT(cents(card["measured"]), 10) << card.dump();
  EXPECT_LT(cents(card["measured"]), 10000) << card.dump();  // the default would not have fired
}

// A run (allocation) is read through its codec everywhere: damaged, it fails the invoice and the
// tenant's reconciliation by name instead of leaving its GPU time out.
TEST(Billing, ACorruptStoredRunFailsTheInvoiceAndTheReconciliation) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0"});
  world(s);
  const std::string id = run_job(s, "short", 2, 1);
  wait_for(s, "/api/v1/jobs/" + id, [](const json& j) { return j["status"]["state"] == "succeeded"; });
  const Resp runs = s.admin("GET", "/api/v1/allocations?tenant=acme");
  ASSERT_EQ(runs.status, 200) << runs.describe();
  ASSERT_EQ(runs.body["items"].size(), 1u) << runs.describe();
  const std::string run = runs.body["items"][0]["id"];
  const std::string invoice = "/api/v1/invoices?tenant=acme&month=" + this_month();
  ASSERT_EQ(s.admin("GET", invoice).status, 200);

  edit_database(s, "UPDATE objects SET body = json_set(body, '$.placement[0].gpus[0]', 'zero') WHERE id = '" + run + "'");
  const Resp r = s.admin("GET", invoice);
  EXPECT_EQ(r.status, 500) << r.describe();
  const std::string detail = r.body.value("detail", "");
  EXPECT_NE(detail.find("stored allocations " + run + " no longer decodes: placement[0].gpus"), std::string::npos) << detail;
  EXPECT_EQ(r.error_fields(), std::vector<std::string>{"allocations/" + run}) << r.describe();
  const Resp rec = s.admin("GET", "/api/v1/reports/reconciliation?tenant=acme&month=" + this_month());
  EXPECT_EQ(rec.status, 500) << rec.describe();
  EXPECT_NE(rec.body.value("detail", "").find("cannot be reconciled without it"), std::string::npos) << rec.describe();
  json ready = s.req("GET", "/readyz", "").body;
  EXPECT_EQ(ready["checks"]["records"], "1 undecodable") << ready.dump();

  edit_database(s, "UPDATE objects SET body = json_set(body, '$.placement[0].gpus[0]', 0) WHERE id = '" + run + "'");
  EXPECT_EQ(s.admin("GET", invoice).status, 200);
  ready = s.req("GET", "/readyz", "").body;
  EXPECT_EQ(ready["checks"]["records"], "ok") << ready.dump();
}

}  // namespace
}  // namespace gpurent::testing

namespace gpurent::testing {
namespace {

// A stored contract that no longer decodes fails the invoice loudly (a 500 problem naming the
// record, one log line, /readyz and /metrics) instead of a smaller invoice without its section;
// once the record is fixed the invoice is whole again and the report clears.
TEST(Billing, ACorruptStoredContractFailsTheInvoiceInsteadOfShrinkingIt) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0"});
  world(s);
  const std::string contract = expect_2xx(s.admin("POST", "/api/v1/contracts", contract_doc()), "contract").body.at("id");
  const std::string id = run_job(s, "short", 2, 1);
  wait_for(s, "/api/v1/jobs/" + id, [](const json& j) { return j["status"]["state"] == "succeeded"; });
  const std::string invoice = "/api/v1/invoices?tenant=acme&month=" + this_month();
  const Resp whole = s.admin("GET", invoice);
  ASSERT_EQ(whole.status, 200) << whole.describe();
  ASSERT_EQ(whole.body["sections"].size(), 1u);
  ASSERT_EQ(whole.body["sections"][0]["contract"], "acme-dc");

  edit_database(s, "UPDATE objects SET body = json_set(body, '$.currency', 'XYZ') WHERE kind = 'contracts' AND id = '" +
                       contract + "'");
  for (int i = 0; i < 2; ++i) {  // twice: logged once, counted twice
    const Resp r = s.admin("GET", invoice);
    EXPECT_EQ(r.status, 500) << r.describe();
    EXPECT_EQ(r.content_type, "application/problem+json");
    const std::string detail = r.body.value("detail", "");
    EXPECT_NE(detail.find("stored contracts " + contract + " (acme-dc) no longer decodes"), std::string::npos) << detail;
    EXPECT_NE(detail.find("currency"), std::string::npos) << detail;
    EXPECT_NE(detail.find("cannot be rated without it"), std::string::npos) << detail;
    EXPECT_EQ(r.error_fields(), std::vector<std::string>{"contracts/" + contract}) << r.describe();
  }
  // The tenant's own view fails the same way: never a smaller invoice.
  const std::string own = make_user_token(s, "acme-admin", "tenant_admin", "acme");
  EXPECT_EQ(s.req("GET", "/api/v1/invoices?month=" + this_month(), own).status, 500);
  const std::string log = s.log();
  size_t lines = 0;
  for (size_t at = log.find("no longer decodes"); at != std::string::npos; at = log.find("no longer decodes", at + 1))
    ++lines;
  EXPECT_EQ(lines, 1u) << log;
  EXPECT_EQ(s.req("GET", "/readyz", "").body["checks"]["records"], "1 undecodable");
  json ready = s.req("GET", "/readyz", s.admin_token()).body;  // which ones: an operator's to read
  EXPECT_EQ(ready["status"], "ready");
  EXPECT_EQ(ready["checks"]["records"], "1 undecodable") << ready.dump();
  ASSERT_EQ(ready["undecodable_records"].size(), 1u) << ready.dump();
  EXPECT_EQ(ready["undecodable_records"][0]["kind"], "contracts");
  EXPECT_EQ(ready["undecodable_records"][0]["id"], contract);
  // Three reads here, and the scheduler's: it reads contracts every pass (terms of placement).
  EXPECT_GE(ready["undecodable_records"][0]["seen"].get<int64_t>(), 3);
  EXPECT_NE(s.req("GET", "/metrics", "").text.find("gpurent_records_undecodable{kind=\"contracts\"} 1"),
            std::string::npos);

  edit_database(s, "UPDATE objects SET body = json_set(body, '$.currency', 'CNY') WHERE kind = 'contracts' AND id = '" +
                       contract + "'");
  const Resp again = s.admin("GET", invoice);
  ASSERT_EQ(again.status, 200) << again.describe();
  ASSERT_EQ(again.body["sections"].size(), 1u);  // the commitment accrues to now, so compare the lines' rules
  EXPECT_EQ(again.body["sections"][0]["contract"], "acme-dc");
  std::multiset<std::string> rules_before, rules_after;
  for (const auto& l : whole.body["sections"][0]["lines"]) rules_before.insert(l["rule"].get<std::string>());
  for (const auto& l : again.body["sections"][0]["lines"]) rules_after.insert(l["rule"].get<std::string>());
  EXPECT_EQ(rules_after, rules_before);
  ready = s.req("GET", "/readyz", s.admin_token()).body;
  EXPECT_EQ(ready["checks"]["records"], "ok") << ready.dump();
  EXPECT_FALSE(ready.contains("undecodable_records"));
}

}  // namespace
}  // namespace gpurent::testing

namespace gpurent::testing {
namespace {

// Supplier dc with node n1 and `offer`; tenant acme (USD) with project vision.
void one_node_world(const ServerProcess& s, const json& offer) {
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", "n1")), "node");
  expect_2xx(s.admin("POST", "/api/v1/offers", offer), "offer");
  // In the offer's currency: the scheduler uses offers in a tenant's own currency only.
  expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme", offer.value("currency", "USD"))), "tenant");
  expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("acme", "vision")), "project");
}

// Submits a job to project vision (one_node_world) expected to run `seconds`, and waits until it runs.
std::string running_job(const ServerProcess& s, const std::string& name, int64_t seconds) {
  json job = job_doc("vision", name);
  job["expected_duration_seconds"] = seconds;
  const std::string id = expect_2xx(s.admin("POST", "/api/v1/jobs", job), name).body["id"];
  wait_for(s, "/api/v1/jobs/" + id, [](const json& j) { return j["status"]["state"] == "running"; });
  return id;
}

// A CPU-only job (无卡模式) on an offer that sells CPU-only work gets an allocation of the cores and
// memory its workers asked for, and its invoice bills them per core-hour and GiB-hour, exactly.
TEST(Billing, CpuOnlyJobsAreBilledByTheCoresAndMemoryTheyAskedFor) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0"});
  json o = offer_doc("dc", "h100");  // CNY 17.50 per GPU-hour
  o["prices"]["cpu_core_hour"] = "0.36";
  o["prices"]["memory_gib_hour"] = "0.072";
  one_node_world(s, o);
  json j = job_doc("vision", "setup-env");
  j["gpus_per_worker"] = 0;
  j["workers"] = 2;
  j["resources"] = {{"cpu_cores", 4}, {"memory_gib", 10}};
  j.erase("constraints");
  j.erase("billing");
  j["expected_duration_seconds"] = 2;
  const std::string id = expect_2xx(s.admin("POST", "/api/v1/jobs", j), "cpu-only job").body.at("id");
  wait_for(s, "/api/v1/jobs/" + id, [](const json& x) { return x["status"]["state"] == "succeeded"; });

  json allocs = s.admin("GET", "/api/v1/allocations").body.at("items");
  ASSERT_EQ(allocs.size(), 1u) << allocs.dump();
  const json& run = allocs[0];
  EXPECT_EQ(run["gpu_milli"], 0);
  EXPECT_EQ(run["cpu_cores"], 8) << "4 cores × 2 workers";
  EXPECT_EQ(run["memory_gib"], 20);
  const int64_t ms = *parse_rfc3339(run["ended_at"].get<std::string>(), "t") - *parse_rfc3339(run["ready_at"].get<std::string>(), "t");
  json inv = s.admin("GET", "/api/v1/invoices?tenant=acme&month=" + this_month()).body;
  ASSERT_EQ(inv["sections"].size(), 1u) << inv.dump();
  std::map<std::string, json> by_rule;
  for (const auto& l : inv["sections"][0]["lines"]) by_rule[l["rule"]] = l;
  ASSERT_TRUE(by_rule.count("cpu_time") && by_rule.count("memory_time")) << inv.dump();
  EXPECT_EQ(by_rule.size(), 2u) << "no GPU time, no minimum increment: " << inv.dump();
  // 8 cores × ms × 0.36 per hour = 0.8 µ per ms; 20 GiB × ms × 0.072 per hour = 0.4 µ per ms, rounded
  // to the micro-unit (tenths never end in 5 here: no tie to break).
  auto micros_of = [](const json& amount) { return *Money::parse(amount.get<std::string>(), Currency::kCNY); };
  EXPECT_EQ(micros_of(by_rule["cpu_time"]["amount_exact"]).micros(), (8 * ms + 5) / 10);
  EXPECT_EQ(micros_of(by_rule["memory_time"]["amount_exact"]).micros(), (4 * ms + 5) / 10);
  EXPECT_EQ(by_rule["cpu_time"]["unit"], "core-second");
  EXPECT_EQ(by_rule["memory_time"]["price_unit"], "GiB-hour");
}

// A job that reports readiness (readiness: a health check or a heartbeat) is ready when the executor
// sees it so — the simulated executor passes its health check --cold-start-ms after it started
// running — and an offer that bills from `running` bills the wait until then as cold start.
TEST(Billing, ReadinessReportedByTheExecutorSplitsColdStartFromUse) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "600", "--firewall-interval-s", "0"});
  json o = offer_doc("dc", "h100");
  o["fees"]["billing_starts"] = "running";
  one_node_world(s, o);
  json j = job_doc("vision", "loads-a-model");
  j["readiness"] = {{"command", {"curl", "-sf", "http://127.0.0.1:8000/health"}}};
  j["expected_duration_seconds"] = 2;
  const std::string id = expect_2xx(s.admin("POST", "/api/v1/jobs", j), "job").body.at("id");
  wait_for(s, "/api/v1/jobs/" + id, [](const json& x) { return x["status"]["state"] == "succeeded"; });

  json allocs = s.admin("GET", "/api/v1/allocations").body.at("items");
  ASSERT_EQ(allocs.size(), 1u) << allocs.dump();
  const json run = allocs[0];
  ASSERT_TRUE(run["ready_at"].is_string()) << run.dump();
  auto ms = [](const json& t) { return *parse_rfc3339(t.get<std::string>(), "t"); };
  EXPECT_GE(ms(run["ready_at"]) - ms(run["running_at"]), 600) << run.dump();
  EXPECT_LT(ms(run["ready_at"]), ms(run["ended_at"])) << run.dump();

  json inv = s.admin("GET", "/api/v1/invoices?tenant=acme&month=" + this_month()).body;
  ASSERT_EQ(inv["sections"].size(), 1u) << inv.dump();
  std::map<std::string, json> by_rule;
  for (const auto& l : inv["sections"][0]["lines"]) by_rule[l["rule"]] = l;
  ASSERT_TRUE(by_rule.count("cold_start") && by_rule.count("on_demand")) << inv.dump();
  EXPECT_EQ(by_rule["cold_start"]["from"], run["running_at"]) << inv.dump();
  EXPECT_EQ(by_rule["cold_start"]["to"], run["ready_at"]) << inv.dump();
  EXPECT_EQ(by_rule["on_demand"]["from"], run["ready_at"]) << inv.dump();
}

// Inference jobs that are model endpoints (billing.endpoint) are billed by use — per token they
// report, or per provisioned QPS while they run — at their offer's served-model prices, and their
// GPU time is not billed.
TEST(Billing, ModelEndpointsAreBilledPerTokenOrPerQpsNotByGpuTime) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0"});
  json offer = offer_doc("dc", "h100");  // qwen per token, deepseek per QPS; and a reranker per request
  offer["served_models"].push_back({{"model", "bge-reranker-v2-m3"}, {"per_million_requests", "0.80"}});
  one_node_world(s, offer);
  auto endpoint_job = [&](const std::string& name, json endpoint) {
    json j = job_doc("vision", name);
    j["kind"] = "inference";
    j["replicas"] = {{"min", 1}, {"max", 1}};
    j["billing"] = {{"mode", "on_demand"}, {"endpoint", std::move(endpoint)}};
    return j;
  };
  // Refused: an endpoint that is not an inference job, QPS without a number, spot.
  json training = job_doc("vision", "t");
  training["billing"]["endpoint"] = {{"model", "qwen2.5-72b-instruct"}, {"per", "token"}};
  EXPECT_EQ(s.admin("POST", "/api/v1/jobs", training).error_fields(), std::vector<std::string>{"billing.endpoint"});
  EXPECT_EQ(s.admin("POST", "/api/v1/jobs", endpoint_job("q", {{"model", "m"}, {"per", "qps"}})).error_fields(),
            std::vector<std::string>{"billing.endpoint.qps"});
  json spot = endpoint_job("sp", {{"model", "m"}, {"per", "token"}});
  spot["billing"]["mode"] = "spot";
  EXPECT_EQ(s.admin("POST", "/api/v1/jobs", spot).error_fields(), std::vector<std::string>{"billing.endpoint"});

  const std::string tok = expect_2xx(s.admin("POST", "/api/v1/jobs", endpoint_job("qwen", {{"model", "qwen2.5-72b-instruct"}, {"per", "token"}})), "qwen").body["id"];
  const std::string qps = expect_2xx(s.admin("POST", "/api/v1/jobs", endpoint_job("r1", {{"model", "deepseek-r1-distill-qwen-32b"}, {"per", "qps"}, {"qps", 2}})), "r1").body["id"];
  const std::string req = expect_2xx(s.admin("POST", "/api/v1/jobs", endpoint_job("rerank", {{"model", "bge-reranker-v2-m3"}, {"per", "request"}})), "rerank").body["id"];
  for (const auto& id : {tok, qps, req})
    wait_for(s, "/api/v1/jobs/" + id, [](const json& j) { return j["status"]["state"] == "running"; });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  // A period that ends after the QPS endpoint started running but before it was ready (a month
  // closing while its model loads): nothing of it to bill, and the invoice is made (it was a 422
  // naming usage.qps[0].to, which would have kept the month from closing).
  {
    json live;
    const Resp allocs = s.admin("GET", "/api/v1/allocations");
    for (const auto& r : allocs.body["items"])
      if (r["job_id"] == qps) live = r;
    ASSERT_TRUE(live.contains("ready_at") && live["ready_at"].is_string()) << live.dump();
    const TimeMs running = *parse_rfc3339(live["running_at"].get<std::string>(), "t");
    // The simulated executor is ready at once: its model load is made ten minutes long here.
    const std::string ready = live["ready_at"];
    auto set_ready = [&](const std::string& at) {
      edit_database(s, "UPDATE objects SET body = json_set(body, '$.ready_at', '" + at + "') WHERE id = '" +
                           live["id"].get<std::string>() + "'");
    };
    set_ready(format_rfc3339(running + 600'000));
    Resp loading = s.admin("GET", "/api/v1/invoices?tenant=acme&from=" + format_rfc3339(running - 3'600'000) +
                                      "&to=" + format_rfc3339(running + 1));
    set_ready(ready);
    ASSERT_EQ(loading.status, 200) << loading.describe();
    for (const auto& sec : loading.body["sections"])
      for (const auto& l : sec["lines"]) EXPECT_NE(l["rule"], "qps_month") << l.dump();
  }
  // qwen's 40 requests are not billed (its sheet prices tokens only); the reranker's 3,750,000 are.
  const std::string at = format_rfc3339(SystemClock().now());
  json batch = {{"idempotency_key", "tokens-1"},
                {"job_samples", {{{"at", at}, {"job", tok}, {"input_tokens", 2'500'000}, {"output_tokens", 1'000'000}, {"requests", 40}},
                                 {{"at", at}, {"job", req}, {"input_tokens", 99}, {"requests", 3'750'000}}}}};
  ASSERT_EQ(s.admin("POST", "/api/v1/usage", batch).status, 201);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  for (const auto& id : {tok, qps, req}) expect_2xx(s.admin("POST", "/api/v1/jobs/" + id + "/cancel"), "cancel");
  wait_for(s, "/api/v1/allocations?state=closed", [](const json& j) { return j["items"].size() == 3; });

  json inv = s.admin("GET", "/api/v1/invoices?tenant=acme&month=" + this_month()).body;
  ASSERT_EQ(inv["sections"].size(), 1u) << inv.dump();
  std::map<std::string, json> by_rule;
  for (const auto& l : inv["sections"][0]["lines"]) by_rule[l["rule"]] = l;
  EXPECT_EQ(by_rule["tokens_input"]["amount"], "10.00") << inv.dump();  // 2.5 × 4.00
  EXPECT_EQ(by_rule["tokens_output"]["amount"], "12.00");              // 1 × 12.00
  ASSERT_TRUE(by_rule.count("qps_month")) << inv.dump();
  EXPECT_EQ(by_rule["requests"]["amount"], "3.00") << inv.dump();  // 3.75 × 0.80, the reranker's tokens not billed
  EXPECT_EQ(by_rule["requests"]["quantity"], "3750000") << inv.dump();
  for (const char* gpu_rule : {"on_demand", "cold_start", "min_increment"}) EXPECT_FALSE(by_rule.count(gpu_rule)) << gpu_rule;
  EXPECT_EQ(by_rule.size(), 4u) << inv.dump();
  // 2 QPS × the run's billed time × 3200.00 per QPS-month of 730 h, exact to the micro-unit.
  json runs = s.admin("GET", "/api/v1/allocations").body["items"];
  json r1;
  for (const auto& r : runs)
    if (r["job_id"] == qps) r1 = r;
  EXPECT_EQ(r1["endpoint"]["per"], "qps");
  const int64_t ms = *parse_rfc3339(r1["ended_at"].get<std::string>(), "t") - *parse_rfc3339(r1["ready_at"].get<std::string>(), "t");
  const __int128 num = static_cast<__int128>(2) * ms * 3'200'000'000, den = static_cast<__int128>(730) * 3'600'000;
  __int128 q = num / den;
  const __int128 rem = num % den;
  if (rem * 2 > den || (rem * 2 == den && q % 2 == 1)) ++q;
  EXPECT_EQ(Money::parse(by_rule["qps_month"]["amount_exact"].get<std::string>(), Currency::kCNY)->micros(),
            static_cast<int64_t>(q));
}


// Usage stamped at a month's first instant — a rolled-up minute is stamped at its start, so every
// run across a month boundary has such a point — belongs to the new month: billed there, and not
// in the month before (before, each month's invoice read it as the other's and neither billed it).
TEST(Billing, UsageAtAMonthsFirstInstantIsBilledInThatMonth) {
  auto at = [](const char* t) {
    return std::vector<std::string>{"--sched-interval-ms", "20", "--cold-start-ms", "0", "--firewall-interval-s", "0",
                                    "--demo-clock", t};
  };
  ServerProcess s(at("2026-11-30T23:00:00Z"));
  one_node_world(s, offer_doc("dc", "h100"));  // egress 0.50 per GB beyond 100 GB a month
  const std::string id = running_job(s, "across", 86400);
  s.set_extra_args(at("2026-12-01T01:00:00Z"));
  s.restart();
  json batch = {{"idempotency_key", "egress-at-midnight"},
                {"job_samples", {{{"at", "2026-12-01T00:00:00Z"}, {"job", id}, {"egress_bytes", 1'200'000'000'000}}}}};
  ASSERT_EQ(s.admin("POST", "/api/v1/usage", batch).status, 201);
  auto egress = [&](const char* month) {
    const Resp inv = s.admin("GET", std::string("/api/v1/invoices?tenant=acme&month=") + month);
    EXPECT_EQ(inv.status, 200) << inv.describe();
    std::string amount;
    for (const auto& sec : inv.body["sections"])
      for (const auto& l : sec["lines"])
        if (l["rule"] == "egress") amount = l["amount"];
    return amount;
  };
  EXPECT_EQ(egress("2026-12"), "550.00") << "(1200 − 100 free) GB × 0.50";
  EXPECT_EQ(egress("2026-11"), "") << "not November's";
}

// A run's last usage sample may be stamped after the run ended, inside the minute it ended in: it
// is the run's, raw as once the roll-up has folded it into that minute (stamped at the minute's
// start, inside the run). A sample in a later minute is not.
TEST(Billing, AReportStampedInTheMinuteARunEndedIsItsRawAsRolledUp) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "0", "--firewall-interval-s", "0"});
  one_node_world(s, offer_doc("dc", "h100"));  // egress 0.50 per GB beyond 100 GB a month
  const std::string id = running_job(s, "short", 3600);
  expect_2xx(s.admin("POST", "/api/v1/jobs/" + id + "/cancel"), "cancel");
  const json closed =
      wait_for(s, "/api/v1/allocations?state=closed", [](const json& j) { return !j["items"].empty(); });
  ASSERT_EQ(closed["items"].size(), 1u) << closed.dump();
  const TimeMs ended = *parse_rfc3339(closed["items"][0]["ended_at"].get<std::string>(), "ended_at");
  const TimeMs minute_end = ended - ended % 60'000 + 60'000;
  if (ended % 60'000 == 59'999) GTEST_SKIP() << "the run ended on a minute's last millisecond";
  json batch = {{"idempotency_key", "after-the-end"},
                {"job_samples",
                 {{{"at", format_rfc3339(ended + 1)}, {"job", id}, {"egress_bytes", 1'200'000'000'000}},
                  {{"at", format_rfc3339(minute_end)}, {"job", id}, {"egress_bytes", 2'000'000'000'000}}}}};
  ASSERT_EQ(s.admin("POST", "/api/v1/usage", batch).status, 201);
  const std::string month = format_rfc3339(ended).substr(0, 7);
  const Resp inv = s.admin("GET", "/api/v1/invoices?tenant=acme&month=" + month);
  ASSERT_EQ(inv.status, 200) << inv.describe();
  std::string amount;
  for (const auto& sec : inv.body["sections"])
    for (const auto& l : sec["lines"])
      if (l["rule"] == "egress") amount = l["amount"];
  EXPECT_EQ(amount, "550.00") << "(1200 − 100 free) GB × 0.50, not the next minute's 2000 GB: " << inv.body.dump();
}

// Egress in a month's last hour, after the last firewall pass in it: the first pass of the next
// month evaluates the month before to its end, so the day's egress still alerts (and freezes).
TEST(Billing, AMonthsLastHoursStillAlertOnTheNextMonthsFirstPass) {
  auto at = [](const char* t, const char* firewall) {
    return std::vector<std::string>{"--sched-interval-ms", "20", "--cold-start-ms", "0", "--firewall-interval-s", firewall,
                                    "--demo-clock", t};
  };
  ServerProcess s(at("2026-11-30T23:00:00Z", "0"));
  one_node_world(s, offer_doc("dc", "h100"));  // egress 0.50 per GB beyond 100 GB a month
  const std::string id = running_job(s, "late-upload", 86400);
  json batch = {{"idempotency_key", "late-egress"},
                {"job_samples", {{{"at", "2026-11-30T23:00:00Z"}, {"job", id}, {"egress_bytes", 1'200'000'000'000}}}}};
  ASSERT_EQ(s.admin("POST", "/api/v1/usage", batch).status, 201);
  s.set_extra_args(at("2026-12-01T00:30:00Z", "1"));
  s.restart();
  const json alerts = wait_for(s, "/api/v1/alerts?state=active", [](const json& j) { return !j["items"].empty(); });
  ASSERT_EQ(alerts["items"].size(), 1u) << alerts.dump();
  EXPECT_EQ(alerts["items"][0]["key"], "egress_daily_cost:vision:2026-11-30") << alerts.dump();
  EXPECT_EQ(alerts["items"][0]["freeze_egress"], true);
}

// An offer's monthly free egress is the tenant's, whichever section bills it: a run at list prices
// before a contract starts and one under the contract after it (rated in two sections) share the
// 100 GB — before, each section gave the whole allowance.
TEST(Billing, AnOffersFreeEgressIsSharedBetweenListPricesAndAContract) {
  auto at = [](const char* t) {
    return std::vector<std::string>{"--sched-interval-ms", "20", "--cold-start-ms", "0", "--firewall-interval-s", "0",
                                    "--demo-clock", t};
  };
  ServerProcess s(at("2026-11-10T00:00:00Z"));
  json offer = offer_doc("dc", "h100");  // egress 0.50 per GB beyond 100 GB a month
  offer["currency"] = "CNY";
  one_node_world(s, offer);
  json contract = {{"name", "acme-dc"}, {"tenant", "acme"}, {"supplier", "dc"}, {"offers", {"h100"}},
                   {"currency", "CNY"}, {"starts_at", "2026-11-10T12:00:00Z"}};
  expect_2xx(s.admin("POST", "/api/v1/contracts", contract), "contract");
  auto egress_run = [&](const char* name, const char* when) {
    json job = job_doc("vision", name);
    job["expected_duration_seconds"] = 600;
    const std::string id = expect_2xx(s.admin("POST", "/api/v1/jobs", job), name).body["id"];
    wait_for(s, "/api/v1/jobs/" + id, [](const json& j) { return j["status"]["state"] == "running"; });
    json batch = {{"idempotency_key", std::string("egress-") + name},
                  {"job_samples", {{{"at", when}, {"job", id}, {"egress_bytes", 100'000'000'000}}}}};
    ASSERT_EQ(s.admin("POST", "/api/v1/usage", batch).status, 201);
  };
  egress_run("before", "2026-11-10T00:00:00Z");  // list prices: the contract has not started
  s.set_extra_args(at("2026-11-10T13:00:00Z"));
  s.restart();
  egress_run("after", "2026-11-10T13:00:00Z");  // under the contract
  s.set_extra_args(at("2026-11-10T14:00:00Z"));  // both runs over (the clock stands still at each start)
  s.restart();
  const json inv = s.admin("GET", "/api/v1/invoices?tenant=acme&month=2026-11").body;
  std::map<std::string, std::string> egress;  // "<section> <rule>" -> quantity
  for (const auto& sec : inv["sections"])
    for (const auto& l : sec["lines"])
      if (l["rule"] == "egress" || l["rule"] == "egress_free")
        egress[sec.value("contract_id", "").empty() ? "list " + l["rule"].get<std::string>()
                                                 : "contract " + l["rule"].get<std::string>()] = l["quantity"];
  EXPECT_EQ(egress, (std::map<std::string, std::string>{{"list egress_free", "100"}, {"contract egress", "100"}}))
      << inv.dump();
}

// The outage tests' world: a server on the demo clock (ticks every 20 ms, no cold start, a firewall
// pass at each start), one node n1 sold under contract acme-dc, and job `long` (expected to run
// `expected_s`) running on it: outage_job answers the job's id. node_failure restarts the server's
// clock at `at` and fails n1 (a PSU failure) until its run has closed; node_back restarts it at
// `at` and brings n1 back until the job runs again.
std::vector<std::string> outage_clock(const char* t) {
  return {"--sched-interval-ms", "20", "--cold-start-ms", "0", "--firewall-interval-s", "0", "--demo-clock", t};
}

void set_n1(ServerProcess& s, const char* state) {
  json n = s.admin("GET", "/api/v1/nodes/n1").body;
  n["state"] = state;
  if (std::string(state) == "unavailable")
    n["state_reason"] = "PSU failure";
  else
    n.erase("state_reason");
  expect_2xx(s.admin("PUT", "/api/v1/nodes/n1", n), std::string("node ") + state);
}

std::string outage_job(ServerProcess& s, int64_t expected_s) {
  one_node_world(s, offer_doc("dc", "h100"));
  json contract = {{"name", "acme-dc"},  {"tenant", "acme"},  {"supplier", "dc"},
                   {"offers", {"h100"}}, {"currency", "CNY"}, {"starts_at", "2020-01-01T00:00:00Z"}};
  expect_2xx(s.admin("POST", "/api/v1/contracts", contract), "contract");
  json job = job_doc("vision", "long");
  job["expected_duration_seconds"] = expected_s;
  const std::string id = expect_2xx(s.admin("POST", "/api/v1/jobs", job), "job").body["id"];
  wait_for(s, "/api/v1/jobs/" + id, [](const json& j) { return j["status"]["state"] == "running"; });
  return id;
}

void node_failure(ServerProcess& s, const char* at) {
  s.set_extra_args(outage_clock(at));
  s.restart();
  set_n1(s, "unavailable");
  wait_for(s, "/api/v1/allocations?state=closed", [](const json& j) { return j["items"].size() == 1; });
}

void node_back(ServerProcess& s, const char* at, const std::string& id) {
  s.set_extra_args(outage_clock(at));
  s.restart();
  set_n1(s, "available");
  wait_for(s, "/api/v1/jobs/" + id, [](const json& j) { return j["status"]["state"] == "running"; });
}

// A node failure at 23:00 on the month's last day, the job running again at 02:00 on the 1st:
// November credits 23:00–24:00 and December the two hours after midnight (December left the run out,
// as it had ended in November, and credited nothing).
TEST(Billing, AnOutageAcrossAMonthsEndIsCreditedInBothMonths) {
  ServerProcess s(outage_clock("2026-11-30T22:00:00Z"));
  const std::string id = outage_job(s, 86400);
  node_failure(s, "2026-11-30T23:00:00Z");
  node_back(s, "2026-12-01T02:00:00Z", id);
  auto outage = [&](const char* month) {
    const json inv = s.admin("GET", std::string("/api/v1/invoices?tenant=acme&month=") + month).body;
    std::vector<json> out;
    for (const auto& sec : inv["sections"])
      for (const auto& l : sec["lines"])
        if (l["rule"] == "sla_outage") out.push_back(l);
    return out;
  };
  const auto nov = outage("2026-11"), dec = outage("2026-12");
  ASSERT_EQ(nov.size(), 1u);
  EXPECT_EQ(nov[0]["from"], "2026-11-30T23:00:00.000Z") << nov[0].dump();
  EXPECT_EQ(nov[0]["to"], "2026-12-01T00:00:00.000Z") << nov[0].dump();
  ASSERT_EQ(dec.size(), 1u) << "December credits its part of the outage";
  EXPECT_EQ(dec[0]["from"], "2026-12-01T00:00:00.000Z") << dec[0].dump();
  EXPECT_EQ(dec[0]["to"], "2026-12-01T02:00:00.000Z") << dec[0].dump();
  EXPECT_NE(dec[0]["description"].get<std::string>().find("PSU failure"), std::string::npos) << dec[0].dump();
  // Of that run, December holds the credit alone: no GPU time, no minimum increment.
  const json inv = s.admin("GET", "/api/v1/invoices?tenant=acme&month=2026-12").body;
  const json first_run = s.admin("GET", "/api/v1/allocations?state=closed").body["items"][0];
  for (const auto& sec : inv["sections"])
    for (const auto& l : sec["lines"])
      if (l.value("allocation", "") == first_run["id"]) {
        EXPECT_EQ(l["rule"], "sla_outage") << l.dump();
      }
  // Two hours later December has GPU time, so its credit (capped at the month's charges) is not
  // zero: the balance's drafts (read through one MonthInvoiceSource) are the invoices, December's
  // with the credit for the run that ended in November, and November's, not issued (no close ran).
  s.set_extra_args(outage_clock("2026-12-01T04:00:00Z"));
  s.restart();
  const json dec_inv = s.admin("GET", "/api/v1/invoices?tenant=acme&month=2026-12").body;
  const json nov_inv = s.admin("GET", "/api/v1/invoices?tenant=acme&month=2026-11").body;
  const json bal = s.admin("GET", "/api/v1/tenants/acme/balance").body;
  auto cents = [](const json& j, const char* key) {
    return j.contains("CNY") ? std::llround(std::stod(j["CNY"][key].get<std::string>()) * 100) : 0LL;
  };
  ASSERT_LT(cents(dec_inv["totals"], "credits"), 0) << dec_inv["totals"].dump();
  json cny;
  for (const json& b : bal["balances"])
    if (b["currency"] == "CNY") cny = b;
  ASSERT_TRUE(cny.is_object()) << bal.dump();
  EXPECT_EQ(std::llround(std::stod(cny["accruing"].get<std::string>()) * 100),
            cents(dec_inv["totals"], "total") + cents(nov_inv["totals"], "total"))
      << bal.dump() << "\n"
      << dec_inv["totals"].dump() << " " << nov_inv["totals"].dump();
  // The same, in process: every period the firewall's pass, the balance and the dashboards' days
  // ask for, at the restart (December's first two hours: no GPU time yet) and now.
  s.stop();
  expect_month_reads_equal_invoices(
      s.db_path(), {*parse_rfc3339("2026-12-01T02:00:00Z", "at"), *parse_rfc3339("2026-12-01T04:00:00Z", "at")});
}

// An outage longer than a day before a month's end: the run a node failure ended on November 28
// is in no record written in December or the day before, and December's invoice still credits the
// part of its outage in December, reached through the job's next run (its previous_run) — also
// when the runs carry no previous_run (recorded before they did), by reading every run. With
// `unchained`, the job is as one submitted before runs named the one before them (its chain's
// record removed while the server is down): its next run names none, and December reads every run.
void outage_of_days(bool unchained) {
  ServerProcess s(outage_clock("2026-11-28T22:00:00Z"));
  const std::string id = outage_job(s, 30 * 86400);
  node_failure(s, "2026-11-28T23:00:00Z");
  if (unchained) {
    s.stop();
    ASSERT_EQ(std::system(("sqlite3 " + s.db_path() + " \"DELETE FROM objects WHERE kind = 'last-runs'\"").c_str()), 0);
  }
  node_back(s, "2026-12-01T02:00:00Z", id);
  const json runs = s.admin("GET", "/api/v1/allocations?state=open").body;
  ASSERT_EQ(runs["items"].size(), 1u) << runs.dump();
  if (unchained)
    EXPECT_FALSE(runs["items"][0].contains("previous_run")) << "the next run of an unchained job names none";
  else
    EXPECT_FALSE(runs["items"][0].value("previous_run", "").empty()) << "the next run names the one before";
  s.set_extra_args(outage_clock("2026-12-01T04:00:00Z"));
  s.restart();
  const json dec = s.admin("GET", "/api/v1/invoices?tenant=acme&month=2026-12").body;
  std::vector<json> outage;
  for (const auto& sec : dec["sections"])
    for (const auto& l : sec["lines"])
      if (l["rule"] == "sla_outage") outage.push_back(l);
  ASSERT_EQ(outage.size(), 1u) << dec.dump();
  EXPECT_EQ(outage[0]["from"], "2026-12-01T00:00:00.000Z") << outage[0].dump();
  EXPECT_EQ(outage[0]["to"], "2026-12-01T02:00:00.000Z") << outage[0].dump();
  s.stop();
  const std::vector<TimeMs> instants{*parse_rfc3339("2026-12-01T04:00:00Z", "at")};
  expect_month_reads_equal_invoices(s.db_path(), instants);
  if (unchained) return;
  ASSERT_EQ(
      std::system(("sqlite3 " + s.db_path() +
                   " \"UPDATE objects SET body = json_remove(body, '$.previous_run') WHERE kind = 'allocations'\"")
                      .c_str()),
      0);
  expect_month_reads_equal_invoices(s.db_path(), instants);
}

TEST(Billing, AnOutageOfDaysBeforeAMonthsEndIsCreditedInTheNextMonth) { outage_of_days(false); }

TEST(Billing, AnOutageOfDaysOfAJobSubmittedBeforeRunsWereChainedIsCreditedToo) { outage_of_days(true); }

// billing_starts: api_call bills the wait from placement to running as cold start: a run placed on
// November 30 at 23:50 and running only at 00:10 has ten minutes of it on November's invoice (it
// had none: the run, not yet running at November's end, was left out of November) and ten on
// December's.
TEST(Billing, ColdStartBeforeAMonthsEndIsBilledInThatMonth) {
  auto at = [](const char* t, const char* cold_ms) {
    return std::vector<std::string>{"--sched-interval-ms", "20", "--cold-start-ms", cold_ms, "--firewall-interval-s", "0",
                                    "--demo-clock", t};
  };
  ServerProcess s(at("2026-11-30T23:50:00Z", "3600000"));  // placed, and starting for an hour
  json offer = offer_doc("dc", "h100");
  offer["fees"]["billing_starts"] = "api_call";
  one_node_world(s, offer);
  json job = job_doc("vision", "slow-start");
  job["expected_duration_seconds"] = 86400;
  const std::string id = expect_2xx(s.admin("POST", "/api/v1/jobs", job), "job").body["id"];
  wait_for(s, "/api/v1/jobs/" + id, [](const json& j) { return j["status"]["state"] == "admitted"; });  // placed
  s.set_extra_args(at("2026-12-01T00:10:00Z", "0"));
  s.restart();
  wait_for(s, "/api/v1/jobs/" + id, [](const json& j) { return j["status"]["state"] == "running"; });
  // The simulated executor dates the start from the placement (cold start then 0): the run is made
  // to have started at 00:10, as a real node would report it.
  const Resp runs = s.admin("GET", "/api/v1/allocations");
  ASSERT_EQ(runs.body["items"].size(), 1u) << runs.describe();
  ASSERT_EQ(runs.body["items"][0]["requested_at"], "2026-11-30T23:50:00.000Z") << runs.describe();
  edit_database(s, "UPDATE objects SET body = json_set(body, '$.running_at', '2026-12-01T00:10:00.000Z', '$.ready_at', "
                   "'2026-12-01T00:10:00.000Z') WHERE id = '" + runs.body["items"][0]["id"].get<std::string>() + "'");
  auto cold = [&](const char* month) {
    const Resp inv = s.admin("GET", std::string("/api/v1/invoices?tenant=acme&month=") + month);
    EXPECT_EQ(inv.status, 200) << inv.describe();
    json line;
    for (const auto& sec : inv.body["sections"])
      for (const auto& l : sec["lines"])
        if (l["rule"] == "cold_start") line = l;
    return line;
  };
  const json nov = cold("2026-11"), dec = cold("2026-12");
  ASSERT_TRUE(nov.is_object()) << "no cold start on November's invoice";
  EXPECT_EQ(nov["from"], "2026-11-30T23:50:00.000Z") << nov.dump();
  EXPECT_EQ(nov["to"], "2026-12-01T00:00:00.000Z") << nov.dump();
  ASSERT_TRUE(dec.is_object()) << "no cold start on December's invoice";
  EXPECT_EQ(dec["from"], "2026-12-01T00:00:00.000Z") << dec.dump();
  EXPECT_EQ(dec["to"], "2026-12-01T00:10:00.000Z") << dec.dump();
  EXPECT_EQ(nov["quantity"], dec["quantity"]) << "ten minutes each";
}

// An idle rule's window counts from when the GPU went idle, also when that was last month: a GPU
// idle from 23:00 under a one-hour stop rule is idle (not charged) from 00:00, so December bills
// none of its first hour (it billed that hour again as if the GPU had gone idle at midnight).
// Serve flags for a server whose clock stands at `t` (no cost firewall pass, no cold start).
std::vector<std::string> standing_at(const char* t) {
  return {"--sched-interval-ms", "20", "--cold-start-ms", "0", "--firewall-interval-s", "0", "--demo-clock", t};
}

// one_node_world with an offer whose idle rule stops billing after `window_minutes` below 5 %, and a
// running day-long job of `gpus` GPUs on it.
void idle_stop_world(const ServerProcess& s, int64_t window_minutes, int64_t gpus) {
  json offer = offer_doc("dc", "h100");
  offer["fees"]["idle"] = {{"utilization_below_pct", 5}, {"window_minutes", window_minutes}, {"action", "stop"}};
  one_node_world(s, offer);
  json job = job_doc("vision", "idle-notebook");
  job["gpus_per_worker"] = gpus;
  job["expected_duration_seconds"] = 86400;
  const std::string id = expect_2xx(s.admin("POST", "/api/v1/jobs", job), "job").body["id"];
  wait_for(s, "/api/v1/jobs/" + id, [](const json& j) { return j["status"]["state"] == "running"; });
}

TEST(Billing, AnIdleWindowBegunLastMonthIsNotRestartedAtTheMonthsStart) {
  ServerProcess s(standing_at("2026-11-30T23:00:00Z"));
  idle_stop_world(s, 60, 1);
  const Resp runs = s.admin("GET", "/api/v1/allocations");
  ASSERT_EQ(runs.body["items"].size(), 1u) << runs.describe();
  const json run = runs.body["items"][0];
  s.set_extra_args(standing_at("2026-12-01T01:00:00Z"));
  s.restart();
  // 0% every five minutes from 23:00 to 01:00.
  json samples = json::array();
  for (TimeMs t = *parse_rfc3339("2026-11-30T23:00:00Z", "t"); t <= *parse_rfc3339("2026-12-01T01:00:00Z", "t"); t += 300'000)
    samples.push_back({{"at", format_rfc3339(t)}, {"node", run["placement"][0]["node"]}, {"gpu", run["placement"][0]["gpus"][0]},
                       {"utilization_pct", 0}});
  ASSERT_EQ(s.admin("POST", "/api/v1/usage", json{{"idempotency_key", "idle-1"}, {"gpu_samples", samples}}).status, 201);
  const Resp inv = s.admin("GET", "/api/v1/invoices?tenant=acme&month=2026-12");
  ASSERT_EQ(inv.status, 200) << inv.describe();
  std::map<std::string, json> by_rule;
  for (const auto& sec : inv.body["sections"])
    for (const auto& l : sec["lines"]) by_rule[l["rule"]] = l;
  EXPECT_FALSE(by_rule.count("on_demand")) << "no charged GPU time in December: " << inv.body.dump();
  ASSERT_TRUE(by_rule.count("idle_stopped")) << inv.body.dump();
  EXPECT_EQ(by_rule["idle_stopped"]["from"], "2026-12-01T00:00:00.000Z") << by_rule["idle_stopped"].dump();
}

// Idle is judged from every card of a run: a run of two GPUs of which only one is metered (its
// exporter does not match the other's UUID, say) is never idle, however low that one reads; once
// both read low, it is.
TEST(Billing, ARunIsIdleOnlyWhenEveryOneOfItsGpusIsMetered) {
  ServerProcess s(standing_at("2026-11-10T00:00:00Z"));
  idle_stop_world(s, 30, 2);
  const Resp runs = s.admin("GET", "/api/v1/allocations");
  ASSERT_EQ(runs.body["items"].size(), 1u) << runs.describe();
  const json place = runs.body["items"][0]["placement"][0];
  ASSERT_EQ(place["gpus"].size(), 2u) << place.dump();
  s.set_extra_args(standing_at("2026-11-10T02:00:00Z"));
  s.restart();
  auto zero_on = [&](const json& gpu) {
    json samples = json::array();
    for (TimeMs t = *parse_rfc3339("2026-11-10T00:00:00Z", "t"); t <= *parse_rfc3339("2026-11-10T02:00:00Z", "t"); t += 300'000)
      samples.push_back({{"at", format_rfc3339(t)}, {"node", place["node"]}, {"gpu", gpu}, {"utilization_pct", 0}});
    return samples;
  };
  auto idle_line = [&] {
    const Resp inv = s.admin("GET", "/api/v1/invoices?tenant=acme&month=2026-11");
    EXPECT_EQ(inv.status, 200) << inv.describe();
    for (const auto& sec : inv.body["sections"])
      for (const auto& l : sec["lines"])
        if (l["rule"] == "idle_stopped") return l;
    return json();
  };
  ASSERT_EQ(s.admin("POST", "/api/v1/usage", json{{"idempotency_key", "one-card"}, {"gpu_samples", zero_on(place["gpus"][0])}}).status, 201);
  EXPECT_TRUE(idle_line().is_null()) << "the other card may be busy: " << idle_line().dump();
  ASSERT_EQ(s.admin("POST", "/api/v1/usage", json{{"idempotency_key", "other-card"}, {"gpu_samples", zero_on(place["gpus"][1])}}).status, 201);
  const json idle = idle_line();
  ASSERT_FALSE(idle.is_null()) << "both cards read 0%";
  EXPECT_EQ(idle["from"], "2026-11-10T00:30:00.000Z") << idle.dump();
}

// An egress freeze holds the project's new jobs until an admin lifts it (running jobs go on).
TEST(Billing, AnEgressFreezeHoldsTheProjectsNewJobsUntilLifted) {
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "1"});
  one_node_world(s, offer_doc("dc", "h100"));  // egress 0.50 per GB beyond 100 GB a month
  const std::string up = running_job(s, "uploader", 3600);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // 1,200 GB out: (1200 − 100) × 0.50 = 550.00 today, over the 500.00 threshold.
  json batch = {{"idempotency_key", "egress-1"},
                {"job_samples", {{{"at", format_rfc3339(SystemClock().now())}, {"job", up}, {"egress_bytes", 1'200'000'000'000}}}}};
  ASSERT_EQ(s.admin("POST", "/api/v1/usage", batch).status, 201);
  json alerts = wait_for(s, "/api/v1/alerts?state=active", [](const json& j) { return !j["items"].empty(); });
  ASSERT_EQ(alerts["items"].size(), 1u) << alerts.dump();
  const json& a = alerts["items"][0];
  ASSERT_EQ(a["kind"], "egress_daily_cost");
  EXPECT_EQ(a["freeze_egress"], true);

  json next = job_doc("vision", "next");
  next["expected_duration_seconds"] = 60;
  const std::string id = expect_2xx(s.admin("POST", "/api/v1/jobs", next), "next").body["id"];
  json held = wait_for(s, "/api/v1/jobs/" + id, [](const json& j) {
    return j["status"]["reason"].get<std::string>().rfind("egress frozen:", 0) == 0;
  });
  EXPECT_EQ(held["status"]["state"], "pending") << held.dump();
  EXPECT_EQ(s.admin("GET", "/api/v1/jobs/" + up).body["status"]["state"], "running") << "running jobs go on";
  expect_2xx(s.admin("POST", "/api/v1/alerts/" + a["id"].get<std::string>() + "/lift"), "lift");
  wait_for(s, "/api/v1/jobs/" + id, [](const json& j) { return j["status"]["state"] == "running"; });
}

}  // namespace
}  // namespace gpurent::testing

namespace gpurent::testing {
namespace {

// Drained before it fails (issue 23): a dcgm-exporter stand-in serves each node's cards with
// their health fields; the card a job runs on starts counting double-bit ECC errors. The node is
// taken out of service with the reason, the job requeues on the other node, the fault is recorded,
// and the requeue is credited as an outage on the invoice.
TEST(Billing, ARisingDoubleBitEccCountTakesTheNodeOutBeforeItFails) {
  std::mutex mu;
  std::map<std::string, int> dbe;  // "n1/3" -> the card's double-bit ECC count
  std::set<std::string> off_bus;   // nodes whose cards fell off the bus: XID 79, no utilization
  auto exposition = [&](const std::string& node) {
    const json doc = node_doc("dc", node);
    std::string out = "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n";
    std::lock_guard lock(mu);
    const bool gone = off_bus.count(node) > 0;
    for (int g = 0; g < 8; ++g) {
      const std::string labels = "gpu=\"" + std::to_string(g) + "\",UUID=\"" + doc["gpus"][g]["uuid"].get<std::string>() +
                                 "\",modelName=\"NVIDIA H100 80GB HBM3\",hostname=\"" + node + "\"";
      if (!gone) out += "DCGM_FI_DEV_GPU_UTIL{" + labels + "} 90\n";
      out += "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{" + labels + "} " + std::to_string(dbe[node + "/" + std::to_string(g)]) + "\n";
      out += "DCGM_FI_DEV_XID_ERRORS{" + labels + "} " + (gone ? "79" : "0") + "\n";
      out += "DCGM_FI_DEV_GPU_TEMP{" + labels + "} 61\n";
    }
    return out;
  };
  httplib::Server exporter;
  exporter.Get(R"(/(n1|n2)/metrics)", [&](const httplib::Request& req, httplib::Response& res) {
    res.set_content(exposition(req.matches[1]), "text/plain; version=0.0.4");
  });
  const int port = exporter.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread serve([&] { exporter.listen_after_bind(); });
  struct Stop {
    httplib::Server& e;
    std::thread& t;
    ~Stop() {
      e.stop();
      t.join();
    }
  } stop{exporter, serve};
  const std::string base = "http://127.0.0.1:" + std::to_string(port);
  ServerProcess s({"--sched-interval-ms", "20", "--cold-start-ms", "50", "--firewall-interval-s", "0", "--dcgm-target",
                   base + "/n1/metrics@n1", "--dcgm-target", base + "/n2/metrics@n2", "--dcgm-interval-s", "1"});
  world(s);
  expect_2xx(s.admin("POST", "/api/v1/contracts", contract_doc()), "contract");
  const std::string id = run_job(s, "long", 1, 3600);
  json running = wait_for(s, "/api/v1/jobs/" + id, [](const json& j) { return j["status"]["state"] == "running"; });
  const std::string node =  // the placement names the node by id; the targets by name
      s.admin("GET", "/api/v1/nodes/" + running["status"]["placement"][0]["node"].get<std::string>()).body["name"];
  const int gpu = running["status"]["placement"][0]["gpus"][0];
  const std::string other = node == "n1" ? "n2" : "n1";
  const std::string other_id = s.admin("GET", "/api/v1/nodes/" + other).body["id"];
  // Both nodes scraped at least twice (a card's first reading is its baseline).
  wait_for(s, "/api/v1/usage/gpus?node=" + node + "&gpu=" + std::to_string(gpu) + "&from=" +
                  format_rfc3339(SystemClock().now() - 60'000),
           [](const json& j) { return j["points"].size() >= 2; });
  EXPECT_EQ(s.admin("GET", "/api/v1/nodes/" + node).body.value("state", ""), "available");
  {
    std::lock_guard lock(mu);
    dbe[node + "/" + std::to_string(gpu)] = 2;
  }
  json down = wait_for(s, "/api/v1/nodes/" + node, [](const json& n) { return n.value("state", "") == "unavailable"; });
  const std::string reason = down.value("state_reason", "");
  EXPECT_NE(reason.find("GPU " + std::to_string(gpu) + " (GPU-"), std::string::npos) << reason;
  EXPECT_NE(reason.find("double-bit ECC errors rose from 0 to 2"), std::string::npos) << reason;
  // The job moves to the other node; the fault names the reason; the other node stays in service.
  wait_for(s, "/api/v1/jobs/" + id, [&](const json& j) {
    return j["status"]["state"] == "running" && j["status"]["placement"][0]["node"] == other_id;
  });
  EXPECT_EQ(s.admin("GET", "/api/v1/nodes/" + other).body.value("state", ""), "available");
  Resp faults = expect_2xx(s.admin("GET", "/api/v1/faults"), "faults");
  EXPECT_NE(faults.body.dump().find("double-bit ECC errors rose from 0 to 2"), std::string::npos) << faults.describe();
  wait_for(s, "/api/v1/allocations?state=closed", [](const json& j) { return j["items"].size() == 1; });
  const auto credits = acme_lines(s, "sla_outage");
  for (const json& l : credits)
    EXPECT_NE(l["description"].get<std::string>().find("double-bit ECC"), std::string::npos) << l.dump();
  EXPECT_FALSE(credits.empty()) << "no sla_outage line";
  // Said in the log, counted in /metrics, and audited.
  EXPECT_NE(s.log().find("gpu_health_drain"), std::string::npos);
  EXPECT_NE(s.admin("GET", "/metrics").text.find("gpurent_gpu_health_drains_total{node=\"" + node + "\",rule=\"ecc_dbe_rising\"} 1"),
            std::string::npos);

  // The card fails further while its node is out of service: nothing to drain then, but the finding
  // is not forgotten — returned to service before the card is fixed, the node is drained again.
  {
    std::lock_guard lock(mu);
    dbe[node + "/" + std::to_string(gpu)] = 4;
  }
  const auto scraped_after = [&](TimeMs t) {
    wait_for(s, "/api/v1/usage/gpus?node=" + node + "&gpu=" + std::to_string(gpu) + "&from=" + format_rfc3339(t),
             [](const json& j) { return j["points"].size() >= 2; });
  };
  scraped_after(SystemClock().now());
  json back = s.admin("GET", "/api/v1/nodes/" + node).body;
  back["state"] = "available";
  back.erase("state_reason");
  expect_2xx(s.admin("PUT", "/api/v1/nodes/" + back["id"].get<std::string>(), back), "returned to service");
  json again =
      wait_for(s, "/api/v1/nodes/" + node, [](const json& n) { return n.value("state", "") == "unavailable"; });
  EXPECT_NE(again.value("state_reason", "").find("double-bit ECC errors rose from 2 to 4"), std::string::npos)
      << again.dump();

  // The other node's cards fall off the bus: they report XID 79 and no utilization any more, so
  // nothing of that scrape can be metered — its health is still judged, and the node drained.
  {
    std::lock_guard lock(mu);
    off_bus.insert(other);
  }
  json gone = wait_for(s, "/api/v1/nodes/" + other, [](const json& n) { return n.value("state", "") == "unavailable"; });
  const std::string all = gone.value("state_reason", "");
  EXPECT_NE(all.find("XID 79"), std::string::npos) << gone.dump();
  // Every card that fired is named (the first in full), within the 500 characters a reason holds.
  EXPECT_NE(all.find("; also GPU 1 (GPU-"), std::string::npos) << all;
  EXPECT_NE(all.find(" more card(s)"), std::string::npos) << all;
  EXPECT_LE(all.size(), 500u) << all;
}

}  // namespace
}  // namespace gpurent::testing

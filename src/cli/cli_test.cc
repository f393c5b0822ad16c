// The CLI end to end, in process, against a fake API server: argument parsing, request shapes,
// paging, output formats, error rendering and exit codes.
#include "cli/cli.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "cli/fake_api_for_test.h"

namespace gpurent {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

using testing::CliRun;

class CliTest : public testing::CliFakeApiTest {
 protected:
  std::string temp_file(const std::string& name, const std::string& text) {
    fs::path p = fs::temp_directory_path() / ("gpurent_cli_test_" + std::to_string(::getpid()) + "_" + name);
    std::ofstream(p) << text;
    files_.push_back(p);
    return p.string();
  }
  void TearDown() override {
    for (const auto& p : files_) fs::remove(p);
  }

  std::vector<fs::path> files_;
};

TEST_F(CliTest, ListFollowsEveryPage) {
  api_.on("GET /api/v1/tenants", {200, R"({"items":[{"name":"acme","display_name":"艾克米","currency":"CNY",
      "contact_email":"a@acme.cn","created_at":"2026-01-01T00:00:00.000Z"}],"next_after":"ten_1"})"});
  api_.on("GET /api/v1/tenants?after=ten_1", {200, R"({"items":[{"name":"globex","display_name":"Globex",
      "currency":"USD","contact_email":"ops@globex.com","created_at":"2025-12-31T01:00:00.000Z"}],"next_after":null})"});
  CliRun r = run({"tenants", "list"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out,
            "NAME     DISPLAY_NAME   CURRENCY   CONTACT_EMAIL    AGE\n"
            "acme     艾克米         CNY        a@acme.cn        60m\n"
            "globex   Globex         USD        ops@globex.com   24h\n");
  EXPECT_EQ(r.err, "");
  auto reqs = api_.requests();
  ASSERT_EQ(reqs.size(), 2u);
  EXPECT_TRUE(reqs[0].params.empty());
  EXPECT_EQ(reqs[1].params.find("after")->second, "ten_1");
  EXPECT_EQ(reqs[1].authorization, "Bearer gpr_env");
}

TEST_F(CliTest, ListWithLimitFetchesOnePageAndPrintsTheCursor) {
  api_.on("GET /api/v1/nodes", {200, R"({"items":[{"name":"n1"}],"next_after":"nod_9"})"});
  CliRun r = run({"nodes", "list", "--limit", "1", "--gpu-model", "h100-sxm5-80gb", "--supplier", "acme"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "more results: add --after nod_9\n");
  auto reqs = api_.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].params.find("limit")->second, "1");
  EXPECT_EQ(reqs[0].params.find("gpu_model")->second, "h100-sxm5-80gb");
  EXPECT_EQ(reqs[0].params.find("supplier")->second, "acme");
  EXPECT_EQ(reqs[0].params.count("region"), 0u);
}

TEST_F(CliTest, ListJsonAndYamlKeepTheApiShape) {
  api_.on("GET /api/v1/offers", {200, R"({"items":[{"name":"o","prices":{"on_demand":"3.20"}}],"next_after":null})"});
  CliRun r = run({"offers", "list", "-o", "json"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(r.out),
            json::parse(R"({"items":[{"name":"o","prices":{"on_demand":"3.20"}}],"next_after":null})"));
  r = run({"-o", "yaml", "offers", "list"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "items:\n  - name: o\n    prices:\n      on_demand: \"3.20\"\nnext_after: null\n");
}

TEST_F(CliTest, OffersHistoryShowsEachSheetAndTheOneInForce) {
  api_.on("GET /api/v1/offers/h100/history",
          {200, R"({"offer_id":"off_1","offer":"h100","items":[
            {"version":1,"from":"2026-11-01T00:00:00.000Z","until":"2026-11-15T00:00:00.000Z","currency":"USD",
             "prices":{"on_demand":"2.00"},"fees":{"billing_starts":"ready"}},
            {"version":2,"from":"2026-11-15T00:00:00.000Z","until":null,"currency":"USD",
             "prices":{"on_demand":"2.50","spot":"1.10"},"fees":{"billing_starts":"running"}}],"next_after":null})"});
  CliRun r = run({"offers", "history", "h100"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("2026-11-15T00:00:00.000Z   (in force)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2.00"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("running"), std::string::npos) << r.out;
  EXPECT_EQ(api_.requests().at(0).path, "/api/v1/offers/h100/history");
}

TEST_F(CliTest, IssuedInvoiceVerbsPostTheirActionsAndPrintTheHtml) {
  api_.on("POST /api/v1/invoices/close", {200, R"({"month":"2026-11","already_closed":false,"issued":["inv_1","inv_2"],"failed_tenants":[]})"});
  CliRun r = run({"invoices", "close", "--month", "2026-11"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "closed 2026-11: 2 invoice(s) issued\n");
  EXPECT_EQ(json::parse(api_.requests().back().body), json({{"month", "2026-11"}}));
  api_.on("POST /api/v1/issued-invoices/acme-USD-000001/pay", {200, R"({"number":"acme-USD-000001","state":"paid"})"});
  r = run({"invoices", "pay", "acme-USD-000001", "--reference", "wire 42"});
  EXPECT_EQ(r.out, "invoice acme-USD-000001 is paid\n") << r.err;
  EXPECT_EQ(json::parse(api_.requests().back().body), json({{"reference", "wire 42"}}));
  r = run({"invoices", "void", "acme-USD-000001"});
  EXPECT_EQ(r.rc, 2) << "void needs --reason";
  api_.on("GET /api/v1/issued-invoices/inv_1/verify", {200, R"({"number":"acme-USD-000001","hash":"sha256:aa","computed":"sha256:bb","verified":false})"});
  r = run({"invoices", "verify", "inv_1"});
  EXPECT_EQ(r.rc, 1) << "a hash that does not verify fails the command";
  EXPECT_NE(r.out.find("HASH MISMATCH"), std::string::npos) << r.out;
  api_.on("GET /api/v1/issued-invoices/inv_1/print", {200, "<!DOCTYPE html><html>发票</html>", "text/html"});
  r = run({"invoices", "print", "inv_1", "--lang", "zh"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "<!DOCTYPE html><html>发票</html>");
  EXPECT_EQ(api_.requests().back().params.find("lang")->second, "zh");
}

TEST_F(CliTest, BalanceShowsEachCurrencyAndBillingPutsTheSettings) {
  api_.on("GET /api/v1/tenants/qingyun-tech/balance",
          {200, R"({"tenant_id":"ten_1","tenant":"qingyun-tech","at":"2026-12-02T03:00:00.000Z","payment":"prepaid",
                   "watched":true,"runway_alert_minutes":2880,"stop_minutes":0,
                   "balances":[{"currency":"CNY","top_ups":"1200000.00","invoiced":"366120.55","accruing":"25000.10",
                                "burn_per_hour":"505.60","available":"808879.35","runway_minutes":95990}]})"});
  CliRun r = run({"balance", "qingyun-tech"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("tenant   qingyun-tech (prepaid, watched)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("808879.35"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("95990 min"), std::string::npos) << r.out;
  api_.on("PUT /api/v1/tenants/acme/billing", {200, R"({"payment":"postpaid","credit_limit":"5000.00","runway_alert_minutes":60,"stop_minutes":0})"});
  r = run({"billing", "acme", "--payment", "postpaid", "--credit-limit", "5000.00", "--runway-alert-minutes", "60"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(api_.requests().back().body),
            json({{"payment", "postpaid"}, {"credit_limit", "5000.00"}, {"runway_alert_minutes", 60}}));
  EXPECT_EQ(run({"billing", "acme", "--payment", "later"}).rc, 2);
}

TEST_F(CliTest, ProcurementShowsTargetsAgainstAchievedSharesAndSetsTheSplit) {
  const char* report = R"({"tenant":"acme","from":"2026-12-01T00:00:00.000Z","to":"2026-12-04T07:00:00.000Z","split":true,
      "held_gpus":"24","gpu_hours":"1234.5","suppliers":[
      {"supplier":"sup_1","supplier_name":"huadong","target_permille":600,"held_gpus":"16","held_permille":667,"gpu_hours":"800","gpu_hours_permille":648},
      {"supplier":"sup_2","supplier_name":"","target_permille":400,"held_gpus":"8","held_permille":333,"gpu_hours":"434.5","gpu_hours_permille":352}]})";
  api_.on("GET /api/v1/tenants/acme/procurement", {200, report});
  CliRun r = run({"procurement", "acme"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("huadong"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sup_2"), std::string::npos) << "a deleted supplier shows by id: " << r.out;
  EXPECT_NE(r.out.find("667"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("24 GPUs held, 1234.5 GPU-hours"), std::string::npos) << r.out;
  api_.on("PUT /api/v1/tenants/acme/procurement", {200, report});
  r = run({"procurement", "acme", "--set", "huadong=600", "--set", "sup_2=400", "--from", "2026-12-01"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(api_.requests().back().body),
            json::parse(R"({"procurement_split":[{"supplier":"huadong","share_permille":600},{"supplier":"sup_2","share_permille":400}]})"));
  EXPECT_EQ(api_.requests().back().params.find("from")->second, "2026-12-01");
  // The times travel as query values, whatever they hold: a UTC offset's '+', and a '&' that would
  // otherwise start another parameter (the server then names the bad time, not a part of it).
  r = run({"procurement", "acme", "--from", "2026-11-01T00:00:00+08:00"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(api_.requests().back().params.find("from")->second, "2026-11-01T00:00:00+08:00");
  r = run({"procurement", "acme", "--from", "2026-11-01&to=2026-12-01"});
  EXPECT_EQ(api_.requests().back().params.find("from")->second, "2026-11-01&to=2026-12-01");
  EXPECT_EQ(api_.requests().back().params.count("to"), 0u);
  r = run({"procurement", "acme", "--clear"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(api_.requests().back().body), json::parse(R"({"procurement_split":[]})"));
  EXPECT_EQ(run({"procurement", "acme", "--set", "huadong"}).rc, 2);
  EXPECT_EQ(run({"procurement", "acme", "--set", "huadong=6x"}).rc, 2);
  EXPECT_EQ(run({"procurement", "acme", "--set", "huadong=0"}).rc, 2);  // the help says 1..1000
  EXPECT_EQ(run({"procurement", "acme", "--set", "huadong=5000"}).rc, 2);
  EXPECT_EQ(run({"procurement", "acme", "--set", "a=1", "--clear"}).rc, 2);
}

TEST_F(CliTest, EmptyListSaysSoOnStderr) {
  api_.on("GET /api/v1/jobs", {200, R"({"items":[],"next_after":null})"});
  CliRun r = run({"jobs", "list", "--state", "running", "--project", "vision"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "no jobs found\n");
  auto p = api_.requests().at(0).params;
  EXPECT_EQ(p.find("state")->second, "running");
  EXPECT_EQ(p.find("project")->second, "vision");
}

TEST_F(CliTest, GetEncodesTheIdAndPrintsTheDetailView) {
  api_.on("GET /api/v1/projects/my proj",
          {200, R"({"name":"my-proj","id":"prj_1","quota":{"gpus_per_model":{"*":8}}})"});
  CliRun r = run({"projects", "get", "my proj"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "name: my-proj\nid:   prj_1\nquota:\n  gpus_per_model:\n    *: 8\n");
}

TEST_F(CliTest, CreateFromYamlOnStdinSendsJsonWithMoneyAsStrings) {
  api_.on("POST /api/v1/offers", {201, R"({"id":"off_1","name":"h100-od","version":1})"});
  CliRun r =
      run({"offers", "create", "-f", "-"}, "name: h100-od\nprices:\n  on_demand: 3.20\nmin_increment_seconds: 60\n");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "created offer h100-od (off_1)\n");
  auto req = api_.requests().at(0);
  EXPECT_EQ(req.method, "POST");
  EXPECT_EQ(json::parse(req.body),
            json::parse(R"({"name":"h100-od","prices":{"on_demand":"3.20"},"min_increment_seconds":60})"));
}

TEST_F(CliTest, CreateReportsValidationErrorsPerField) {
  api_.on("POST /api/v1/nodes", {422, R"J({"title":"Validation failed","status":422,
      "detail":"gpus[1].numa_node: must be < numa_nodes (and 1 more)",
      "errors":[{"field":"gpus[1].numa_node","reason":"must be < numa_nodes"},{"field":"cpu.cores","reason":"is required"}]})J",
                                 "application/problem+json"});
  std::string f = temp_file("node.json", R"({"name":"n"})");
  CliRun r = run({"nodes", "create", "-f", f});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "error: gpus[1].numa_node: must be < numa_nodes (and 1 more)\n"
            "  gpus[1].numa_node: must be < numa_nodes\n"
            "  cpu.cores: is required\n");
}

TEST_F(CliTest, MalformedFileIsReportedLocally) {
  std::string f = temp_file("bad.yaml", "name: [unclosed\n");
  CliRun r = run({"suppliers", "create", "-f", f});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("error: " + f + ": malformed YAML at line"), std::string::npos) << r.err;
  EXPECT_TRUE(api_.requests().empty());

  r = run({"suppliers", "create", "-f", "/no/such/file.yaml"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("cannot read /no/such/file.yaml"), std::string::npos) << r.err;

  r = run({"suppliers", "create", "-f", "-"}, "- a\n- b\n");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("standard input: expected a mapping"), std::string::npos) << r.err;
}

TEST_F(CliTest, UpdateAndDelete) {
  api_.on("PUT /api/v1/tenants/acme", {200, R"({"id":"ten_1","name":"acme","version":4})"});
  api_.on("DELETE /api/v1/tenants/acme", {204, ""});
  std::string f = temp_file("t.yaml", "name: acme\nversion: 3\n");
  CliRun r = run({"tenants", "update", "acme", "-f", f});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "updated tenant acme (ten_1), version 4\n");
  EXPECT_EQ(json::parse(api_.requests().at(0).body), (json{{"name", "acme"}, {"version", 3}}));

  r = run({"tenants", "delete", "acme"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "deleted tenant acme\n");
  EXPECT_EQ(api_.requests().at(1).method, "DELETE");
}

TEST_F(CliTest, NodesFailTakesTheNodeOutAsAFailureKeepingItsVersion) {
  api_.on("GET /api/v1/nodes/gpn1",
          {200, R"({"id":"nod_1","name":"gpn1","state":"available","version":7,"supplier":"dc"})"});
  api_.on("PUT /api/v1/nodes/nod_1", {200, R"({"id":"nod_1","name":"gpn1","state":"unavailable","version":8})"});
  CliRun r = run({"nodes", "fail", "gpn1", "--reason", "fault drill: POC stage 5"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "node gpn1: available -> unavailable (its running jobs are requeued elsewhere, each with a fault record)\n");
  const json sent = json::parse(api_.requests().at(1).body);
  EXPECT_EQ(sent["state"], "unavailable");
  EXPECT_EQ(sent["state_reason"], "fault drill: POC stage 5");
  EXPECT_EQ(sent["version"], 7);  // a change made in between is not overwritten
  EXPECT_EQ(run({"nodes", "fail", "gpn1"}).rc, 2);  // the reason is required
}

TEST_F(CliTest, MarketBuySellCancelAndReadABook) {
  api_.on("POST /api/v1/market-orders",
          {201, R"({"id":"mko_1","state":"open","gpus":10,"filled_gpus":8,"remaining_gpus":2})"});
  CliRun r = run({"market", "buy", "--gpu-model", "h100", "--region", "us-east-1", "--from", "2027-01-01T00:00:00Z", "--to",
                  "2027-01-01T08:00:00Z", "--currency", "USD", "--gpus", "10", "--price", "2.20", "--idempotency-key", "k1"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "order mko_1: open, filled 8 of 10 GPUs, 2 resting\n");
  EXPECT_EQ(json::parse(api_.requests().at(0).body),
            (json{{"side", "buy"}, {"gpu_model", "h100"}, {"region", "us-east-1"}, {"starts_at", "2027-01-01T00:00:00Z"},
                  {"ends_at", "2027-01-01T08:00:00Z"}, {"currency", "USD"}, {"gpus", 10}, {"price_per_gpu_hour", "2.20"},
                  {"time_in_force", "gtc"}, {"idempotency_key", "k1"}}));
  r = run({"market", "sell", "--gpu-model", "h100", "--region", "us-east-1", "--from", "S", "--to", "E", "--currency", "USD",
           "--gpus", "16", "--price", "2.10", "--all-or-none"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(api_.requests().back().body)["all_or_none"], true);
  r = run({"market", "buy", "--gpu-model", "h100", "--region", "us-east-1", "--from", "S", "--to", "E", "--currency", "USD",
           "--node-gpus", "8", "--nodes", "2", "--price", "2.10"});
  EXPECT_EQ(r.rc, 0) << r.err;
  const json by_nodes = json::parse(api_.requests().back().body);
  EXPECT_EQ(by_nodes["nodes"], 2);
  EXPECT_EQ(by_nodes["node_gpus"], 8);
  EXPECT_FALSE(by_nodes.contains("gpus"));
  EXPECT_EQ(run({"market", "buy", "--gpu-model", "h100", "--region", "r", "--from", "S", "--to", "E", "--currency", "USD",
                 "--price", "2.10"}).rc,
            2);  // neither --gpus nor --nodes
  EXPECT_EQ(run({"market", "sell", "--gpu-model", "h100", "--region", "r", "--from", "a", "--to", "b", "--currency", "EUR",
                 "--gpus", "1", "--price", "1"}).rc,
            2);  // not a currency
  // The server names its fields; the CLI names the flags the user typed.
  api_.on(
      "POST /api/v1/market-orders",
      {422, R"J({"title":"Unprocessable","status":422,"detail":"starts_at: must be a whole UTC hour (and 1 more)",)J"
            R"J("errors":[{"field":"starts_at","reason":"must be a whole UTC hour"},)J"
            R"J({"field":"price_per_gpu_hour","reason":"must be more than 0"}]})J"});
  r = run({"market", "buy", "--gpu-model", "h100", "--region", "r", "--from", "2027-01-01T00:30:00Z", "--to", "E",
           "--currency", "USD", "--gpus", "1", "--price", "0"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err,
            "error: --from: must be a whole UTC hour (and 1 more)\n  --from: must be a whole UTC hour\n"
            "  --price: must be more than 0\n");
  // In Chinese the catalogue writes "field：reason" with a full-width colon.
  api_.on("POST /api/v1/market-orders",
          {422, R"J({"title":"Unprocessable","status":422,"detail":"starts_at：必须是 UTC 整点",)J"
                R"J("errors":[{"field":"starts_at","reason":"必须是 UTC 整点"}]})J"});
  r = run({"market", "buy", "--gpu-model", "h100", "--region", "r", "--from", "2027-01-01T00:30:00Z", "--to", "E",
           "--currency", "USD", "--gpus", "1", "--price", "1"});
  EXPECT_EQ(r.err.rfind("error: --from：必须是 UTC 整点\n", 0), 0u) << r.err;
  // So do the other verbs: a book read, a replace, a default.
  api_.on("GET /api/v1/market/quote",
          {422, R"J({"title":"Unprocessable","status":422,"detail":"starts_at: must be a whole UTC hour",)J"
                R"J("errors":[{"field":"starts_at","reason":"must be a whole UTC hour"}]})J"});
  r = run({"market", "quote", "--gpu-model", "h100", "--region", "r", "--from", "2027-01-01T00:30:00Z", "--to", "E",
           "--currency", "USD"});
  EXPECT_EQ(r.err.rfind("error: --from: must be a whole UTC hour\n", 0), 0u) << r.err;
  api_.on("POST /api/v1/market-orders/mko_9/replace",
          {422, R"J({"title":"Unprocessable","status":422,"detail":"price_per_gpu_hour: must be more than 0",)J"
                R"J("errors":[{"field":"price_per_gpu_hour","reason":"must be more than 0"}]})J"});
  r = run({"market", "replace", "mko_9", "--price", "0"});
  EXPECT_EQ(r.err.rfind("error: --price: must be more than 0\n", 0), 0u) << r.err;
  api_.on("POST /api/v1/market-orders/mko_1/cancel", {200, R"({"id":"mko_1","state":"cancelled","gpus":10,"filled_gpus":8})"});
  r = run({"market", "cancel", "mko_1"});
  EXPECT_EQ(r.out, "order mko_1: cancelled (filled 8 of 10 GPUs)\n");
  api_.on("POST /api/v1/market-trades/mtr_1/default",
          {200, R"({"id":"mtr_1","state":"defaulted","settlement":{"contract":"market-dc-usd","commitment":"trade-mtr-1",)"
                R"("defaults":[{"gpus":4}]}})"});
  api_.on("POST /api/v1/market-orders/mko_2/replace",
          {200, R"({"id":"mko_3","state":"open","price_per_gpu_hour":"2.05","remaining_gpus":6,"replaces":"mko_2"})"});
  r = run({"market", "replace", "mko_2", "--price", "2.05", "--gpus", "6"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "order mko_3: open at 2.05, 6 GPUs left (replaces mko_2)\n");
  EXPECT_EQ(json::parse(api_.requests().back().body), (json{{"price_per_gpu_hour", "2.05"}, {"gpus", 6}}));
  EXPECT_EQ(run({"market", "replace", "mko_2"}).rc, 2);
  r = run({"market", "default", "mtr_1", "--gpus", "4", "--reason", "gpn1 failed"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "trade mtr_1: defaulted, 1 default(s) on commitment trade-mtr-1 of contract market-dc-usd\n");
  EXPECT_EQ(json::parse(api_.requests().back().body), (json{{"reason", "gpn1 failed"}, {"gpus", 4}}));
  EXPECT_EQ(run({"market", "default", "mtr_1"}).rc, 2);  // a reason is required
  // A count given is sent as given: 0 is the server's to refuse, never "every GPU still delivered".
  run({"market", "default", "mtr_1", "--gpus", "0", "--reason", "typo"});
  EXPECT_EQ(json::parse(api_.requests().back().body), (json{{"reason", "typo"}, {"gpus", 0}}));
  run({"market", "replace", "mko_2", "--gpus", "-1"});
  EXPECT_EQ(json::parse(api_.requests().back().body), (json{{"gpus", -1}}));
  api_.on("GET /api/v1/market/quote",
          {200, R"({"gpu_model":"h100-sxm5-80gb","region":"us-east-1","starts_at":"S","ends_at":"E","currency":"USD",)"
                R"("bid":{"price_per_gpu_hour":"1.90","gpus":8,"orders":1},"ask":null})"});
  r = run({"market", "quote", "--gpu-model", "h100", "--region", "us-east-1", "--from", "S", "--to", "E", "--currency", "USD"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "h100-sxm5-80gb us-east-1 S – E (USD per GPU-hour)\nbid: 1.90 × 8 GPUs (1 orders)\nask: —\n");
  EXPECT_EQ(api_.requests().back().params.find("starts_at")->second, "S");
  api_.on("GET /api/v1/market/index",
          {200, R"({"currency":"USD","days":[{"day":"2026-12-05","vwap_per_gpu_hour":"2.10","gpu_hours":192,"trades":1,)"
                R"("low_per_gpu_hour":"2.10","high_per_gpu_hour":"2.10"}]})"});
  r = run({"market", "index", "--gpu-model", "h100", "--region", "us-east-1", "--currency", "USD"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "DAY         VWAP/GPU-H  GPU-HOURS  TRADES  LOW  HIGH (USD)\n2026-12-05  2.10  192  1  2.10  2.10\n");
}

TEST_F(CliTest, PocRunsRecordResultsAndPrintReports) {
  api_.on("POST /api/v1/poc-runs/dc-poc/results",
          {200, R"({"id":"pcr_1","name":"dc-poc","plan":{"verdict":"reject","reason":"dc runs m 15.00% slower"}})"});
  CliRun r = run({"poc-runs", "record", "dc-poc", "--item", "model_throughput", "--value", "850", "--note", "bf16"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "POC dc-poc: reject — dc runs m 15.00% slower\n");
  EXPECT_EQ(json::parse(api_.requests().at(0).body), (json{{"item", "model_throughput"}, {"value", "850"}, {"note", "bf16"}}));
  r = run({"poc-runs", "record", "dc-poc", "--item", "env_rdma", "--failed"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(api_.requests().at(1).body), (json{{"item", "env_rdma"}, {"passed", false}}));
  r = run({"poc-runs", "record", "dc-poc", "--acceptance-run", "acr_0123456789abcdef"});
  EXPECT_EQ(json::parse(api_.requests().at(2).body), (json{{"acceptance_run", "acr_0123456789abcdef"}}));
  EXPECT_EQ(run({"poc-runs", "record", "dc-poc"}).rc, 2);
  EXPECT_EQ(run({"poc-runs", "record", "dc-poc", "--item", "x", "--acceptance-run", "y"}).rc, 2);
  EXPECT_EQ(run({"poc-runs", "record", "dc-poc", "--item", "x", "--passed", "--value", "1"}).rc, 2);
  api_.on("GET /api/v1/acceptance-runs/acr_1/report", {200, "# Acceptance run acr_1\n", "text/markdown; charset=utf-8"});
  r = run({"acceptance-runs", "report", "acr_1", "--lang", "zh"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "# Acceptance run acr_1\n");
  EXPECT_EQ(api_.requests().back().params.find("lang")->second, "zh");
}

TEST_F(CliTest, ConflictIsExitCode1) {
  api_.on("PUT /api/v1/tenants/acme",
          {409, R"({"status":409,"title":"Conflict","detail":"version 3 is stale; current is 4"})"});
  CliRun r = run({"tenants", "update", "acme", "-f", "-"}, "{\"version\": 3}");
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "error: version 3 is stale; current is 4\n");
}

TEST_F(CliTest, GpuModelsAreReadOnly) {
  CliRun r = run({"gpu-models", "create", "-f", "x"});
  EXPECT_EQ(r.rc, 2);
  api_.on("GET /api/v1/gpu-models", {200, R"({"items":[{"id":"h100-sxm5-80gb","name":"NVIDIA H100 SXM5 80GB",
      "vendor":"nvidia","form_factor":"sxm","memory_gib":80,"memory_type":"hbm3","fp16_tflops":"989.4"}]})"});
  r = run({"gpu-models", "list", "--vendor", "nvidia"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("h100-sxm5-80gb   NVIDIA H100 SXM5 80GB   nvidia   sxm    80 GiB hbm3"), std::string::npos)
      << r.out;
  EXPECT_EQ(api_.requests().back().params.find("vendor")->second, "nvidia");
}

TEST_F(CliTest, JobsAreImmutable) {
  EXPECT_EQ(run({"jobs", "update", "train", "-f", "-"}, "{}").rc, 2);
  EXPECT_EQ(run({"jobs", "delete", "train"}).rc, 2);
  EXPECT_TRUE(api_.requests().empty());
}

TEST_F(CliTest, JobVerbs) {
  api_.on("POST /api/v1/jobs", {201, R"({"id":"job_1","name":"train","status":{"state":"pending"}})"});
  api_.on("POST /api/v1/jobs/train/cancel", {200, R"({"id":"job_1","name":"train","status":{"state":"cancelled"}})"});
  api_.on("GET /api/v1/jobs/train/events", {200, R"({"items":[
      {"at":"2026-01-01T00:00:00.000Z","from":"","to":"pending","reason":"submitted"},
      {"at":"2026-01-01T00:05:00.000Z","from":"pending","to":"cancelled","reason":"cancelled by alice"}]})"});
  CliRun r = run({"jobs", "submit", "-f", "-"}, "name: train\nworkers: 2\n");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "submitted job train (job_1), state pending\n");

  r = run({"jobs", "cancel", "train"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "cancel requested for job train, state cancelled\n");

  r = run({"jobs", "events", "train"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out,
            "AT                         FROM      TO          REASON\n"
            "2026-01-01T00:00:00.000Z   -         pending     submitted\n"
            "2026-01-01T00:05:00.000Z   pending   cancelled   cancelled by alice\n");
}

TEST_F(CliTest, Quotas) {
  api_.on("GET /api/v1/projects/vision/quota", {200, R"({"gpus_per_model":{"h100-sxm5-80gb":64,"*":8},
      "max_concurrent_jobs":4,"budget_action":"hold"})"});
  api_.on("PUT /api/v1/projects/vision/quota", {200, R"({"gpus_per_model":{},"budget_action":"alert"})"});
  CliRun r = run({"quotas", "get", "vision"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out,
            "gpus_per_model:\n"
            "  *:              8\n"
            "  h100-sxm5-80gb: 64\n"
            "max_gpus_per_job:    unlimited\n"
            "max_concurrent_jobs: 4\n"
            "monthly_budget:      none\n"
            "budget_action:       hold\n");

  // The {quota: ...} wrapper of `projects get -o yaml` is accepted.
  r = run({"quotas", "set", "vision", "-f", "-"}, "quota:\n  gpus_per_model: {}\n  budget_action: alert\n");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(api_.requests().back().body), json::parse(R"({"gpus_per_model":{},"budget_action":"alert"})"));
  EXPECT_NE(r.out.find("gpus_per_model:      none (no GPU may be used)\n"), std::string::npos) << r.out;

  // This month's spending against the budget, in the tenant's currency, and the hold in force.
  api_.on("GET /api/v1/projects/vision/quota", {200, R"({"gpus_per_model":{"h100-sxm5-80gb":64},
      "max_gpus_per_job":32,"max_concurrent_jobs":20,"monthly_budget":"1000.00","budget_action":"hold",
      "currency":"USD","budget":{"monthly":"1000.00","month":"2026-01","spent":"1012.50","remaining":"-12.50",
      "burn":[{"date":"2026-01-01","spent":"1012.50","remaining":"-12.50"}],"projected_month_end":"31387.50",
      "projected_over":true},"budget_hold":{"text":"budget: Project vision: month-to-date cost 1012.50 USD",
      "text_message":{"code":"sched.hold.budget","args":{}}}})"});
  r = run({"quotas", "get", "vision"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out,
            "gpus_per_model:\n"
            "  h100-sxm5-80gb: 64\n"
            "max_gpus_per_job:    32\n"
            "max_concurrent_jobs: 20\n"
            "monthly_budget:      1000.00 USD\n"
            "budget_action:       hold\n"
            "spent:               1012.50 USD (2026-01, month to date)\n"
            "remaining:           -12.50 USD\n"
            "projected_month_end: 31387.50 USD (over budget)\n"
            "budget_hold:         budget: Project vision: month-to-date cost 1012.50 USD\n");

  // `quotas set` prints the server's warnings on standard error; -o json keeps them in the answer.
  api_.on("PUT /api/v1/projects/vision/quota", {200, R"({"gpus_per_model":{"h100-sxm5-80gb":8},
      "budget_action":"hold","currency":"USD","budget":null,"budget_hold":null,
      "warnings":[{"text":"project vision now holds 16 NVIDIA H100 SXM5 80GB GPUs, above its limit of 8: running jobs keep running",
      "text_message":{"code":"api.quota.warn.gpus","args":{"project":"vision"}}}]})"});
  r = run({"quotas", "set", "vision", "-f", "-"}, "gpus_per_model: {h100-sxm5-80gb: 8}\n");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err,
            "warning: project vision now holds 16 NVIDIA H100 SXM5 80GB GPUs, above its limit of 8: running jobs keep "
            "running\n");
  EXPECT_EQ(r.out.find("warning"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("monthly_budget:      none\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("spent:"), std::string::npos) << r.out;  // no budget, nothing burns down
  r = run({"-o", "json", "quotas", "set", "vision", "-f", "-"}, "gpus_per_model: {h100-sxm5-80gb: 8}\n");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(json::parse(r.out)["warnings"][0]["text_message"]["code"], "api.quota.warn.gpus") << r.out;
}

TEST_F(CliTest, Tokens) {
  api_.on("POST /api/v1/tokens", {201, R"({"id":"tok_1","user_id":"usr_1","name":"laptop","role":"viewer",
      "expires_at":"2026-01-31T01:00:00.000Z","token":"gpr_secret"})"});
  api_.on("GET /api/v1/tokens", {200, R"({"items":[{"id":"tok_1","user_id":"usr_1","name":"laptop","role":"viewer",
      "expires_at":null,"revoked":false,"created_at":"2026-01-01T00:00:00.000Z"}],"next_after":null})"});
  api_.on("DELETE /api/v1/tokens/tok_1", {204, ""});

  CliRun r = run({"tokens", "create", "--user", "alice", "--name", "laptop", "--expires-in", "30d"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(api_.requests().back().body),
            json::parse(R"({"user":"alice","name":"laptop","expires_at":"2026-01-31T01:00:00.000Z"})"));
  EXPECT_NE(r.out.find("token:      gpr_secret\n"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("shown only once"), std::string::npos);
  EXPECT_NE(r.out.find("expires_at: 2026-01-31T01:00:00.000Z\n"), std::string::npos) << r.out;

  r = run({"tokens", "create", "--user", "alice", "--name", "x", "--expires-at", "not-a-date"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--expires-at"), std::string::npos) << r.err;
  r = run({"tokens", "create", "--user", "alice", "--name", "x", "--expires-in", "5w"});
  EXPECT_EQ(r.rc, 2);

  r = run({"tokens", "list", "--user", "alice"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out,
            "ID      NAME     USER    ROLE     EXPIRES_AT   REVOKED   AGE\n"
            "tok_1   laptop   usr_1   viewer   never        no        60m\n");
  EXPECT_EQ(api_.requests().back().params.find("user")->second, "alice");

  r = run({"tokens", "revoke", "tok_1"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "revoked token tok_1\n");
}

TEST_F(CliTest, UnauthorizedGetsATokenHint) {
  api_.on("GET /api/v1/users", {401, R"({"status":401,"title":"Unauthorized","detail":"missing bearer token"})"});
  env_.erase("GPURENT_TOKEN");
  CliRun r = run({"users", "list"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(api_.requests().at(0).authorization, "");
  EXPECT_NE(r.err.find("error: missing bearer token\nhint: no token was sent"), std::string::npos) << r.err;

  r = run({"users", "list", "--token", "gpr_bad"});
  EXPECT_NE(r.err.find("the token from --token was refused"), std::string::npos) << r.err;
}

TEST_F(CliTest, TokenFileFlag) {
  api_.on("GET /api/v1/users", {200, R"({"items":[]})"});
  std::string f = temp_file("admin-token", "gpr_from_file\n");
  CliRun r = run({"users", "list", "--token-file", f});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(api_.requests().at(0).authorization, "Bearer gpr_from_file");

  r = run({"users", "list", "--token-file", f, "--token", "x"});
  EXPECT_EQ(r.rc, 2);
  r = run({"users", "list", "--token-file", "/no/such/token"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("/no/such/token"), std::string::npos);
}

TEST_F(CliTest, UnreachableServerIsExitCode3) {
  CliRun r = run({"nodes", "list", "--server", "http://127.0.0.1:1", "--timeout", "2"});
  EXPECT_EQ(r.rc, 3);
  EXPECT_NE(r.err.find("http://127.0.0.1:1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("hint: the address came from --server"), std::string::npos) << r.err;
}

TEST_F(CliTest, BadAddressIsAUsageErrorOnlyWhenGivenAsAFlag) {
  CliRun r = run({"nodes", "list", "--server", "ftp://x"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("unsupported scheme"), std::string::npos) << r.err;
  env_["GPURENT_SERVER"] = "http://h:99999";
  r = run({"nodes", "list"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("(from GPURENT_SERVER)"), std::string::npos) << r.err;
}

TEST_F(CliTest, UsageErrorsAreExitCode2) {
  for (std::vector<std::string> args : std::vector<std::vector<std::string>>{{},
                                                                             {"nodes"},
                                                                             {"nodes", "frobnicate"},
                                                                             {"nosuch"},
                                                                             {"nodes", "get"},
                                                                             {"nodes", "list", "--limit", "0"},
                                                                             {"nodes", "list", "-o", "xml"},
                                                                             {"tenants", "list", "--gpu-model", "x"},
                                                                             {"serve", "--port", "70000"},
                                                                             {"serve", "--log-level", "loud"}}) {
    CliRun r = run(args);
    EXPECT_EQ(r.rc, 2) << ::testing::PrintToString(args);
    EXPECT_NE(r.err.find("error: "), std::string::npos) << ::testing::PrintToString(args);
  }
  CliRun r = run({"-s", "http://x:1", "tenants", "list", "--gpu-model", "x"});
  EXPECT_NE(r.err.find("run `gpurent tenants list --help` for usage"), std::string::npos) << r.err;
  EXPECT_TRUE(api_.requests().empty());
}

TEST_F(CliTest, UnknownCommandsNameTheCommandAndSuggestTheNearest) {
  CliRun r = run({"nodse", "list"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("unknown command 'nodse' for 'gpurent'; did you mean nodes?"), std::string::npos) << r.err;
  r = run({"jobs", "ssh", "x"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("unknown command 'ssh' for 'gpurent jobs'; the commands are: list, get, submit"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("run `gpurent jobs --help` for usage"), std::string::npos) << r.err;
  r = run({"-s", "http://x:1", "jobs", "lsit"});  // a flag's value is not taken for a command
  EXPECT_NE(r.err.find("unknown command 'lsit' for 'gpurent jobs'; did you mean list?"), std::string::npos) << r.err;
  r = run({"jobs", "get", "logs"});  // a leaf's positional is not a command
  EXPECT_EQ(r.err.find("unknown command"), std::string::npos) << r.err;
  EXPECT_TRUE(api_.requests().size() == 1);
}

TEST_F(CliTest, EnumFiltersAreCheckedBeforeAnythingIsSent) {
  CliRun r = run({"jobs", "list", "--state", "runing"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("runing"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("running"), std::string::npos) << r.err;  // the allowed values are named
  for (std::vector<std::string> args : std::vector<std::vector<std::string>>{
           {"nodes", "list", "--state", "up"},
           {"alerts", "list", "--state", "open"},
           {"allocations", "list", "--state", "active"},
           {"measurements", "list", "--kind", "tflops"},
           {"gpu-models", "list", "--vendor", "nvdia"}}) {
    EXPECT_EQ(run(args).rc, 2) << ::testing::PrintToString(args);
  }
  EXPECT_TRUE(api_.requests().empty());
  api_.on("GET /api/v1/jobs?state=running", {200, R"({"items":[],"next_after":null})"});
  EXPECT_EQ(run({"jobs", "list", "--state", "running"}).rc, 0);
  // One description per flag: --state says what it takes, reference filters say id or name.
  r = run({"jobs", "list", "--help"});
  EXPECT_NE(r.out.find("one of: pending, admitted, running"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("only those of this project (id or name)"), std::string::npos) << r.out;
}

TEST_F(CliTest, JsonOutputMakesErrorsProblemDocuments) {
  api_.on("GET /api/v1/jobs/nosuch",
          {404, R"({"type":"about:blank","title":"Not Found","status":404,"detail":"jobs/nosuch not found"})"});
  CliRun r = run({"-o", "json", "jobs", "get", "nosuch"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "");
  json doc = json::parse(r.err);
  EXPECT_EQ(doc["status"], 404);
  EXPECT_EQ(doc["detail"], "jobs/nosuch not found");
  EXPECT_EQ(doc["exit_code"], 1);
  r = run({"jobs", "list", "--state", "runing", "-o", "json"});  // a usage error
  EXPECT_EQ(r.rc, 2);
  doc = json::parse(r.err);
  EXPECT_EQ(doc["exit_code"], 2);
  EXPECT_NE(doc["detail"].get<std::string>().find("runing"), std::string::npos);
  r = run({"--output=json", "nodse"});
  EXPECT_EQ(json::parse(r.err)["detail"], "unknown command 'nodse' for 'gpurent'; did you mean nodes?");
  r = run({"-o", "json", "-s", "http://127.0.0.1:1", "nodes", "list"});  // unreachable
  EXPECT_EQ(r.rc, 3);
  doc = json::parse(r.err);
  EXPECT_EQ(doc["exit_code"], 3);
  EXPECT_TRUE(doc.contains("hint")) << doc.dump();
  r = run({"version", "-o", "json"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_TRUE(json::parse(r.out).contains("version")) << r.out;
}

TEST_F(CliTest, InvoicesShowDefaultsToThisMonth) {
  api_.on("GET /api/v1/invoices?month=2026-01",
          {200, R"({"tenant":"acme","period":{"from":"2026-01-01T00:00:00.000Z","to":"2026-02-01T00:00:00.000Z"},
                    "sections":[],"totals":{}})"});
  CliRun r = run({"invoices", "show"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("nothing billed in this period"), std::string::npos) << r.out;
  EXPECT_EQ(run({"invoices", "show", "--month", "2026-01", "--from", "2026-01-01"}).rc, 2);
  EXPECT_EQ(run({"invoices", "show", "--from", "2026-01-01"}).rc, 2);
}

TEST_F(CliTest, JobsListNewestFirstAndWatch) {
  api_.on("GET /api/v1/jobs", {200, R"({"items":[
      {"name":"old","project":"p","kind":"training","workers":1,"gpus_per_worker":8,"created_at":"2025-12-30T00:00:00.000Z",
       "status":{"state":"succeeded"}},
      {"name":"new","project":"p","kind":"training","workers":2,"gpus_per_worker":8,"created_at":"2026-01-01T00:30:00.000Z",
       "status":{"state":"running"}}],"next_after":null})"});
  CliRun r = run({"jobs", "list"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_LT(r.out.find("new "), r.out.find("old ")) << r.out;
  EXPECT_NE(r.out.find("2x8"), std::string::npos) << r.out;  // workers x GPUs
  r = run({"jobs", "list", "--watch", "--interval", "1", "--count", "2"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(api_.requests().size(), 3u);  // one plain listing, then two watched ones
  size_t first = r.out.find("every 1s"), second = r.out.find("every 1s", first + 1);
  EXPECT_NE(second, std::string::npos) << r.out;
  EXPECT_EQ(run({"nodes", "list", "--watch"}).rc, 2);  // jobs only
  EXPECT_EQ(run({"jobs", "list", "--interval", "5"}).rc, 2);  // without --watch it would be ignored
}

TEST_F(CliTest, HelpAllListsEveryLeafFlag) {
  CliRun r = run({"--help-all"});
  EXPECT_EQ(r.rc, 0);
  for (const char* s : {"gpurent jobs list", "--state", "gpurent invoices show", "--export", "gpurent serve",
                        "--demo-days", "gpurent advise quotes", "gpurent tokens create"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
}

TEST_F(CliTest, HelpAndVersion) {
  CliRun r = run({"--help"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("nodes"), std::string::npos);
  r = run({"offers", "list", "--help"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("--gpu-model"), std::string::npos) << r.out;
  r = run({"serve", "--help"});
  EXPECT_EQ(r.rc, 0);
  for (const char* flag : {"--host", "--port", "--db", "--catalog", "--admin-token-file", "--data-dir", "--static-dir",
                           "--demo", "--demo-days", "--demo-clock", "--max-body-bytes", "--threads", "--no-sync-full", "--log-level"})
    EXPECT_NE(r.out.find(flag), std::string::npos) << flag;
  r = run({"version"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_EQ(r.out.rfind("gpurent ", 0), 0u);
}

TEST_F(CliTest, ServeMapsEveryFlagOntoServerOptions) {
  CliRun r = run({"serve"});
  EXPECT_EQ(r.rc, 0) << r.err;
  ASSERT_TRUE(served_);
  ServerOptions d;
  EXPECT_EQ(served_->host, d.host);
  EXPECT_EQ(served_->port, d.port);
  EXPECT_EQ(served_->db_path, d.db_path);
  EXPECT_EQ(served_->sync_full, true);
  EXPECT_EQ(served_->demo, false);
  EXPECT_EQ(served_->threads, d.threads);
  EXPECT_EQ(served_->max_body_bytes, d.max_body_bytes);
  EXPECT_EQ(served_->log_level, d.log_level);

  served_.reset();
  r = run({"serve",
           "--host",
           "0.0.0.0",
           "--port",
           "0",
           "--db",
           "/tmp/g.db",
           "--catalog",
           "cat.json",
           "--admin-token-file",
           "adm",
           "--data-dir",
           "data",
           "--static-dir",
           "web/dist",
           "--demo",
           "--max-body-bytes",
           "2048",
           "--threads",
           "4",
           "--no-sync-full",
           "--log-level",
           "debug"});
  EXPECT_EQ(r.rc, 0) << r.err;
  ASSERT_TRUE(served_);
  EXPECT_EQ(served_->host, "0.0.0.0");
  EXPECT_EQ(served_->port, 0);
  EXPECT_EQ(served_->db_path, "/tmp/g.db");
  EXPECT_EQ(served_->catalog_path, "cat.json");
  EXPECT_EQ(served_->admin_token_file, "adm");
  EXPECT_EQ(served_->data_dir, "data");
  EXPECT_EQ(served_->static_dir, "web/dist");
  EXPECT_TRUE(served_->demo);
  EXPECT_EQ(served_->max_body_bytes, 2048u);
  EXPECT_EQ(served_->threads, 4);
  EXPECT_FALSE(served_->sync_full);
  EXPECT_EQ(served_->log_level, "debug");

  // Flags of a mode the server does not run in are said, not ignored.
  served_.reset();
  r = run({"serve", "--slurm-conf", "/etc/slurm/slurm.conf"});  // --executor sim
  EXPECT_EQ(r.rc, 2);
  EXPECT_FALSE(served_);
  EXPECT_NE(r.err.find("--slurm-conf: is read only with --executor slurm (this server runs --executor sim)"),
            std::string::npos)
      << r.err;
  r = run({"serve", "--executor", "slurm", "--local-gpus", "2"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--local-gpus: is read only with --executor local"), std::string::npos) << r.err;
  EXPECT_EQ(run({"serve", "--demo-days", "2"}).rc, 2);  // without --demo
  EXPECT_FALSE(served_);
  r = run({"serve", "--executor", "slurm", "--slurm-conf", "s.conf", "--slurm-driver", "550.90.07"});
  EXPECT_EQ(r.rc, 0) << r.err;
  ASSERT_TRUE(served_);
  EXPECT_EQ(served_->slurm_conf, "s.conf");
}

// The CLI's own errors built from the message catalogues read in the locale's language; text
// given as text stays English; LANG=C reads English.
TEST_F(CliTest, OwnErrorsFollowTheLocale) {
  env_["LANG"] = "zh_CN.UTF-8";
  CliRun r = run({"serve", "--instance-ports", "2-1"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_EQ(r.err,
            "error: --instance-ports：必须是 LOW-HIGH 形式，两个 1024 到 65535 之间的端口且 LOW 不大于 HIGH，例如 "
            "30000-30999\n");
  r = run({"serve", "--instance-ports", "2-1", "-o", "json"});
  EXPECT_EQ(json::parse(r.err)["errors"][0]["reason"],
            "必须是 LOW-HIGH 形式，两个 1024 到 65535 之间的端口且 LOW 不大于 HIGH，例如 30000-30999")
      << r.err;
  env_["LANG"] = "C";
  r = run({"serve", "--instance-ports", "2-1"});
  EXPECT_EQ(r.err.rfind("error: --instance-ports: must be LOW-HIGH", 0), 0u) << r.err;
  env_.erase("LANG");
}

TEST_F(CliTest, ConfigFileSuppliesServerAndToken) {
  env_.erase("GPURENT_SERVER");
  env_.erase("GPURENT_TOKEN");
  api_.on("GET /api/v1/suppliers", {200, R"({"items":[]})"});
  std::string cfg = temp_file("config.yaml", "server: " + api_.url() + "\ntoken: gpr_cfg\n");
  CliRun r = run({"--config", cfg, "suppliers", "list"});
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(api_.requests().at(0).authorization, "Bearer gpr_cfg");
}

}  // namespace
}  // namespace gpurent

namespace gpurent {
namespace {

TEST_F(CliTest, AdvisePostsTheInputAndPrintsTheArithmeticInTheChosenLanguage) {
  api_.on("POST /api/v1/advise/suppliers",
          {200, R"({"suppliers":[{"name":"dc-a","score":"72.5","hard_failures":[],"share_pct":"100.0"},
                                 {"name":"dc-b","score":"40.0","hard_failures":["exit_path_tested"],"share_pct":"0.0"}],
                   "split":{"text":"dc-a takes everything.","text_message":{"code":"x"}},
                   "steps":[{"text":"dc-a: score","text_message":{"code":"y"},"formula":"725 ÷ 10","value":"72.5"}]})"});
  // --lang asks the server for its language (?lang=); the server words the texts.
  api_.on("POST /api/v1/advise/suppliers?lang=zh",
          {200, R"({"suppliers":[],"split":{"text":"全部给 dc-a。"},
                   "steps":[{"text":"dc-a：得分","formula":"725 ÷ 10","value":"72.5"}]})"});
  CliRun r = run({"advise", "suppliers", "-f", "-"}, "split:\n  floor: 50\n");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(api_.requests().at(0).body), json::parse(R"({"split":{"floor":50}})"));
  EXPECT_NE(r.out.find("dc-b"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("exit_path_tested"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("dc-a takes everything."), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  - dc-a: score: 725 ÷ 10"), std::string::npos) << r.out;
  r = run({"advise", "suppliers", "-f", "-", "--lang", "zh"}, "{}");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("计算过程:\n  - dc-a：得分: 725 ÷ 10"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("全部给 dc-a。"), std::string::npos) << r.out;
  r = run({"advise", "suppliers", "-f", "-", "-o", "json"}, "{}");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["suppliers"].size(), 2u);
  // A 422 names the field; a missing file is a local error; an unknown calculator is a usage error.
  api_.on("POST /api/v1/advise/mix",
          {422, R"({"title":"Validation failed","status":422,"detail":"demand: is required",
                   "errors":[{"field":"demand","reason":"is required"}]})",
           "application/problem+json"});
  r = run({"advise", "mix", "-f", "-"}, "{}");
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("demand"), std::string::npos) << r.err;
  r = run({"advise", "mix", "-f", "/no/such/input.yaml"});
  EXPECT_NE(r.rc, 0);
  // Options with no reserved mode: no best single level (null), which the table shows as "-"
  // (reading it aborted the command after half its output).
  api_.on("POST /api/v1/advise/mix", {200, R"({"expected_cost":"120.00","currency":"USD","pure_on_demand_cost":"150.00",
                   "best_single_level":null,"plan":{"reserved":[]}})"});
  r = run({"advise", "mix", "-f", "-"}, "{}");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("best single level  -"), std::string::npos) << r.out;
  EXPECT_EQ(run({"advise", "horoscope", "-f", "-"}, "{}").rc, 2);
}

}  // namespace
}  // namespace gpurent

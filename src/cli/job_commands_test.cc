// `jobs cost` and `jobs get` in process against a fake API: the cost lines, charges and credits
// apart per currency, the runs' offer, supplier, unit price and currency, the placement's nodes
// by name, the API documents under -o json/yaml, and a job view that survives a cost it cannot read.
#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "cli/cli.h"
#include "cli/fake_api_for_test.h"

namespace gpurent {
namespace {

using json = nlohmann::json;

using testing::CliRun;

const char* const kJob = R"({
  "id": "job_00000000000000a1", "name": "train", "project": "vision", "project_id": "prj_00000000000000b1",
  "kind": "training", "workers": 1, "gpus_per_worker": 2,
  "status": {"state": "running", "reason": "running",
             "placement": [{"replica": 0, "worker": 0, "node": "nod_00000000000000c1", "gpus": [0, 1],
                            "nvlink_domain": "hgx0"}]},
  "created_at": "2026-01-01T00:00:00.000Z"
})";

const char* const kCost = R"({
  "job_id": "job_00000000000000a1", "job": "train", "project_id": "prj_00000000000000b1", "project": "vision",
  "tenant_id": "ten_00000000000000d1", "tenant": "acme", "job_created_at": "2026-01-01T00:00:00.000Z",
  "period": {"from": "2026-01-01T00:00:00.000Z", "to": "2026-01-01T01:00:00.000Z"}, "period_capped": false,
  "costs": {"CNY": {"charges": "35.00", "credits": "-0.58", "total": "34.42", "reserved_covered_value": "0.00",
                    "line_count": 2, "lines": [
    {"kind": "usage", "rule": "on_demand", "project": "vision", "job": "train", "allocation": "alc_00000000000000e1",
     "offer": "h100", "billing_mode": "on_demand", "quantity": "7200", "unit": "GPU-second", "unit_price": "17.50",
     "price_unit": "GPU-hour", "from": "2026-01-01T00:00:00.000Z", "to": "2026-01-01T01:00:00.000Z",
     "amount": "35.00", "amount_exact": "35.00", "description": "On-demand GPU time"},
    {"kind": "credit", "rule": "sla_outage", "project": "vision", "job": "train", "allocation": "alc_00000000000000e1",
     "offer": "h100", "billing_mode": "", "quantity": "0.29", "unit": "CNY", "unit_price": "-2",
     "price_unit": "of fee", "from": "2026-01-01T00:30:00.000Z", "to": "2026-01-01T00:31:00.000Z",
     "amount": "-0.58", "amount_exact": "-0.583333", "description": "Outage"}]}},
  "allocations": [{"id": "alc_00000000000000e1", "state": "open", "offer_id": "off_00000000000000f1", "offer": "h100",
    "supplier_id": "sup_0000000000000001", "supplier": "dc", "contract_id": null, "contract": null,
    "billing_mode": "on_demand", "unit_price": "17.50", "price_basis": "on_demand", "price_unit": "GPU-hour",
    "currency": "CNY", "gpu_milli": 2000,
    "nodes": [{"node_id": "nod_00000000000000c1", "node": "n1", "gpus": [0, 1]}],
    "running_at": "2026-01-01T00:00:00.000Z", "ended_at": null}],
  "unpriced_allocations": []
})";

const char* const kLinesTable =
    "  KIND     RULE         OFFER   MODE        QUANTITY   UNIT         UNIT PRICE   PER        AMOUNT\n"
    "  usage    on_demand    h100    on_demand       7200   GPU-second        17.50   GPU-hour    35.00\n"
    "  credit   sla_outage   h100    -               0.29   CNY                  -2   of fee      -0.58\n";

const char* const kRunsTable =
    "Billed under (1 run):\n"
    "  OFFER   SUPPLIER   MODE        PRICE/GPU-HOUR   CURRENCY   RUNNING_AT                 ENDED_AT   NODES\n"
    "  h100    dc         on_demand            17.50   CNY        2026-01-01T00:00:00.000Z   running    n1:0-1\n";

class JobCommandsTest : public testing::CliFakeApiTest {
 protected:
  std::vector<std::string> paths() const {
    std::vector<std::string> out;
    for (const auto& r : api_.requests()) out.push_back(r.method + " " + r.path);
    return out;
  }
};

TEST_F(JobCommandsTest, CostPrintsTheLinesAndChargesAndCreditsApartPerCurrency) {
  api_.on("GET /api/v1/jobs/train/cost", {200, kCost});
  CliRun r = run({"jobs", "cost", "train"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, std::string("job:    train (project vision)\n"
                               "period: 2026-01-01T00:00:00.000Z .. 2026-01-01T01:00:00.000Z\n"
                               "\n"
                               "CNY\n") +
                       kLinesTable + "  charges 35.00  credits -0.58  total 34.42 CNY\n\n" + kRunsTable);
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(paths(), std::vector<std::string>{"GET /api/v1/jobs/train/cost"});
}

TEST_F(JobCommandsTest, CostUnderJsonAndYamlIsTheApiDocument) {
  api_.on("GET /api/v1/jobs/train/cost", {200, kCost});
  CliRun r = run({"jobs", "cost", "train", "-o", "json"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(r.out), json::parse(kCost));
  r = run({"-o", "yaml", "jobs", "cost", "train"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("credits: \"-0.58\"\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("period_capped: false\n"), std::string::npos) << r.out;
}

TEST_F(JobCommandsTest, CostOfAJobThatHasNotRunSaysNothingIsBilled) {
  json cost = json::parse(kCost);
  cost["costs"] = json::object();
  cost["allocations"] = json::array();
  api_.on("GET /api/v1/jobs/queued/cost", {200, cost.dump()});
  CliRun r = run({"jobs", "cost", "queued"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("\nnothing billed yet\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nBilled under: nothing yet (the job has not run)\n"), std::string::npos) << r.out;
}

TEST_F(JobCommandsTest, CostSaysWhenThePeriodIsCapped) {
  json cost = json::parse(kCost);
  cost["period_capped"] = true;
  cost["job_created_at"] = "2024-01-01T00:00:00.000Z";
  api_.on("GET /api/v1/jobs/old/cost", {200, cost.dump()});
  CliRun r = run({"jobs", "cost", "old"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("note:   submitted 2024-01-01T00:00:00.000Z: only the last 400 days are rated"),
            std::string::npos)
      << r.out;
}

TEST_F(JobCommandsTest, CostSaysWhatAReservedCommitmentCoveredApartFromTheTotal) {
  json cost = json::parse(kCost);
  cost["costs"]["CNY"]["reserved_covered_value"] = "12.80";
  api_.on("GET /api/v1/jobs/train/cost", {200, cost.dump()});
  CliRun r = run({"jobs", "cost", "train"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(
      r.out.find("  charges 35.00  credits -0.58  total 34.42 CNY\n"
                 "  covered by a reserved commitment: 12.80 CNY (billed with the commitment, not in the total)\n"),
      std::string::npos)
      << r.out;
}

TEST_F(JobCommandsTest, CostOfAMissingJobFails) {
  api_.on("GET /api/v1/jobs/nosuch/cost",
          {404, R"({"type":"about:blank","title":"Not Found","status":404,"detail":"jobs/nosuch not found"})",
           "application/problem+json"});
  CliRun r = run({"jobs", "cost", "nosuch"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("jobs/nosuch not found"), std::string::npos) << r.err;
}

TEST_F(JobCommandsTest, GetShowsNodeNamesTheOfferSupplierPriceAndTheCostSoFar) {
  api_.on("GET /api/v1/jobs/train", {200, kJob});
  api_.on("GET /api/v1/jobs/job_00000000000000a1/cost", {200, kCost});
  CliRun r = run({"jobs", "get", "train"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "");
  // The placement names its node; the node's id appears nowhere.
  const size_t placement = r.out.find(
      "Placement (1 worker):\n"
      "  REPLICA   WORKER   NODE   GPUS   SHARE   NVLINK_DOMAIN\n"
      "        0        0   n1     0-1    -       hgx0\n");
  EXPECT_NE(placement, std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("nod_00000000000000c1"), std::string::npos) << r.out;
  // Then what it runs under, then its cost so far: charges and credits apart.
  const size_t runs = r.out.find(kRunsTable);
  EXPECT_NE(runs, std::string::npos) << r.out;
  const size_t cost = r.out.find(
      "\nCost so far (2026-01-01T00:00:00.000Z .. 2026-01-01T01:00:00.000Z):\n"
      "  charges 35.00  credits -0.58  total 34.42 CNY\n");
  EXPECT_NE(cost, std::string::npos) << r.out;
  EXPECT_LT(placement, runs);
  EXPECT_LT(runs, cost);
  EXPECT_EQ(paths(),
            (std::vector<std::string>{"GET /api/v1/jobs/train", "GET /api/v1/jobs/job_00000000000000a1/cost"}));
}

TEST_F(JobCommandsTest, GetNamesTheRatedPriceWhenItIsNotTheModesOwn) {
  json cost = json::parse(kCost);
  cost["allocations"][0]["billing_mode"] = "spot";
  cost["allocations"][0]["price_basis"] = "on_demand";
  api_.on("GET /api/v1/jobs/train", {200, kJob});
  api_.on("GET /api/v1/jobs/job_00000000000000a1/cost", {200, cost.dump()});
  CliRun r = run({"jobs", "get", "train"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("  h100    dc         spot (on_demand price)            17.50   CNY"), std::string::npos)
      << r.out;
}

TEST_F(JobCommandsTest, GetUnderJsonIsTheJobDocumentAlone) {
  api_.on("GET /api/v1/jobs/train", {200, kJob});
  CliRun r = run({"-o", "json", "jobs", "get", "train"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(r.out), json::parse(kJob));
  EXPECT_EQ(paths(), std::vector<std::string>{"GET /api/v1/jobs/train"});
}

TEST_F(JobCommandsTest, GetShowsTheJobWhenItsCostCannotBeRead) {
  api_.on("GET /api/v1/jobs/train", {200, kJob});
  api_.on("GET /api/v1/jobs/job_00000000000000a1/cost",
          {500, R"({"type":"about:blank","title":"Internal Server Error","status":500,"detail":"rating failed"})",
           "application/problem+json"});
  CliRun r = run({"jobs", "get", "train"});
  EXPECT_EQ(r.rc, 0);
  EXPECT_NE(r.out.find("Placement (1 worker):"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nod_00000000000000c1"), std::string::npos) << r.out;  // no names without the cost
  EXPECT_EQ(r.out.find("Cost so far"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "warning: the job's cost could not be read: rating failed\n");
}

// `instances start --on` sends where the start goes; `instances preflight` prints the server's advice.
TEST_F(JobCommandsTest, InstanceStartSaysWhereAndPreflightPrintsTheAdvice) {
  api_.on("POST /api/v1/instances/box/start", {200, R"({"name": "box", "state": "requested", "current_job": {"name": "box-3"}})"});
  api_.on("GET /api/v1/instances/box/preflight",
          {200, R"({"instance": "box", "host_free": false, "advice": "its host n1 is available with 0 GPU(s) free"})"});
  CliRun r = run({"instances", "start", "box", "--on", "any_host"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "instance box: requested (job box-3)\n");
  ASSERT_EQ(api_.requests().size(), 1u);
  EXPECT_EQ(json::parse(api_.requests()[0].body), (json{{"on", "any_host"}}));
  r = run({"instances", "start", "box"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(api_.requests()[1].body), json::object()) << "no --on: the server's default (auto)";
  EXPECT_NE(run({"instances", "start", "box", "--on", "home"}).rc, 0);
  EXPECT_EQ(api_.requests().size(), 2u) << "a bad --on sends nothing";
  r = run({"instances", "preflight", "box"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "instance box: its host n1 is available with 0 GPU(s) free\n");
}

// `instances attach|detach` post the volume and how it is mounted, and print what the instance holds.
TEST_F(JobCommandsTest, InstanceAttachAndDetachSayWhatItHolds) {
  api_.on("POST /api/v1/instances/box/attach",
          {200, R"({"name": "box", "volume": {"name": "home", "mount": "/data"},
                    "shared_volumes": [{"name": "team", "mount": "/shared/team", "read_only": true}]})"});
  api_.on("POST /api/v1/instances/box/detach", {200, R"({"name": "box", "shared_volumes": []})"});
  CliRun r = run({"instances", "attach", "box", "team", "--shared", "--read-only"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "instance box: data disk home, shared team at /shared/team (read-only)\n");
  EXPECT_EQ(json::parse(api_.requests()[0].body), (json{{"name", "team"}, {"shared", true}, {"read_only", true}}));
  r = run({"instances", "detach", "box", "home"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "instance box: data disk none\n");
  EXPECT_EQ(json::parse(api_.requests()[1].body), (json{{"name", "home"}}));
}

// `instances save` posts the image's name (and description) and says where to watch it.
TEST_F(JobCommandsTest, InstanceSaveNamesTheImage) {
  api_.on("POST /api/v1/instances/box/image", {202, R"({"id": "img_1", "name": "my-env", "state": "saving"})"});
  CliRun r = run({"instances", "save", "box", "--image", "my-env", "--description", "torch + data tools"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "image my-env (img_1): saving from instance box (gpurent images show my-env)\n");
  ASSERT_EQ(api_.requests().size(), 1u);
  EXPECT_EQ(json::parse(api_.requests()[0].body), (json{{"name", "my-env"}, {"description", "torch + data tools"}}));
  EXPECT_NE(run({"instances", "save", "box"}).rc, 0) << "--image is required";
  EXPECT_EQ(api_.requests().size(), 1u);
}

}  // namespace
}  // namespace gpurent

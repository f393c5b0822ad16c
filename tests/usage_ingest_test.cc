// Usage metering through the real server: POST /api/v1/usage (idempotency, validation naming
// fields, references, permissions), the GET series and totals, the rollup into minutes, the DCGM
// scraper against a tiny exporter served by the test, and durability across kill -9 mid-stream.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include "core/clock.h"
#include "server_fixture.h"

namespace gpurent::testing {
namespace {

using namespace std::chrono_literals;

TimeMs now_ms() { return SystemClock().now(); }
std::string t(TimeMs ms) { return format_rfc3339(ms); }

// Supplier sup-a with node-1 (8 GPUs), tenant acme with project vision and job train-1.
struct World {
  std::string node_id, job_id, project_id, tenant_id;
  std::vector<std::string> uuids;  // node-1's, by index
};

World make_world(const ServerProcess& s) {
  World w;
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("sup-a")), "supplier");
  Resp node = expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("sup-a", "node-1")), "node");
  w.node_id = node.body.at("id").get<std::string>();
  for (const auto& g : node.body.at("gpus")) w.uuids.push_back(g.value("uuid", ""));
  w.tenant_id = expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme")), "tenant").body.at("id");
  w.project_id =
      expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("acme", "vision")), "project").body.at("id");
  w.job_id = expect_2xx(s.admin("POST", "/api/v1/jobs", job_doc("vision", "train-1")), "job").body.at("id");
  return w;
}

json gpu_sample(TimeMs at, const std::string& node, int gpu, int util) {
  return {
      {"at", t(at)},        {"node", node}, {"gpu", gpu}, {"utilization_pct", util}, {"memory_used_mib", 1000 + util},
      {"power_mw", 300'000}};
}
json job_sample(TimeMs at, const std::string& job, int64_t egress, int64_t tokens = 0) {
  return {{"at", t(at)}, {"job", job}, {"egress_bytes", egress}, {"output_tokens", tokens}, {"requests", 1}};
}

std::string gpus_path(const std::string& node, int gpu, TimeMs from, TimeMs to) {
  return "/api/v1/usage/gpus?node=" + node + "&gpu=" + std::to_string(gpu) + "&from=" + t(from) + "&to=" + t(to);
}
std::string jobs_path(const std::string& which, const std::string& ref, TimeMs from, TimeMs to) {
  return "/api/v1/usage/jobs?" + which + "=" + ref + "&from=" + t(from) + "&to=" + t(to);
}

class UsageTest : public ::testing::Test {
 protected:
  void SetUp() override { w = make_world(s); }
  ServerProcess s{{"--no-scheduler"}};
  World w;
  const TimeMs base = (now_ms() - 3600'000) / 60'000 * 60'000;  // a whole minute, an hour ago
};

TEST_F(UsageTest, IngestsAndReadsBackSeriesAndTotals) {
  json body = {{"idempotency_key", "agent-node-1:000001"},
               {"gpu_samples",
                {gpu_sample(base + 15'000, "node-1", 0, 40), gpu_sample(base, "node-1", 0, 80),
                 gpu_sample(base, w.node_id, 1, 10)}},
               {"job_samples", {job_sample(base, w.job_id, 1000, 5), job_sample(base + 60'000, "train-1", 24, 7)}}};
  // A job is named by its id: a name is unique only within its project.
  Resp by_name = s.admin("POST", "/api/v1/usage", body);
  EXPECT_EQ(by_name.status, 422) << by_name.describe();
  EXPECT_NE(by_name.reason_for("job_samples[1].job").find("train-1 is not a job id"), std::string::npos)
      << by_name.describe();
  body["job_samples"][1]["job"] = w.job_id;
  Resp r = s.admin("POST", "/api/v1/usage", body);
  ASSERT_EQ(r.status, 201) << r.describe();
  EXPECT_EQ(r.body.value("duplicate", true), false);
  EXPECT_EQ(r.body.value("gpu_samples", 0), 3);
  EXPECT_EQ(r.body.value("job_samples", 0), 2);

  Resp g = s.admin("GET", gpus_path("node-1", 0, base, base + 60'000));
  ASSERT_EQ(g.status, 200) << g.describe();
  ASSERT_EQ(g.body.at("points").size(), 2u) << g.describe();
  EXPECT_EQ(g.body["points"][0].value("at", ""), t(base));  // time order
  EXPECT_EQ(g.body["points"][0].value("resolution", ""), "raw");
  EXPECT_EQ(g.body["points"][0]["utilization_pct"].value("max", 0), 80);
  EXPECT_EQ(g.body["points"][1]["memory_used_mib"].value("avg", 0), 1040);
  EXPECT_TRUE(g.body.at("next_from").is_null());
  EXPECT_EQ(g.body.value("node_id", ""), w.node_id);

  Resp j = s.admin("GET", jobs_path("job", w.job_id, base, base + 120'000));
  ASSERT_EQ(j.status, 200) << j.describe();
  EXPECT_EQ(j.body.at("totals").value("egress_bytes", 0), 1024);
  EXPECT_EQ(j.body.at("totals").value("output_tokens", 0), 12);
  EXPECT_EQ(j.body.at("totals").value("samples", 0), 2);
  EXPECT_EQ(j.body.at("points").size(), 2u);
  Resp byp = s.admin("GET", jobs_path("project", "vision", base, base + 60'000));
  ASSERT_EQ(byp.status, 200) << byp.describe();
  ASSERT_EQ(byp.body.at("jobs").size(), 1u);
  EXPECT_EQ(byp.body["jobs"][0].value("egress_bytes", 0), 1000);  // the second sample is past `to`
  Resp byt = s.admin("GET", jobs_path("tenant", "acme", base, base + 120'000));
  EXPECT_EQ(byt.body.at("totals").value("requests", 0), 2) << byt.describe();

  // Paging: limit 1 returns one point and where to continue.
  Resp p1 = s.admin("GET", gpus_path("node-1", 0, base, base + 60'000) + "&limit=1");
  ASSERT_EQ(p1.body.at("points").size(), 1u);
  EXPECT_EQ(p1.body.value("next_from", ""), t(base + 15'000));
}

// A job's counters are deltas, at most 10^15 per job and minute over every batch: a meter sending
// running totals is refused before the minute's roll-up (a sum) could pass int64 and stop it for
// every tenant; a retried batch is still a duplicate, and the next minute starts afresh.
TEST_F(UsageTest, AJobsMinuteHoldsAtMostAQuadrillionPerCounter) {
  const int64_t cap = 1'000'000'000'000'000;
  json first = {
      {"idempotency_key", "cap-1"},
      {"job_samples", {job_sample(base + 10'000, w.job_id, cap / 2), job_sample(base + 20'000, w.job_id, 1)}}};
  ASSERT_EQ(s.admin("POST", "/api/v1/usage", first).status, 201);
  json second = {
      {"idempotency_key", "cap-2"},
      {"job_samples", {job_sample(base + 70'000, w.job_id, 5), job_sample(base + 30'000, w.job_id, cap / 2)}}};
  Resp over = s.admin("POST", "/api/v1/usage", second);
  EXPECT_EQ(over.status, 422) << over.describe();
  EXPECT_NE(over.reason_for("job_samples[1].egress_bytes").find("would pass 1000000000000000"), std::string::npos)
      << over.describe();
  EXPECT_EQ(s.admin("POST", "/api/v1/usage", first).status, 200) << "the same batch again: a duplicate";
  second["job_samples"][1]["egress_bytes"] = cap / 2 - 1;
  ASSERT_EQ(s.admin("POST", "/api/v1/usage", second).status, 201) << "exactly the cap";
  json one = {{"idempotency_key", "cap-3"}, {"job_samples", {job_sample(base + 90'000, w.job_id, cap + 1)}}};
  EXPECT_EQ(s.admin("POST", "/api/v1/usage", one).error_fields(),
            std::vector<std::string>{"job_samples[0].egress_bytes"});
  const json totals = s.admin("GET", jobs_path("job", w.job_id, base, base + 120'000)).body;
  EXPECT_EQ(totals.at("totals").value("egress_bytes", int64_t{0}), cap + 5) << totals.dump();
}

TEST_F(UsageTest, RepeatedBatchCountsOnceAndAReusedKeyConflicts) {
  json body = {{"idempotency_key", "k-1"}, {"job_samples", {job_sample(base, w.job_id, 100)}}};
  ASSERT_EQ(s.admin("POST", "/api/v1/usage", body).status, 201);
  json reordered = json::parse(body.dump(2));  // same content, other spacing
  Resp again = s.admin("POST", "/api/v1/usage", reordered);
  ASSERT_EQ(again.status, 200) << again.describe();
  EXPECT_EQ(again.body.value("duplicate", false), true);
  EXPECT_EQ(again.body.value("job_samples", 0), 1);
  body["job_samples"][0]["egress_bytes"] = 101;
  Resp conflict = s.admin("POST", "/api/v1/usage", body);
  ASSERT_EQ(conflict.status, 409) << conflict.describe();
  EXPECT_NE(conflict.body.value("detail", "").find("'k-1'"), std::string::npos);
  Resp j = s.admin("GET", jobs_path("job", w.job_id, base, base + 60'000));
  EXPECT_EQ(j.body.at("totals").value("egress_bytes", 0), 100);
  EXPECT_EQ(j.body.at("totals").value("samples", 0), 1);
}

// One GPU at one time named two ways in a batch (by UUID and by node + index, or by the node's
// name and its id) is refused naming the later sample, not stored twice nor answered with the
// database's own words.
TEST_F(UsageTest, OneGpuNamedTwoWaysInABatchIsRefusedNamingTheSample) {
  const json by_uuid = {{"at", t(base)}, {"uuid", w.uuids.at(0)}, {"utilization_pct", 5}};
  for (const json& second : {by_uuid, gpu_sample(base, w.node_id, 0, 5)}) {
    json b = {{"idempotency_key", "twice-" + second.value("node", std::string("uuid"))},
              {"gpu_samples", {gpu_sample(base, "node-1", 0, 5), second}}};
    Resp r = s.admin("POST", "/api/v1/usage", b);
    ASSERT_EQ(r.status, 422) << r.describe();
    EXPECT_EQ(r.error_fields(), std::vector<std::string>{"gpu_samples[1]"}) << r.describe();
    EXPECT_NE(r.reason_for("gpu_samples[1]").find("named another way"), std::string::npos) << r.describe();
  }
}

TEST_F(UsageTest, ValidationAndReferenceErrorsNameTheField) {
  json bad = {{"idempotency_key", "bad one"},
              {"gpu_samples",
               {{{"at", t(base)}, {"node", "node-1"}, {"gpu", 0}, {"utilization_pct", 101}},
                {{"at", t(base)}, {"node", "node-1"}, {"gpu", 1}, {"utilization_pct", 1.5}}}}};
  Resp r = s.admin("POST", "/api/v1/usage", bad);
  ASSERT_EQ(r.status, 422) << r.describe();
  EXPECT_EQ(r.reason_for("gpu_samples[0].utilization_pct"), "must be at most 100 (got 101)");
  EXPECT_EQ(r.reason_for("gpu_samples[1].utilization_pct"), "must be a whole number");
  EXPECT_FALSE(r.reason_for("idempotency_key").empty());

  json refs = {{"idempotency_key", "refs"},
               {"gpu_samples",
                {gpu_sample(base, "node-9", 0, 1),
                 gpu_sample(base, "node-1", 8, 1),
                 {{"at", t(base)}, {"uuid", "GPU-00000000-0000-0000-0000-000000000000"}, {"utilization_pct", 1}}}},
               {"job_samples", {job_sample(base, "job_00000000000000ff", 1)}}};
  Resp rr = s.admin("POST", "/api/v1/usage", refs);
  ASSERT_EQ(rr.status, 422) << rr.describe();
  EXPECT_NE(rr.reason_for("gpu_samples[0].node").find("node-9"), std::string::npos) << rr.describe();
  EXPECT_NE(rr.reason_for("gpu_samples[1].gpu").find("has no GPU 8"), std::string::npos) << rr.describe();
  EXPECT_NE(rr.reason_for("gpu_samples[2].uuid").find("no GPU with uuid"), std::string::npos) << rr.describe();
  EXPECT_FALSE(rr.reason_for("job_samples[0].job").empty()) << rr.describe();
  // The same errors in Chinese (?lang=zh), each with its message code.
  refs["idempotency_key"] = "refs-zh";
  Resp zh = s.admin("POST", "/api/v1/usage?lang=zh", refs);
  ASSERT_EQ(zh.status, 422) << zh.describe();
  EXPECT_EQ(zh.body.value("detail", ""), "gpu_samples[0].node：没有你可见的 nodes“node-9”（另有 3 处错误）") << zh.describe();
  EXPECT_EQ(zh.reason_for("gpu_samples[1].gpu").rfind("节点“node-1”没有 GPU 8（其 GPU 索引：0, ", 0), 0u) << zh.describe();
  EXPECT_EQ(zh.reason_for("gpu_samples[2].uuid"),
            "你可见的节点上没有 uuid 为“GPU-00000000-0000-0000-0000-000000000000”的 GPU（参见节点的 gpus[].uuid）");
  std::map<std::string, std::string> codes;
  for (const auto& e : zh.body.at("errors")) codes[e.value("field", "")] = e.at("reason_message").value("code", "");
  EXPECT_EQ(codes["gpu_samples[0].node"], "access.ref_not_visible");
  EXPECT_EQ(codes["gpu_samples[1].gpu"], "usage.node_has_no_gpu");
  EXPECT_EQ(codes["gpu_samples[2].uuid"], "usage.uuid_not_visible");
  EXPECT_EQ(codes["job_samples[0].job"], "access.ref_not_visible");

  // A UUID maps through the node's gpus[].uuid; the same GPU named both ways at one time is refused.
  json by_uuid = {{"idempotency_key", "uuid"},
                  {"gpu_samples", {{{"at", t(base)}, {"uuid", w.uuids[3]}, {"utilization_pct", 33}}}}};
  ASSERT_EQ(s.admin("POST", "/api/v1/usage", by_uuid).status, 201);
  Resp g3 = s.admin("GET", gpus_path("node-1", 3, base, base + 1000));
  ASSERT_EQ(g3.body.at("points").size(), 1u) << g3.describe();
  EXPECT_EQ(g3.body["points"][0]["utilization_pct"].value("max", 0), 33);
  by_uuid["idempotency_key"] = "both";
  by_uuid["gpu_samples"].push_back(gpu_sample(base, "node-1", 3, 34));
  Resp both = s.admin("POST", "/api/v1/usage", by_uuid);
  ASSERT_EQ(both.status, 422) << both.describe();
  EXPECT_FALSE(both.reason_for("gpu_samples[1]").empty()) << both.describe();

  EXPECT_EQ(s.admin("POST", "/api/v1/usage", json{{"idempotency_key", "empty"}}).status, 422);
  Resp range = s.admin("GET", "/api/v1/usage/gpus?node=node-1&gpu=0&from=" + t(base) + "&to=" + t(base - 1));
  EXPECT_EQ(range.status, 422);
  EXPECT_FALSE(range.reason_for("to").empty());
}

TEST_F(UsageTest, TenantsReadOnlyTheirOwnJobsAndSuppliersReportOnlyTheirNodes) {
  expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("other")), "tenant other");
  expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("other", "p2")), "project p2");
  std::string other_job = expect_2xx(s.admin("POST", "/api/v1/jobs", job_doc("p2", "theirs")), "job").body.at("id");
  json body = {{"idempotency_key", "two-tenants"},
               {"job_samples", {job_sample(base, w.job_id, 5), job_sample(base, other_job, 7)}}};
  ASSERT_EQ(s.admin("POST", "/api/v1/usage", body).status, 201);

  const std::string member = make_user_token(s, "mia", "tenant_member", "acme");
  EXPECT_EQ(s.req("POST", "/api/v1/usage", member,
                  json{{"idempotency_key", "x"}, {"job_samples", {job_sample(base, w.job_id, 1)}}})
                .status,
            403);
  Resp mine = s.req("GET", jobs_path("job", w.job_id, base, base + 1000), member);
  ASSERT_EQ(mine.status, 200) << mine.describe();
  EXPECT_EQ(mine.body.at("totals").value("egress_bytes", 0), 5);
  EXPECT_EQ(s.req("GET", jobs_path("job", other_job, base, base + 1000), member).status, 404);
  EXPECT_EQ(s.req("GET", jobs_path("tenant", "other", base, base + 1000), member).status, 404);
  Resp own_tenant = s.req("GET", jobs_path("tenant", "acme", base, base + 1000), member);
  ASSERT_EQ(own_tenant.status, 200);
  EXPECT_EQ(own_tenant.body.at("jobs").size(), 1u);
  EXPECT_EQ(s.req("GET", gpus_path("node-1", 0, base, base + 1000), member).status, 403);

  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("sup-b")), "supplier b");
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("sup-b", "node-b")), "node b");
  const std::string agent = make_user_token(s, "agent-a", "supplier", "", "sup-a");
  json own = {{"idempotency_key", "sup-a-1"}, {"gpu_samples", {gpu_sample(base, "node-1", 2, 20)}}};
  Resp ok = s.req("POST", "/api/v1/usage", agent, own);
  EXPECT_EQ(ok.status, 201) << ok.describe();
  EXPECT_EQ(s.req("GET", gpus_path("node-1", 2, base, base + 1000), agent).status, 200);
  json foreign = {{"idempotency_key", "sup-a-2"}, {"gpu_samples", {gpu_sample(base, "node-b", 0, 20)}}};
  Resp no = s.req("POST", "/api/v1/usage", agent, foreign);
  EXPECT_EQ(no.status, 422) << no.describe();
  EXPECT_FALSE(no.reason_for("gpu_samples[0].node").empty());
  EXPECT_EQ(s.req("GET", gpus_path("node-b", 0, base, base + 1000), agent).status, 403);
  json jobs = {{"idempotency_key", "sup-a-3"}, {"job_samples", {job_sample(base, w.job_id, 1)}}};
  EXPECT_EQ(s.req("POST", "/api/v1/usage", agent, jobs).status, 403);
  Resp jobs_zh = s.req("POST", "/api/v1/usage?lang=zh", agent, jobs);
  EXPECT_EQ(jobs_zh.status, 403);
  EXPECT_EQ(jobs_zh.body.value("detail", ""), "作业用量由平台运营方的计量器上报；供应商只能上报 gpu_samples")
      << jobs_zh.describe();
  EXPECT_EQ(jobs_zh.body.at("detail_message").value("code", ""), "usage.job_samples_operator_only");
  EXPECT_EQ(s.req("GET", jobs_path("job", w.job_id, base, base + 1000), agent).status, 403);
}

// With retention 0 every finished minute is rolled up at the next pass (each second here).
TEST(UsageRollup, RawSamplesBecomeMinutesVisibleThroughGet) {
  ServerProcess s({"--no-scheduler", "--usage-retention-hours", "0", "--usage-rollup-interval-s", "1"});
  World w = make_world(s);
  const TimeMs m0 = (now_ms() - 600'000) / 60'000 * 60'000;
  json body = {{"idempotency_key", "to-roll"},
               {"gpu_samples",
                {gpu_sample(m0, "node-1", 0, 10), gpu_sample(m0 + 20'000, "node-1", 0, 20),
                 gpu_sample(m0 + 40'000, "node-1", 0, 90), gpu_sample(m0 + 60'000, "node-1", 0, 50)}},
               {"job_samples", {job_sample(m0 + 1000, w.job_id, 3), job_sample(m0 + 2000, w.job_id, 4)}}};
  ASSERT_EQ(s.admin("POST", "/api/v1/usage", body).status, 201);
  Resp g;
  for (int i = 0; i < 300; ++i) {
    g = s.admin("GET", gpus_path("node-1", 0, m0, m0 + 120'000));
    if (g.status == 200 && g.body.at("points").size() == 2u &&
        g.body["points"][0].value("resolution", "") == "minute" &&
        g.body["points"][1].value("resolution", "") == "minute")
      break;
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_EQ(g.body.at("points").size(), 2u) << g.describe();
  const json& p0 = g.body["points"][0];
  EXPECT_EQ(p0.value("resolution", ""), "minute") << g.describe();
  EXPECT_EQ(p0.value("at", ""), t(m0));
  EXPECT_EQ(p0.value("samples", 0), 3);
  EXPECT_EQ(p0["utilization_pct"], json({{"n", 3}, {"sum", 120}, {"avg", 40}, {"max", 90}}));
  EXPECT_EQ(p0["power_mw"].value("avg", 0), 300'000);
  Resp j = s.admin("GET", jobs_path("job", w.job_id, m0, m0 + 60'000));
  ASSERT_EQ(j.body.at("points").size(), 1u) << j.describe();
  EXPECT_EQ(j.body["points"][0].value("resolution", ""), "minute");
  EXPECT_EQ(j.body["points"][0].value("egress_bytes", 0), 7);
  EXPECT_EQ(j.body.at("totals").value("samples", 0), 2);
  // The batch's key is still remembered after its samples were rolled up.
  EXPECT_EQ(s.admin("POST", "/api/v1/usage", body).status, 200);
}

// A dcgm-exporter stand-in: the test serves /metrics itself and points the server at it. Its
// exposition has node-1's GPUs 0 and 5 whole, GPU 2 split into two MIG instances, and a GPU 3
// whose UUID is another node's (a target pointed at the wrong node).
TEST(UsageDcgm, ScrapesTheExporterIntoGpuSamples) {
  const json node = node_doc("sup-a", "node-1");  // as make_world registers it: its GPUs' UUIDs
  auto uuid = [&](int i) { return node["gpus"][i]["uuid"].get<std::string>(); };
  auto labels = [&](int i, const std::string& u, const std::string& host_label) {
    return "gpu=\"" + std::to_string(i) + "\",UUID=\"" + u + "\",device=\"nvidia" + std::to_string(i) +
           "\",modelName=\"NVIDIA H100 80GB HBM3\"," + host_label + "=\"node-1\"";
  };
  const std::string mig1 = labels(2, uuid(2), "hostname") + ",GPU_I_PROFILE=\"3g.40gb\",GPU_I_ID=\"1\"";
  const std::string mig2 = labels(2, uuid(2), "hostname") + ",GPU_I_PROFILE=\"4g.40gb\",GPU_I_ID=\"2\"";
  const std::string exposition =
      "# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"
      "DCGM_FI_DEV_GPU_UTIL{" + labels(0, uuid(0), "hostname") + "} 77\n"
      "DCGM_FI_DEV_GPU_UTIL{" + labels(5, uuid(5), "Hostname") + "} 12\n"
      "DCGM_FI_DEV_GPU_UTIL{" + labels(3, "GPU-3b8e1c60-4d9f-4032-9c2e-0000000000ff", "Hostname") + "} 99\n"
      "# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).\n# TYPE DCGM_FI_DEV_FB_USED gauge\n"
      "DCGM_FI_DEV_FB_USED{" + mig1 + "} 1000\n"
      "DCGM_FI_DEV_FB_USED{" + mig2 + "} 2000\n"
      "# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).\n# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n"
      "DCGM_FI_DEV_POWER_USAGE{" + labels(0, uuid(0), "hostname") + "} 412.5\n"
      "# HELP DCGM_FI_PROF_GR_ENGINE_ACTIVE Ratio of time the graphics engine is active.\n"
      "# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge\n"
      "DCGM_FI_PROF_GR_ENGINE_ACTIVE{" + labels(0, uuid(0), "hostname") + "} 0.754\n"
      "DCGM_FI_PROF_GR_ENGINE_ACTIVE{" + mig1 + "} 0.5\n"
      "DCGM_FI_PROF_GR_ENGINE_ACTIVE{" + mig2 + "} 0.25\n";
  httplib::Server exporter;
  std::atomic<int> scrapes{0};
  exporter.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
    ++scrapes;
    res.set_content(exposition, "text/plain; version=0.0.4");
  });
  const int port = exporter.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread serve([&] { exporter.listen_after_bind(); });
  const TimeMs started = now_ms();
  {
    ServerProcess s({"--no-scheduler", "--dcgm-target", "http://127.0.0.1:" + std::to_string(port) + "/metrics@node-1",
                     "--dcgm-interval-s", "1"});
    make_world(s);  // node-1 appears after the first scrapes, which fail until then
    Resp g0, g5, g2;
    for (int i = 0; i < 300; ++i) {
      g0 = s.admin("GET", gpus_path("node-1", 0, started - 60'000, now_ms() + 60'000));
      g5 = s.admin("GET", gpus_path("node-1", 5, started - 60'000, now_ms() + 60'000));
      g2 = s.admin("GET", gpus_path("node-1", 2, started - 60'000, now_ms() + 60'000));
      if (g0.status == 200 && !g0.body.at("points").empty() && g5.status == 200 && !g5.body.at("points").empty() &&
          g2.status == 200 && !g2.body.at("points").empty())
        break;
      std::this_thread::sleep_for(100ms);
    }
    ASSERT_FALSE(g0.body.at("points").empty()) << g0.describe() << "\n" << s.log();
    const json& p = g0.body["points"][0];
    EXPECT_EQ(p["utilization_pct"].value("max", 0), 77);
    EXPECT_EQ(p["power_mw"].value("max", 0), 412'500);
    EXPECT_EQ(p["gr_engine_active_pct"].value("max", 0), 75);  // ratio 0.754
    ASSERT_FALSE(g5.body.at("points").empty());
    EXPECT_EQ(g5.body["points"][0]["utilization_pct"].value("max", 0), 12);
    EXPECT_FALSE(g5.body["points"][0].contains("power_mw"));
    // The MIG GPU: (50% x 3 slices + 25% x 4) / 7 = 35.7%, its instances' memory summed.
    ASSERT_FALSE(g2.body.at("points").empty());
    EXPECT_EQ(g2.body["points"][0]["utilization_pct"].value("max", 0), 36);
    EXPECT_EQ(g2.body["points"][0]["memory_used_mib"].value("max", 0), 3000);
    // GPU 3's UUID is not node-1's GPU 3: not metered, and said so.
    Resp g3 = s.admin("GET", gpus_path("node-1", 3, started - 60'000, now_ms() + 60'000));
    EXPECT_TRUE(g3.body.at("points").empty()) << g3.describe();
    EXPECT_NE(s.log().find("dcgm_gpus_skipped"), std::string::npos) << s.log();
    const std::string metrics = s.admin("GET", "/metrics").text;
    EXPECT_NE(metrics.find("gpurent_dcgm_scrapes_total{node=\"node-1\",result=\"ok\"}"), std::string::npos) << metrics;
    EXPECT_NE(metrics.find("gpurent_dcgm_gpus_metered{node=\"node-1\"} 3"), std::string::npos) << metrics;
    EXPECT_NE(metrics.find("gpurent_dcgm_gpus_skipped{node=\"node-1\"} 1"), std::string::npos) << metrics;
    EXPECT_NE(metrics.find("gpurent_dcgm_mig_instances{node=\"node-1\"} 2"), std::string::npos) << metrics;
    EXPECT_NE(metrics.find("gpurent_dcgm_last_success_timestamp_seconds{node=\"node-1\"}"), std::string::npos);
    // Another supplier names a node node-1 too: the target stays on the node it found (scrapes
    // go on succeeding); a name shared before the first scrape would be refused as ambiguous.
    auto errors = [&] {
      const std::string m = s.admin("GET", "/metrics").text;
      const std::string key = "gpurent_dcgm_scrapes_total{node=\"node-1\",result=\"error\"} ";
      const size_t at = m.find(key);
      return at == std::string::npos ? 0L : std::stol(m.substr(at + key.size()));
    };
    expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("sup-b")), "supplier b");
    expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("sup-b", "node-1")), "sup-b's node-1");
    const long errors_before = errors();
    const int seen = scrapes.load();
    for (int i = 0; i < 100 && scrapes.load() < seen + 3; ++i) std::this_thread::sleep_for(100ms);
    EXPECT_GE(scrapes.load(), seen + 3);
    EXPECT_EQ(errors(), errors_before) << s.log();
  }
  EXPECT_GE(scrapes.load(), 1);
  exporter.stop();
  serve.join();
}

// --- durability ---------------------------------------------------------------------------------

constexpr int kPerBatch = 100;  // GPU samples and job samples each

json stream_batch(int i, TimeMs base, const std::string& job) {
  json b = {{"idempotency_key", "stream-" + std::to_string(i)},
            {"gpu_samples", json::array()},
            {"job_samples", json::array()}};
  for (int k = 0; k < kPerBatch; ++k) {
    TimeMs at = base + (static_cast<TimeMs>(i) * kPerBatch + k) * 10;
    b["gpu_samples"].push_back(gpu_sample(at, "node-1", k % 8, (i + k) % 101));
    b["job_samples"].push_back(job_sample(at, job, 1));
  }
  return b;
}

TEST(UsageCrash, KillNineKeepsEveryAcknowledgedBatchExactlyOnce) {
  ServerProcess s({"--no-scheduler"});
  World w = make_world(s);
  const TimeMs base = now_ms() - 24 * 3600'000;
  std::atomic<int> acked{0};
  std::atomic<bool> going_away{false};
  int in_flight = -1;
  std::vector<std::string> unexpected;
  std::thread writer([&] {
    httplib::Client c(s.url());
    c.set_keep_alive(true);
    c.set_read_timeout(10, 0);
    const httplib::Headers auth{{"Authorization", "Bearer " + s.admin_token()}};
    for (int i = 0;; ++i) {
      auto res = c.Post("/api/v1/usage", auth, stream_batch(i, base, w.job_id).dump(), "application/json");
      if (res && res->status == 201) {
        acked = i + 1;
        continue;
      }
      in_flight = i;
      if (!going_away)
        unexpected.push_back(res ? std::to_string(res->status) + " " + res->body : httplib::to_string(res.error()));
      return;
    }
  });
  for (int i = 0; i < 3000 && acked < 20; ++i) std::this_thread::sleep_for(10ms);
  going_away = true;
  s.kill9();
  writer.join();
  for (const auto& u : unexpected) ADD_FAILURE() << "write failed while the server was up: " << u;
  const int n = acked.load();
  ASSERT_GT(n, 0);
  ASSERT_EQ(in_flight, n);
  s.start();

  const TimeMs to = base + static_cast<TimeMs>(n + 2) * kPerBatch * 10;
  auto job_samples = [&] {
    Resp r = s.admin("GET", jobs_path("job", w.job_id, base, to));
    return r.body.at("totals").value("samples", -1);
  };
  const int64_t after_crash = job_samples();
  // Every acknowledged batch is there; the one in flight may or may not have committed.
  EXPECT_TRUE(after_crash == n * kPerBatch || after_crash == (n + 1) * kPerBatch) << after_crash << " for " << n;
  // Re-sending everything: acknowledged batches are duplicates, the in-flight one lands once.
  httplib::Client c(s.url());
  const httplib::Headers auth{{"Authorization", "Bearer " + s.admin_token()}};
  for (int i = 0; i <= n; ++i) {
    auto res = c.Post("/api/v1/usage", auth, stream_batch(i, base, w.job_id).dump(), "application/json");
    ASSERT_TRUE(res);
    if (i < n)
      EXPECT_EQ(res->status, 200) << "batch " << i << ": " << res->body;
    else
      EXPECT_EQ(res->status, after_crash == n * kPerBatch ? 201 : 200) << res->body;
  }
  EXPECT_EQ(job_samples(), (n + 1) * kPerBatch);
  int64_t gpu_points = 0;
  for (int g = 0; g < 8; ++g) {
    Resp r = s.admin("GET", gpus_path("node-1", g, base, to) + "&limit=100000");
    gpu_points += static_cast<int64_t>(r.body.at("points").size());
  }
  EXPECT_EQ(gpu_points, (n + 1) * kPerBatch);
}

}  // namespace
}  // namespace gpurent::testing

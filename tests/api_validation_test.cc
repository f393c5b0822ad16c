// Input validation through the real server: unreadable bodies are 400, oversize bodies 413, and
// every field mistake is a 422 problem+json whose errors[] names the exact field path — after
// which the kind's list is unchanged.
#include <gtest/gtest.h>

#include "server_fixture.h"

namespace gpurent::testing {
namespace {

// Checks a problem response: status, media type, the body's status, and (when given) that
// errors[] names `field`. Returns the reason given for that field.
std::string expect_problem(const Resp& r, int status, const std::string& field = "") {
  EXPECT_EQ(r.status, status) << r.describe();
  EXPECT_EQ(r.content_type, "application/problem+json") << r.describe();
  EXPECT_EQ(r.body.value("status", 0), status) << r.describe();
  EXPECT_FALSE(r.body.value("detail", "").empty()) << r.describe();
  if (field.empty()) return "";
  auto fields = r.error_fields();
  EXPECT_NE(std::find(fields.begin(), fields.end(), field), fields.end())
      << "errors[] does not name '" << field << "': " << r.describe();
  return r.reason_for(field);
}

class ValidationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("sup-a")), "supplier");
    expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme")), "tenant");
    expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("acme", "vision")), "project");
  }
  std::vector<std::string> ids(const std::string& kind) { return list_ids(s, "/api/v1/" + kind, s.admin_token()); }

  ServerProcess s;
};

TEST_F(ValidationTest, UnreadableBodiesAre400) {
  auto tenants = ids("tenants");
  Resp r = s.raw("POST", "/api/v1/tenants", s.admin_token(), "{\"name\": \"acme2\",\n \"currency\": }",
                 "application/json");
  expect_problem(r, 400);
  // The position of the unexpected '}' (1-based byte offset).
  EXPECT_EQ(r.body.value("detail", "").rfind("malformed JSON at byte 32:", 0), 0u) << r.describe();

  // A number no double holds is malformed too (it used to escape as a 500).
  r = s.raw("POST", "/api/v1/tenants", s.admin_token(), "{\"name\": \"acme3\", \"x\": 1e999}", "application/json");
  expect_problem(r, 400);
  EXPECT_EQ(r.body.value("detail", "").rfind("malformed JSON", 0), 0u) << r.describe();

  r = s.raw("POST", "/api/v1/tenants", s.admin_token(), "name: [unclosed\ncurrency: USD\n", "application/yaml");
  expect_problem(r, 400);
  EXPECT_EQ(r.body.value("detail", "").rfind("malformed YAML at line 2, column ", 0), 0u) << r.describe();

  for (const char* not_object : {"[1, 2]", "\"acme2\"", "42", "null"}) {
    r = s.raw("POST", "/api/v1/tenants", s.admin_token(), not_object, "application/json");
    expect_problem(r, 400);
    EXPECT_NE(r.body.value("detail", "").find("object"), std::string::npos) << not_object << ": " << r.describe();
  }
  r = s.raw("POST", "/api/v1/tenants", s.admin_token(), "- a\n- b\n", "application/yaml");
  expect_problem(r, 400);
  expect_problem(s.raw("POST", "/api/v1/tenants", s.admin_token(), "", "application/json"), 400);
  r = s.raw("POST", "/api/v1/tenants", s.admin_token(), tenant_doc("acme2").dump(), "text/plain");
  expect_problem(r, 400);
  EXPECT_NE(r.body.value("detail", "").find("Content-Type"), std::string::npos) << r.describe();
  // A PUT is read the same way.
  const std::string acme = s.admin("GET", "/api/v1/tenants/acme").body.value("id", "?");
  expect_problem(s.raw("PUT", "/api/v1/tenants/" + acme, s.admin_token(), "{oops", "application/json"), 400);

  // A key given twice names its path; a YAML body of two documents is refused, not cut to one.
  const std::string twice = tenant_doc("acme2").dump();
  r = s.raw("POST", "/api/v1/tenants", s.admin_token(),
            twice.substr(0, twice.size() - 1) + R"(, "owner": {"teams": [{"team": "a"}, {"team": "a", "team": "b"}]}})",
            "application/json");
  expect_problem(r, 400, "owner.teams[1].team");
  r = s.raw("POST", "/api/v1/tenants", s.admin_token(), "name: acme2\n---\nname: acme3\n", "application/yaml");
  expect_problem(r, 400);
  EXPECT_NE(r.body.value("detail", "").find("more than one document"), std::string::npos) << r.describe();

  EXPECT_EQ(ids("tenants"), tenants);
  EXPECT_EQ(s.admin("GET", "/api/v1/tenants/acme").body.value("version", 0), 1);
}

TEST_F(ValidationTest, YamlBodiesAreAccepted) {
  std::string yaml = "name: beta\ndisplay_name: Beta Corp\ncurrency: CNY\ncontact_email: ops@beta.example.com\n";
  Resp r = s.raw("POST", "/api/v1/tenants", s.admin_token(), yaml, "application/yaml");
  ASSERT_EQ(r.status, 201) << r.describe();
  EXPECT_EQ(r.body.value("currency", ""), "CNY");
  // A YAML decimal stays exact money.
  std::string project = "name: exact\ntenant: beta\nquota:\n  monthly_budget: 1000.10\n";
  r = s.raw("POST", "/api/v1/projects", s.admin_token(), project, "application/yaml");
  ASSERT_EQ(r.status, 201) << r.describe();
  EXPECT_EQ(r.body.at("quota").value("monthly_budget", ""), "1000.10") << r.describe();
}

TEST(ValidationLimits, OversizeBodyIs413) {
  ServerProcess s({"--max-body-bytes", "4096"});
  json big = tenant_doc("big");
  big["display_name"] = std::string(10 * 1024, 'x');
  Resp r = s.admin("POST", "/api/v1/tenants", big);
  expect_problem(r, 413);
  // Just under the limit is read (and then judged on its fields).
  json near = tenant_doc("near");
  near["display_name"] = std::string(3000, 'x');
  r = s.admin("POST", "/api/v1/tenants", near);
  expect_problem(r, 422, "display_name");
  EXPECT_TRUE(list_ids(s, "/api/v1/tenants", s.admin_token()).empty());
  EXPECT_EQ(s.req("GET", "/readyz", "").status, 200);
}

TEST_F(ValidationTest, UnknownEnumValuesNameTheFieldAndTheChoices) {
  auto tenants = ids("tenants");
  json t = tenant_doc("acme2");
  t["currency"] = "XYZ";
  std::string reason = expect_problem(s.admin("POST", "/api/v1/tenants", t), 422, "currency");
  EXPECT_NE(reason.find("USD"), std::string::npos) << reason;
  EXPECT_NE(reason.find("XYZ"), std::string::npos) << reason;
  EXPECT_EQ(ids("tenants"), tenants);

  json n = node_doc("sup-a", "n1");
  n["state"] = "broken";
  reason = expect_problem(s.admin("POST", "/api/v1/nodes", n), 422, "state");
  EXPECT_NE(reason.find("available, unavailable, drained"), std::string::npos) << reason;
  n = node_doc("sup-a", "n1");
  n["nics"][0]["rdma"] = "omnipath";
  reason = expect_problem(s.admin("POST", "/api/v1/nodes", n), 422, "nics[0].rdma");
  EXPECT_NE(reason.find("infiniband"), std::string::npos) << reason;
  EXPECT_TRUE(ids("nodes").empty());

  json j = job_doc("vision", "j1");
  j["kind"] = "traning";
  reason = expect_problem(s.admin("POST", "/api/v1/jobs", j), 422, "kind");
  EXPECT_NE(reason.find("training"), std::string::npos) << reason;
  j = job_doc("vision", "j1");
  j["billing"]["mode"] = "free";
  reason = expect_problem(s.admin("POST", "/api/v1/jobs", j), 422, "billing.mode");
  EXPECT_NE(reason.find("on_demand"), std::string::npos) << reason;
  EXPECT_TRUE(ids("jobs").empty());

  Resp u = s.admin("POST", "/api/v1/users", user_doc("bob", "superuser", "acme"));
  reason = expect_problem(u, 422, "role");
  EXPECT_NE(reason.find("tenant_admin"), std::string::npos) << reason;
}

TEST_F(ValidationTest, NegativeAndAbsurdQuantitiesAreRefused) {
  json n = node_doc("sup-a", "n1");
  n["gpus"][0]["numa_node"] = -1;
  expect_problem(s.admin("POST", "/api/v1/nodes", n), 422, "gpus[0].numa_node");
  n = node_doc("sup-a", "n1");
  n["gpus"][3]["numa_node"] = 5;  // the node has 2 NUMA nodes
  expect_problem(s.admin("POST", "/api/v1/nodes", n), 422, "gpus[3].numa_node");
  n = node_doc("sup-a", "n1");
  n["memory_gib"] = 1000000000;
  expect_problem(s.admin("POST", "/api/v1/nodes", n), 422, "memory_gib");
  n = node_doc("sup-a", "n1");
  n["cpu"]["cores"] = -8;
  expect_problem(s.admin("POST", "/api/v1/nodes", n), 422, "cpu.cores");
  n = node_doc("sup-a", "n1");
  n["memory_gib"] = 1e300;  // a float where an integer belongs
  expect_problem(s.admin("POST", "/api/v1/nodes", n), 422, "memory_gib");
  EXPECT_TRUE(ids("nodes").empty());

  json j = job_doc("vision", "j1");
  j["workers"] = 100000;
  expect_problem(s.admin("POST", "/api/v1/jobs", j), 422, "workers");
  j = job_doc("vision", "j1");
  j["resources"]["memory_gib"] = 1000000000;
  expect_problem(s.admin("POST", "/api/v1/jobs", j), 422, "resources.memory_gib");
  j = job_doc("vision", "j1");
  j["gpus_per_worker"] = -1;
  expect_problem(s.admin("POST", "/api/v1/jobs", j), 422, "gpus_per_worker");
  j = job_doc("vision", "j1");
  j["workers"] = 8;
  j["gpus_per_worker"] = 8;  // 64 GPUs, the project allows 32 per job
  expect_problem(s.admin("POST", "/api/v1/jobs", j), 422, "workers");
  EXPECT_TRUE(ids("jobs").empty());

  Resp q = s.admin("PUT", "/api/v1/projects/vision/quota", json{{"gpus_per_model", {{"h100-sxm5-80gb", -4}}}});
  expect_problem(q, 422, "gpus_per_model.h100-sxm5-80gb");
  q = s.admin("PUT", "/api/v1/projects/vision/quota", json{{"max_concurrent_jobs", 1000000000000LL}});
  expect_problem(q, 422, "max_concurrent_jobs");
  EXPECT_EQ(s.admin("GET", "/api/v1/projects/vision").body.value("version", 0), 1);
}

TEST_F(ValidationTest, MoneyAsAFloatIsRefused) {
  json o = offer_doc("sup-a", "o1");
  o["prices"]["on_demand"] = 17.5;
  std::string reason = expect_problem(s.admin("POST", "/api/v1/offers", o), 422, "prices.on_demand");
  EXPECT_NE(reason.find("string"), std::string::npos) << reason;
  o = offer_doc("sup-a", "o1");
  o["fees"]["egress"]["per_gb"] = 0.5;
  expect_problem(s.admin("POST", "/api/v1/offers", o), 422, "fees.egress.per_gb");
  EXPECT_TRUE(ids("offers").empty());

  json j = job_doc("vision", "j1");
  j["billing"]["max_price_per_gpu_hour"] = 3.2;
  expect_problem(s.admin("POST", "/api/v1/jobs", j), 422, "billing.max_price_per_gpu_hour");
  EXPECT_TRUE(ids("jobs").empty());

  auto projects = ids("projects");
  json p = project_doc("acme", "p2");
  p["quota"]["monthly_budget"] = 1000.5;
  expect_problem(s.admin("POST", "/api/v1/projects", p), 422, "quota.monthly_budget");
  p["quota"]["monthly_budget"] = "1000.0000001";  // finer than a micro-unit
  expect_problem(s.admin("POST", "/api/v1/projects", p), 422, "quota.monthly_budget");
  EXPECT_EQ(ids("projects"), projects);
}

TEST_F(ValidationTest, UnknownAndMissingFieldsAreNamed) {
  auto tenants = ids("tenants");
  json t = tenant_doc("acme2");
  t["colour"] = "blue";
  EXPECT_EQ(expect_problem(s.admin("POST", "/api/v1/tenants", t), 422, "colour"), "unknown field");
  t = tenant_doc("acme2");
  t.erase("contact_email");
  expect_problem(s.admin("POST", "/api/v1/tenants", t), 422, "contact_email");
  t = tenant_doc("acme2");
  t["name"] = "Not A Slug";
  expect_problem(s.admin("POST", "/api/v1/tenants", t), 422, "name");
  EXPECT_EQ(ids("tenants"), tenants);

  json n = node_doc("sup-a", "n1");
  n["gpus"][2]["numa"] = 0;
  EXPECT_EQ(expect_problem(s.admin("POST", "/api/v1/nodes", n), 422, "gpus[2].numa"), "unknown field");
  n = node_doc("sup-a", "n1");
  n["gpus"][1].erase("numa_node");
  expect_problem(s.admin("POST", "/api/v1/nodes", n), 422, "gpus[1].numa_node");
  n = node_doc("sup-a", "n1");
  n.erase("software");
  expect_problem(s.admin("POST", "/api/v1/nodes", n), 422, "software");
  n = node_doc("sup-a", "n1");
  n["site"] = "site-z";  // not one of the supplier's sites
  expect_problem(s.admin("POST", "/api/v1/nodes", n), 422, "site");
  n = node_doc("no-such-supplier", "n1");
  expect_problem(s.admin("POST", "/api/v1/nodes", n), 422, "supplier");
  EXPECT_TRUE(ids("nodes").empty());

  json j = job_doc("vision", "j1");
  j.erase("kind");
  expect_problem(s.admin("POST", "/api/v1/jobs", j), 422, "kind");
  j = job_doc("no-such-project", "j1");
  expect_problem(s.admin("POST", "/api/v1/jobs", j), 422, "project");
  EXPECT_TRUE(ids("jobs").empty());
}

// The shared field checks carry a code: ?lang=zh (or Accept-Language) words the reason and the
// detail in Chinese and returns the code with its arguments; English stays the default.
TEST_F(ValidationTest, FieldErrorsComeInTheCallersLanguage) {
  json t = tenant_doc("acme2");
  t["colour"] = "blue";
  t.erase("contact_email");
  const Resp zh = s.admin("POST", "/api/v1/tenants?lang=zh", t);
  EXPECT_EQ(expect_problem(zh, 422, "colour"), "未知字段");
  EXPECT_EQ(zh.reason_for("contact_email"), "为必填项");
  EXPECT_EQ(zh.body["detail"], "contact_email：为必填项（另有 1 处错误）") << zh.describe();
  bool coded = false;
  for (const auto& e : zh.body["errors"])
    if (e["field"] == "colour") coded = e["reason_message"] == json{{"code", "field.unknown"}, {"args", json::object()}};
  EXPECT_TRUE(coded) << zh.describe();
  const Resp en = s.admin("POST", "/api/v1/tenants", t);
  EXPECT_EQ(en.body["detail"], "contact_email: is required (and 1 more)") << en.describe();
  EXPECT_EQ(en.reason_for("colour"), "unknown field");
  json q = project_doc("acme", "p2");
  q["quota"]["max_concurrent_jobs"] = -3;
  EXPECT_EQ(expect_problem(s.admin("POST", "/api/v1/projects?lang=zh-CN", q), 422, "quota.max_concurrent_jobs"),
            "不能小于 0（实际为 -3）");
}

// A GPU's UUID is one card's, in one node (the meters name cards by it): a second node listing it
// is a 409 naming the field and the node that has it; the node itself may be written again.
TEST_F(ValidationTest, AGpuUuidIsOneNodesOnly) {
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("sup-b")), "supplier b");
  json first = node_doc("sup-a", "n1");
  const Resp made = expect_2xx(s.admin("POST", "/api/v1/nodes", first), "n1");
  json copy = node_doc("sup-b", "n2");
  copy["gpus"][3]["uuid"] = first["gpus"][3]["uuid"];
  const std::string why = expect_problem(s.admin("POST", "/api/v1/nodes", copy), 409, "gpus[3].uuid");
  EXPECT_NE(why.find("already a GPU of node n1"), std::string::npos) << why;
  EXPECT_NE(expect_problem(s.admin("POST", "/api/v1/nodes?lang=zh", copy), 409, "gpus[3].uuid")
                .find("已是节点 n1 的 GPU"), std::string::npos);
  copy["gpus"][3]["uuid"] = node_doc("sup-b", "n3")["gpus"][3]["uuid"];
  expect_2xx(s.admin("POST", "/api/v1/nodes", copy), "n2 with its own cards");
  const json again = made.body;  // GET → PUT: the node's own UUIDs are not another's
  expect_2xx(s.admin("PUT", "/api/v1/nodes/" + made.body["id"].get<std::string>(), again), "n1 written again");
}

TEST_F(ValidationTest, UnknownGpuModelsAreNamed) {
  json n = node_doc("sup-a", "n1");
  n["gpu_model"] = "h100-sxm5-800gb";
  expect_problem(s.admin("POST", "/api/v1/nodes", n), 422, "gpu_model");
  json o = offer_doc("sup-a", "o1");
  o["gpu_model"] = "rtx-9090";
  expect_problem(s.admin("POST", "/api/v1/offers", o), 422, "gpu_model");
  json j = job_doc("vision", "j1");
  j["constraints"]["gpu_models"] = json::array({"h100-sxm5-80gb", "rtx-9090"});
  expect_problem(s.admin("POST", "/api/v1/jobs", j), 422, "constraints.gpu_models[1]");
  json p = project_doc("acme", "p2");
  p["quota"]["gpus_per_model"]["rtx-9090"] = 4;
  expect_problem(s.admin("POST", "/api/v1/projects", p), 422, "quota.gpus_per_model.rtx-9090");
  Resp q = s.admin("PUT", "/api/v1/projects/vision/quota", json{{"gpus_per_model", {{"rtx-9090", 4}}}});
  expect_problem(q, 422, "gpus_per_model.rtx-9090");
  // Aliases are accepted and stored as the catalog id.
  n = node_doc("sup-a", "n1");
  n["gpu_model"] = "H100-SXM";
  Resp ok = s.admin("POST", "/api/v1/nodes", n);
  ASSERT_EQ(ok.status, 201) << ok.describe();
  EXPECT_EQ(ok.body.value("gpu_model", ""), "h100-sxm5-80gb");

  EXPECT_EQ(ids("nodes").size(), 1u);
  EXPECT_TRUE(ids("offers").empty());
  EXPECT_TRUE(ids("jobs").empty());
  EXPECT_EQ(ids("projects").size(), 1u);
  EXPECT_EQ(s.admin("GET", "/api/v1/projects/vision").body.value("version", 0), 1);
}

TEST_F(ValidationTest, UnknownQueryParametersAndBadLimitsAreNamed) {
  std::string reason = expect_problem(s.admin("GET", "/api/v1/tenants?colour=blue"), 422, "colour");
  EXPECT_NE(reason.find("limit"), std::string::npos) << reason;
  expect_problem(s.admin("GET", "/api/v1/jobs?status=pending"), 422, "status");  // the filter is "state"
  for (const char* bad : {"0", "-1", "abc", "5000", "1.5", ""}) {
    SCOPED_TRACE(std::string("limit=") + bad);
    expect_problem(s.admin("GET", std::string("/api/v1/tenants?limit=") + bad), 422, "limit");
  }
  expect_problem(s.admin("GET", "/api/v1/tenants?after=" + std::string(100, 'a')), 422, "after");
  // The reasons are message codes: ?lang=zh words them in Chinese, with the code.
  const Resp zh = s.admin("GET", "/api/v1/tenants?limit=5000&lang=zh");
  EXPECT_EQ(expect_problem(zh, 422, "limit"), "必须在 1 到 1000 之间（实际为 5000）");
  EXPECT_EQ(zh.body.value(json::json_pointer("/errors/0/reason_message/code"), ""), "http.limit.range")
      << zh.describe();
  EXPECT_EQ(zh.body.value("detail", ""), "limit：必须在 1 到 1000 之间（实际为 5000）") << zh.describe();
  EXPECT_EQ(expect_problem(s.admin("GET", "/api/v1/tenants?colour=blue&lang=zh"), 422, "colour"),
            "未知的查询参数（允许：limit, after, name）");
  Resp ok = s.admin("GET", "/api/v1/jobs?state=pending&project=vision&limit=5");
  EXPECT_EQ(ok.status, 200) << ok.describe();
  // Given twice, a parameter is refused: which of the two was meant is not known.
  EXPECT_EQ(expect_problem(s.admin("GET", "/api/v1/tenants?limit=1&limit=1000"), 422, "limit"),
            "may be given only once");
}

// The report, usage, metrics, dashboard and advisor routes refuse what they do not read too: a typo
// (?formt=csv, ?tennant=acme, ?since=) would otherwise answer with the default — JSON instead of
// CSV, the whole platform instead of one tenant, the last hour instead of the period asked for.
TEST_F(ValidationTest, EveryReportRouteRefusesUnknownAndRepeatedQueryParameters) {
  expect_2xx(s.admin("POST", "/api/v1/jobs", job_doc("vision", "j1")), "job");
  const std::string m = "month=2026-11&tenant=acme";
  struct Case {
    const char* method;
    std::string path;
    const char* field;
  };
  for (const Case& c : std::vector<Case>{
           {"GET", "/api/v1/invoices?" + m + "&formt=csv", "formt"},
           {"GET", "/api/v1/invoices?" + m + "&format=csv&format=json", "format"},
           {"GET", "/api/v1/reports/reconciliation?" + m + "&format=csv", "format"},
           {"GET", "/api/v1/usage/gpus?node=n1&gpu=0&since=2026-11-01T00:00:00Z", "since"},
           {"GET", "/api/v1/usage/jobs?tenant=acme&since=2026-11-01T00:00:00Z", "since"},
           {"GET", "/api/v1/jobs/j1/metrics?metric=loss", "metric"},
           {"GET", "/api/v1/dashboard/utilization?tennant=acme", "tennant"},
           {"GET", "/api/v1/dashboard/suppliers?tenant=acme", "tenant"},
           {"GET", "/api/v1/dashboard/fragmentation?node=n1", "node"},
           {"GET", "/api/v1/dashboard/costs?from=2026-11-01T00:00:00Z&from=2026-11-02T00:00:00Z", "from"},
           {"POST", "/api/v1/advise/tco?gpus=8", "gpus"},
           {"POST", "/api/v1/advise/suppliers?form=2026-11-01T00:00:00Z", "form"},
           {"GET", "/api/v1/tokens?usr=admin", "usr"},
       }) {
    SCOPED_TRACE(c.path);
    expect_problem(
        s.admin(c.method, c.path, c.method == std::string("POST") ? std::optional<json>(json::object()) : std::nullopt),
        422, c.field);
  }
  // A period needs both ends: the missing one is named, not "month".
  expect_problem(s.admin("GET", "/api/v1/invoices?tenant=acme&from=2026-11-01T00:00:00Z"), 422, "to");
  expect_problem(s.admin("GET", "/api/v1/invoices?tenant=acme&to=2026-11-01T00:00:00Z"), 422, "from");
  // The supplier score reads every supplier's history over its period: at most 366 days of it.
  expect_problem(s.admin("POST", "/api/v1/advise/suppliers?from=2020-01-01T00:00:00Z", json::object()), 422, "range");
  // What the routes do read still works.
  Resp csv = s.admin("GET", "/api/v1/invoices?" + m + "&format=csv");
  EXPECT_EQ(csv.status, 200) << csv.describe();
  Resp usage = s.admin("GET", "/api/v1/usage/jobs?tenant=acme&from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z");
  EXPECT_EQ(usage.status, 200) << usage.describe();
}

}  // namespace
}  // namespace gpurent::testing

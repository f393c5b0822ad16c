// Tenant isolation and data integrity through the real server, beyond the permission table:
// list filters that name another tenant, users moved between tenants or suppliers, suppliers
// deleted under their users, and request bodies built to exhaust the server.
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <tuple>

#include "server_fixture.h"
#include "store/store.h"

namespace gpurent::testing {
namespace {

std::string id_of(const Resp& r) { return r.body.value("id", "?"); }

// Two tenants (acme, globex) with a project each, two suppliers, and tokens for their admins.
class IsolationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    acme_id = id_of(expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme")), "tenant acme"));
    globex_id = id_of(expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("globex")), "tenant globex"));
    expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("sup-a")), "supplier a");
    expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("sup-b")), "supplier b");
    acme_prj = id_of(expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("acme", "vision")), "acme project"));
    globex_prj = id_of(expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("globex", "ads")), "globex project"));
    acme_admin = make_user_token(s, "acme-admin", "tenant_admin", "acme");
    globex_admin = make_user_token(s, "globex-admin", "tenant_admin", "globex");
  }

  ServerProcess s;
  std::string acme_id, globex_id, acme_prj, globex_prj, acme_admin, globex_admin;
};

// ?tenant= naming another tenant must match nothing. It used to be replaced by the caller's own
// tenant, so globex's admin asking for acme's projects was answered with globex's.
// A filter naming another tenant answers as GET /tenants/{that one} would: 404, the same answer as
// for a tenant that does not exist (so it tells nothing), naming the parameter.
TEST_F(IsolationTest, ListFilterNamingAnotherTenantIsNotFound) {
  for (const std::string& other : {std::string("acme"), acme_id, std::string("no-such-tenant")}) {
    for (const char* kind : {"projects", "users", "jobs"}) {
      SCOPED_TRACE("tenant=" + other + " " + kind);
      Resp r = s.req("GET", std::string("/api/v1/") + kind + "?tenant=" + other, globex_admin);
      EXPECT_EQ(r.status, 404) << r.describe();
      EXPECT_EQ(r.error_fields(), std::vector<std::string>{"tenant"}) << r.describe();
    }
  }
  // Naming one's own tenant, by name or id, is an ordinary filter.
  EXPECT_EQ(list_ids(s, "/api/v1/projects?tenant=globex", globex_admin), std::vector<std::string>{globex_prj});
  EXPECT_EQ(list_ids(s, "/api/v1/projects?tenant=" + globex_id, globex_admin), std::vector<std::string>{globex_prj});
  // The operator's filter still selects any tenant.
  EXPECT_EQ(list_ids(s, "/api/v1/projects?tenant=acme", s.admin_token()), std::vector<std::string>{acme_prj});
}

// A user's tenant and supplier are fixed (docs/resources/users.md). Moving one used to succeed for
// the operator, leaving its tokens listed (and scoped) under the old tenant.
TEST_F(IsolationTest, UserTenantAndSupplierCannotChange) {
  make_user_token(s, "acme-member", "tenant_member", "acme");
  make_user_token(s, "sup-a-ops", "supplier", "", "sup-a");
  const json member = expect_2xx(s.admin("GET", "/api/v1/users/acme-member"), "member").body;
  const json ops = expect_2xx(s.admin("GET", "/api/v1/users/sup-a-ops"), "ops").body;
  const std::string member_id = member.at("id"), ops_id = ops.at("id");

  json moved = member;
  moved["tenant"] = "globex";
  Resp r = s.admin("PUT", "/api/v1/users/" + member_id, moved);
  EXPECT_EQ(r.status, 422) << r.describe();
  EXPECT_EQ(r.error_fields(), std::vector<std::string>{"tenant"}) << r.describe();
  json moved_ops = ops;
  moved_ops["supplier"] = "sup-b";
  r = s.admin("PUT", "/api/v1/users/" + ops_id, moved_ops);
  EXPECT_EQ(r.status, 422) << r.describe();
  EXPECT_EQ(r.error_fields(), std::vector<std::string>{"supplier"}) << r.describe();
  // Nor out of its tenant altogether, by becoming an operator.
  json op = member;
  op["role"] = "operator_admin";
  op.erase("tenant");
  r = s.admin("PUT", "/api/v1/users/" + member_id, op);
  EXPECT_EQ(r.status, 422) << r.describe();

  EXPECT_EQ(s.admin("GET", "/api/v1/users/acme-member").body, member);
  EXPECT_EQ(s.admin("GET", "/api/v1/users/sup-a-ops").body, ops);
  // Its tokens stay where its tenant is: acme's admin sees them, globex's does not.
  auto owners = [&](const std::string& token) {
    std::vector<std::string> out;
    const Resp r = expect_2xx(s.req("GET", "/api/v1/tokens", token), "tokens");
    for (const auto& t : r.body.at("items")) out.push_back(t.value("user_id", ""));
    return out;
  };
  auto acme_sees = owners(acme_admin), globex_sees = owners(globex_admin);
  EXPECT_NE(std::find(acme_sees.begin(), acme_sees.end(), member_id), acme_sees.end());
  EXPECT_EQ(std::find(globex_sees.begin(), globex_sees.end(), member_id), globex_sees.end());
  // Other changes still work, with the same tenant given by name.
  json renamed = member;
  renamed["display_name"] = "Member of Acme";
  r = s.admin("PUT", "/api/v1/users/" + member_id, renamed);
  EXPECT_EQ(r.status, 200) << r.describe();
}

// A supplier with users cannot be deleted: they would keep authenticating for a supplier that no
// longer exists.
TEST_F(IsolationTest, SupplierWithUsersCannotBeDeleted) {
  const std::string ops_token = make_user_token(s, "sup-a-ops", "supplier", "", "sup-a");
  Resp r = s.admin("DELETE", "/api/v1/suppliers/sup-a");
  EXPECT_EQ(r.status, 409) << r.describe();
  EXPECT_NE(r.body.value("detail", "").find("users"), std::string::npos) << r.describe();
  EXPECT_EQ(s.admin("GET", "/api/v1/suppliers/sup-a").status, 200);
  EXPECT_EQ(s.req("GET", "/api/v1/nodes", ops_token).status, 200);
  // Once its users are gone, it goes.
  const std::string ops_id = id_of(s.admin("GET", "/api/v1/users/sup-a-ops"));
  ASSERT_EQ(s.admin("DELETE", "/api/v1/users/" + ops_id).status, 204);
  EXPECT_EQ(s.admin("DELETE", "/api/v1/suppliers/sup-a").status, 204);
  EXPECT_EQ(s.req("GET", "/api/v1/nodes", ops_token).status, 401);
}

// A supplier's update may not drop a site its nodes or offers still name: they would point at a
// data centre that no longer exists.
TEST_F(IsolationTest, SupplierCannotDropASiteInUse) {
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("sup-a", "node-1")), "node");
  const json before = expect_2xx(s.admin("GET", "/api/v1/suppliers/sup-a"), "sup-a").body;
  ASSERT_EQ(before.at("sites").size(), 1u) << before.dump();
  json edit = before;
  edit["sites"][0]["name"] = "site-z";
  Resp r = s.admin("PUT", "/api/v1/suppliers/sup-a", edit);
  EXPECT_EQ(r.status, 409) << r.describe();
  EXPECT_EQ(r.error_fields(), std::vector<std::string>{"sites"}) << r.describe();
  EXPECT_NE(r.body.value("detail", "").find("node-1"), std::string::npos) << r.describe();
  EXPECT_EQ(s.admin("GET", "/api/v1/suppliers/sup-a").body, before);
  // Adding a site is fine, and so is dropping one nothing names.
  edit = before;
  edit["sites"].push_back(before.at("sites")[0]);
  edit["sites"][1]["name"] = "site-z";
  ASSERT_EQ(s.admin("PUT", "/api/v1/suppliers/sup-a", edit).status, 200);
  edit = expect_2xx(s.admin("GET", "/api/v1/suppliers/sup-a"), "sup-a").body;
  edit["sites"].erase(1);
  r = s.admin("PUT", "/api/v1/suppliers/sup-a", edit);
  EXPECT_EQ(r.status, 200) << r.describe();
}

// YAML aliases that multiply a small body ("billion laughs") are refused before they are expanded.
// Any signed-in user reaches the parser (POST /tokens), so this was a way to take the server's
// memory. The body here expands to 10^6 nodes: enough to tell, small enough to be harmless.
TEST_F(IsolationTest, YamlAliasBombIsRefused) {
  std::string yaml = "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 6; ++i) {
    const std::string prev = "*l" + std::to_string(i - 1);
    yaml += "l" + std::to_string(i) + ": &l" + std::to_string(i) + " [" + prev;
    for (int k = 1; k < 10; ++k) yaml += ", " + prev;
    yaml += "]\n";
  }
  yaml += "user: acme-admin\nname: bomb\n";
  const auto t0 = std::chrono::steady_clock::now();
  Resp r = s.raw("POST", "/api/v1/tokens", acme_admin, yaml, "application/yaml");
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.status, 400) << r.describe();
  EXPECT_NE(r.body.value("detail", "").find("aliases"), std::string::npos) << r.describe();
  // Expanding the aliases would take minutes and gigabytes; refusing them takes milliseconds (the
  // bound is loose: a loaded machine is slow now and then).
  EXPECT_LT(ms, 10000) << "refusing the body took " << ms << " ms";
  // Aliases that do not multiply the document are fine.
  Resp ok = s.raw("POST", "/api/v1/tokens", acme_admin, "user: &u acme-admin\nname: laptop\n", "application/yaml");
  EXPECT_EQ(ok.status, 201) << ok.describe();
  EXPECT_EQ(s.req("GET", "/healthz", "").status, 200);
}

// Bodies deeply nested or of odd shapes are 4xx answers, never 500s or a crashed server.
TEST_F(IsolationTest, DeeplyNestedAndOddBodiesAreRefusedCleanly) {
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  for (const std::string& body : {"{\"name\": \"x\", \"labels\": " + deep + "}", deep, std::string("null"),
                                  std::string("{\"version\": null}"), std::string("{\"name\": {\"$ne\": 1}}")}) {
    Resp r = s.raw("PUT", "/api/v1/projects/" + acme_prj, acme_admin, body, "application/json");
    EXPECT_GE(r.status, 400) << r.describe();
    EXPECT_LT(r.status, 500) << r.describe();
    r = s.raw("POST", "/api/v1/jobs", acme_admin, body, "application/json");
    EXPECT_GE(r.status, 400) << r.describe();
    EXPECT_LT(r.status, 500) << r.describe();
  }
  const std::string deep_yaml = std::string(5000, '[') + std::string(5000, ']');
  Resp r = s.raw("POST", "/api/v1/tokens", acme_admin, deep_yaml, "application/yaml");
  EXPECT_EQ(r.status, 400) << r.describe();
  EXPECT_EQ(s.req("GET", "/healthz", "").status, 200);
  EXPECT_EQ(s.admin("GET", "/api/v1/projects/" + acme_prj).body.value("version", 0), 1);
}

// A path that decodes to invalid UTF-8 is an ordinary 404 (or 401). Writing the request's log
// line used to throw after the handler had answered, turning every such request into a 500.
TEST_F(IsolationTest, InvalidUtf8InThePathIsNot500) {
  for (const char* path : {"/api/v1/jobs/%ff", "/api/v1/projects/%c3%28", "/api/v1/gpu-models/%ff%fe"}) {
    SCOPED_TRACE(path);
    Resp r = s.req("GET", path, acme_admin);
    EXPECT_EQ(r.status, 404) << r.describe();
    EXPECT_EQ(r.content_type, "application/problem+json") << r.describe();
    EXPECT_EQ(s.req("GET", path, "").status, 401);
  }
  EXPECT_EQ(s.req("DELETE", "/api/v1/projects/%ff", acme_admin).status, 404);
  EXPECT_EQ(s.req("GET", "/api/v1/jobs?name=%ff", acme_admin).status, 200);
}

// Every write leaves an audit entry naming who did what to which object, from the bootstrap
// operator (its user and token used to be written unaudited) to a token's revocation.
TEST_F(IsolationTest, EveryWriteIsAudited) {
  const std::string admin_id = id_of(s.admin("GET", "/api/v1/users/admin"));
  const std::string acme_admin_id = id_of(s.admin("GET", "/api/v1/users/acme-admin"));
  const std::string job = id_of(expect_2xx(s.req("POST", "/api/v1/jobs", acme_admin, job_doc("vision", "j1")), "job"));
  expect_2xx(s.req("POST", "/api/v1/jobs/" + job + "/cancel", acme_admin, json{{"reason", "test"}}), "cancel");
  json prj = expect_2xx(s.req("GET", "/api/v1/projects/" + acme_prj, acme_admin), "project").body;
  prj["display_name"] = "Vision";
  expect_2xx(s.req("PUT", "/api/v1/projects/" + acme_prj, acme_admin, prj), "update project");
  expect_2xx(s.req("PUT", "/api/v1/projects/" + acme_prj + "/quota", acme_admin, json{{"max_gpus_per_job", 4}}), "quota");
  const std::string tok =
      id_of(expect_2xx(s.req("POST", "/api/v1/tokens", acme_admin, json{{"user", "acme-admin"}, {"name", "ci"}}), "token"));
  ASSERT_EQ(s.req("DELETE", "/api/v1/tokens/" + tok, acme_admin).status, 204);
  const std::string doomed = id_of(expect_2xx(
      s.req("POST", "/api/v1/users", acme_admin, user_doc("acme-temp", "viewer", "acme")), "user"));
  ASSERT_EQ(s.req("DELETE", "/api/v1/users/" + doomed, acme_admin).status, 204);
  s.stop();

  auto store = open_sqlite_store(SqliteOptions{s.db_path(), false, 5000});
  ASSERT_TRUE(store) << store.error().message;
  auto log = (*store)->audit("", 1000);
  ASSERT_TRUE(log) << log.error().message;
  std::set<std::tuple<std::string, std::string, std::string, std::string>> seen;  // actor, action, kind, id
  std::set<std::string> bootstrap_token_actors;
  for (const auto& e : *log) {
    seen.insert({e.actor, e.action, e.kind, e.object_id});
    if (e.kind == "tokens" && e.detail == "bootstrap") bootstrap_token_actors.insert(e.actor);
  }
  using T = std::tuple<std::string, std::string, std::string, std::string>;
  for (const T& want : {T{admin_id, "create", "users", admin_id},
                        T{admin_id, "create", "tenants", acme_id},
                        T{admin_id, "create", "projects", acme_prj},
                        T{admin_id, "create", "users", acme_admin_id},
                        T{acme_admin_id, "create", "jobs", job},
                        T{acme_admin_id, "cancel", "jobs", job},
                        T{acme_admin_id, "update", "projects", acme_prj},
                        T{acme_admin_id, "update_quota", "projects", acme_prj},
                        T{acme_admin_id, "create", "tokens", tok},
                        T{acme_admin_id, "revoke", "tokens", tok},
                        T{acme_admin_id, "create", "users", doomed},
                        T{acme_admin_id, "delete", "users", doomed}})
    EXPECT_TRUE(seen.count(want)) << "no audit entry: " << std::get<0>(want) << " " << std::get<1>(want) << " "
                                  << std::get<2>(want) << "/" << std::get<3>(want);
  EXPECT_EQ(bootstrap_token_actors, std::set<std::string>{admin_id});
}

}  // namespace
}  // namespace gpurent::testing

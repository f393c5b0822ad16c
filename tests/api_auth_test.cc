// Authentication and authorisation through the real server: 401 for every kind of bad token, 403
// for a role that may not act, 404 (never a leak) for another tenant's or supplier's objects — and
// the store unchanged after each refusal, checked with the operator's token.
#include <gtest/gtest.h>

#include <set>

#include "server_fixture.h"

namespace gpurent::testing {
namespace {

bool has_id(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

void expect_problem(const Resp& r, int status) {
  EXPECT_EQ(r.status, status) << r.describe();
  EXPECT_EQ(r.content_type, "application/problem+json") << r.describe();
  EXPECT_EQ(r.body.value("status", 0), status) << r.describe();
  EXPECT_FALSE(r.body.value("detail", "").empty()) << r.describe();
}

// Two tenants (acme, globex), two suppliers (sup-a, sup-b), and a token per role.
class AuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme")), "tenant acme");
    expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("globex")), "tenant globex");
    expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("sup-a")), "supplier a");
    expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("sup-b")), "supplier b");
    acme_admin = make_user_token(s, "acme-admin", "tenant_admin", "acme");
    acme_member = make_user_token(s, "acme-member", "tenant_member", "acme");
    acme_viewer = make_user_token(s, "acme-viewer", "viewer", "acme");
    globex_admin = make_user_token(s, "globex-admin", "tenant_admin", "globex");
    supplier_a = make_user_token(s, "sup-a-ops", "supplier", "", "sup-a");
  }

  ServerProcess s;
  std::string acme_admin, acme_member, acme_viewer, globex_admin, supplier_a;
};

TEST_F(AuthTest, MissingTokenIs401ProblemWithChallenge) {
  auto before = list_ids(s, "/api/v1/tenants", s.admin_token());
  for (const char* path : {"/api/v1/tenants", "/api/v1/jobs", "/api/v1/gpu-models", "/api/v1/tokens"}) {
    Resp r = s.req("GET", path, "");
    expect_problem(r, 401);
    EXPECT_EQ(r.body.value("instance", ""), path);
    std::string challenge = r.headers.count("WWW-Authenticate") ? r.headers.find("WWW-Authenticate")->second : "";
    EXPECT_EQ(challenge.rfind("Bearer", 0), 0u) << path << ": WWW-Authenticate is '" << challenge << "'";
  }
  expect_problem(s.req("POST", "/api/v1/tenants", "", tenant_doc("sneaky")), 401);
  EXPECT_EQ(list_ids(s, "/api/v1/tenants", s.admin_token()), before);
}

TEST_F(AuthTest, MalformedUnknownAndRevokedTokensAre401) {
  const std::string unknown = "gpr_" + std::string(64, '0');
  for (const auto& [header, what] : std::vector<std::pair<std::string, std::string>>{
           {"Bearer not-a-token", "malformed"},
           {"Bearer gpr_123", "too short"},
           {"Basic YWRtaW46YWRtaW4=", "wrong scheme"},
           {"Bearer " + unknown, "unknown"},
           {"Bearer " + s.admin_token() + "x", "admin token plus a byte"}}) {
    httplib::Client c = s.client();
    auto res = c.Get("/api/v1/tenants", httplib::Headers{{"Authorization", header}});
    ASSERT_TRUE(res) << what;
    EXPECT_EQ(res->status, 401) << what << ": " << res->body;
    EXPECT_EQ(res->get_header_value("Content-Type"), "application/problem+json") << what;
    EXPECT_TRUE(res->has_header("WWW-Authenticate")) << what;
  }
  expect_problem(s.req("POST", "/api/v1/tenants", unknown, tenant_doc("sneaky")), 401);

  // Revoked: works, then 401 once revoked (and revoking again is not a way to learn anything).
  Resp t = expect_2xx(s.admin("POST", "/api/v1/tokens", json{{"user", "acme-member"}, {"name", "laptop"}}), "token");
  const std::string secret = t.body.at("token");
  EXPECT_EQ(s.req("GET", "/api/v1/jobs", secret).status, 200);
  Resp revoke = s.admin("DELETE", "/api/v1/tokens/" + t.body.at("id").get<std::string>());
  ASSERT_EQ(revoke.status, 204) << revoke.describe();
  Resp after = s.req("GET", "/api/v1/jobs", secret);
  expect_problem(after, 401);
  EXPECT_NE(after.body.value("detail", "").find("revoked"), std::string::npos) << after.describe();
  Resp after_zh = s.req("GET", "/api/v1/jobs?lang=zh", secret);  // the 401 in the caller's language
  expect_problem(after_zh, 401);
  EXPECT_EQ(after_zh.body.value("detail", ""), "令牌已被吊销") << after_zh.describe();
  EXPECT_EQ(after_zh.body.value(json::json_pointer("/detail_message/code"), ""), "auth.revoked") << after_zh.describe();
  // Tokens that expire: the expiry must lie ahead, and is listed.
  Resp past = s.admin("POST", "/api/v1/tokens",
                      json{{"user", "acme-member"}, {"name", "old"}, {"expires_at", "2020-01-01T00:00:00Z"}});
  expect_problem(past, 422);
  EXPECT_EQ(past.error_fields(), std::vector<std::string>{"expires_at"}) << past.describe();
  Resp later = s.admin("POST", "/api/v1/tokens",
                       json{{"user", "acme-member"}, {"name", "later"}, {"expires_at", "2099-01-01T00:00:00Z"}});
  ASSERT_EQ(later.status, 201) << later.describe();
  EXPECT_EQ(later.body.value("expires_at", ""), "2099-01-01T00:00:00.000Z");
  EXPECT_EQ(s.req("GET", "/api/v1/jobs", later.body.value("token", "")).status, 200);
  // At most 50 live tokens per user (each has rate limits of its own): acme-member holds "test"
  // and "later" (laptop is revoked), so 48 more fill it; a revoked one frees a place.
  std::string last_id;
  for (int i = 0; i < 48; ++i)
    last_id = expect_2xx(s.admin("POST", "/api/v1/tokens", json{{"user", "acme-member"}, {"name", "t" + std::to_string(i)}}),
                         "token " + std::to_string(i))
                  .body.at("id");
  Resp full = s.admin("POST", "/api/v1/tokens", json{{"user", "acme-member"}, {"name", "one-more"}});
  expect_problem(full, 422);
  EXPECT_EQ(full.error_fields(), std::vector<std::string>{"user"}) << full.describe();
  EXPECT_NE(full.reason_for("user").find("50"), std::string::npos) << full.describe();
  ASSERT_EQ(s.admin("DELETE", "/api/v1/tokens/" + last_id).status, 204);
  expect_2xx(s.admin("POST", "/api/v1/tokens", json{{"user", "acme-member"}, {"name", "one-more"}}), "after a revoke");
  // Deleting a user ends its tokens at once, and they are gone from the list (nobody could mint
  // for that user again to prune them).
  Resp viewer = expect_2xx(s.admin("GET", "/api/v1/users/acme-viewer"), "get viewer");
  const std::string viewer_id = viewer.body.at("id");
  ASSERT_EQ(s.admin("DELETE", "/api/v1/users/" + viewer_id).status, 204);
  expect_problem(s.req("GET", "/api/v1/projects", acme_viewer), 401);
  for (const auto& t : s.admin("GET", "/api/v1/tokens").body.at("items"))
    EXPECT_NE(t.value("user_id", ""), viewer_id) << t.dump();
  EXPECT_EQ(list_ids(s, "/api/v1/tenants", s.admin_token()).size(), 2u);
}

// Minting and revoking tokens in a loop keeps the user's list (and each mint's scan of it) bounded:
// the 100 newest dead tokens stay listed, older ones go. An expired token's name is free again.
TEST_F(AuthTest, DeadTokensArePrunedAndTheirNamesAreFreeAgain) {
  std::vector<std::string> minted;
  for (int i = 0; i < 110; ++i) {
    Resp t = expect_2xx(s.admin("POST", "/api/v1/tokens", json{{"user", "acme-viewer"}, {"name", "ci"}}),
                        "token " + std::to_string(i));
    minted.push_back(t.body.at("id"));
    ASSERT_EQ(s.admin("DELETE", "/api/v1/tokens/" + minted.back()).status, 204);
  }
  auto listed = [&] {
    Resp l = expect_2xx(s.admin("GET", "/api/v1/tokens?user=acme-viewer"), "list");
    std::set<std::string> ids;
    for (const auto& t : l.body.at("items")) ids.insert(t.at("id").get<std::string>());
    return ids;
  };
  // The last mint pruned down to the 100 newest dead ones (its own token, live then, was revoked
  // after): the fixture's token, minted[9..109].
  std::set<std::string> ids = listed();
  EXPECT_EQ(ids.size(), 102u);
  EXPECT_EQ(ids.count(minted.front()), 0u);
  EXPECT_EQ(ids.count(minted[8]), 0u);
  EXPECT_EQ(ids.count(minted[9]), 1u);
  EXPECT_EQ(ids.count(minted.back()), 1u);
  // An expired token holds its name no longer.
  const std::string soon = format_rfc3339(SystemClock().now() + 3'000);
  expect_2xx(s.admin("POST", "/api/v1/tokens", json{{"user", "acme-viewer"}, {"name", "short"}, {"expires_at", soon}}),
             "short-lived");
  expect_problem(s.admin("POST", "/api/v1/tokens", json{{"user", "acme-viewer"}, {"name", "short"}}), 409);
  std::this_thread::sleep_for(std::chrono::milliseconds(3'500));
  expect_2xx(s.admin("POST", "/api/v1/tokens", json{{"user", "acme-viewer"}, {"name", "short"}}), "name free again");
}

TEST_F(AuthTest, WrongRoleIs403AndChangesNothing) {
  auto projects = list_ids(s, "/api/v1/projects", s.admin_token());
  auto users = list_ids(s, "/api/v1/users", s.admin_token());
  auto tenants = list_ids(s, "/api/v1/tenants", s.admin_token());
  auto suppliers = list_ids(s, "/api/v1/suppliers", s.admin_token());

  expect_problem(s.req("POST", "/api/v1/projects", acme_viewer, project_doc("acme", "vision")), 403);
  expect_problem(s.req("POST", "/api/v1/users", acme_member, user_doc("intruder", "tenant_member", "acme")), 403);
  expect_problem(s.req("POST", "/api/v1/tenants", supplier_a, tenant_doc("supplier-made")), 403);
  expect_problem(s.req("POST", "/api/v1/tenants", acme_admin, tenant_doc("admin-made")), 403);
  expect_problem(s.req("POST", "/api/v1/suppliers", acme_admin, supplier_doc("tenant-made")), 403);
  // A tenant admin may not rename its own tenant (tenants are the operator's).
  Resp acme = expect_2xx(s.admin("GET", "/api/v1/tenants/acme"), "get acme");
  json renamed = acme.body;
  renamed["display_name"] = "Renamed";
  Resp put = s.req("PUT", "/api/v1/tenants/" + acme.body.at("id").get<std::string>(), acme_admin, renamed);
  expect_problem(put, 403);

  EXPECT_EQ(list_ids(s, "/api/v1/projects", s.admin_token()), projects);
  EXPECT_EQ(list_ids(s, "/api/v1/users", s.admin_token()), users);
  EXPECT_EQ(list_ids(s, "/api/v1/tenants", s.admin_token()), tenants);
  EXPECT_EQ(list_ids(s, "/api/v1/suppliers", s.admin_token()), suppliers);
  EXPECT_EQ(expect_2xx(s.admin("GET", "/api/v1/tenants/acme"), "get acme").body, acme.body);
}

TEST_F(AuthTest, OtherTenantsObjectsAreNotFoundAndUnchanged) {
  Resp prj = expect_2xx(s.req("POST", "/api/v1/projects", acme_admin, project_doc("acme", "vision")), "project");
  Resp job = expect_2xx(s.req("POST", "/api/v1/jobs", acme_member, job_doc("vision", "train-1")), "job");
  const std::string prj_id = prj.body.at("id"), job_id = job.body.at("id");
  const std::string acme_id = expect_2xx(s.admin("GET", "/api/v1/tenants/acme"), "acme").body.at("id");
  const std::string member_id = expect_2xx(s.admin("GET", "/api/v1/users/acme-member"), "member").body.at("id");

  const json prj_before = expect_2xx(s.admin("GET", "/api/v1/projects/" + prj_id), "get").body;
  const json job_before = expect_2xx(s.admin("GET", "/api/v1/jobs/" + job_id), "get").body;
  json edit = prj_before;
  edit["display_name"] = "hijacked";

  struct Probe {
    std::string method, path;
    std::optional<json> body;
  };
  std::vector<Probe> probes = {
      {"GET", "/api/v1/projects/" + prj_id, {}},
      {"GET", "/api/v1/projects/vision", {}},  // by name: looked up in the caller's tenant only
      {"PUT", "/api/v1/projects/" + prj_id, edit},
      {"DELETE", "/api/v1/projects/" + prj_id, {}},
      {"GET", "/api/v1/projects/" + prj_id + "/quota", {}},
      {"PUT", "/api/v1/projects/" + prj_id + "/quota", json{{"max_gpus_per_job", 1}}},
      {"GET", "/api/v1/jobs/" + job_id, {}},
      {"GET", "/api/v1/jobs/train-1", {}},
      {"GET", "/api/v1/jobs/" + job_id + "/events", {}},
      {"POST", "/api/v1/jobs/" + job_id + "/cancel", {}},
      {"GET", "/api/v1/tenants/" + acme_id, {}},
      {"GET", "/api/v1/tenants/acme", {}},
      {"GET", "/api/v1/users/" + member_id, {}},
      {"PUT", "/api/v1/users/" + member_id, user_doc("acme-member", "viewer", "acme")},
      {"DELETE", "/api/v1/users/" + member_id, {}},
  };
  for (const auto& p : probes) {
    Resp r = s.req(p.method, p.path, globex_admin, p.body);
    SCOPED_TRACE(p.method + " " + p.path);
    expect_problem(r, 404);
    // The answer must not tell a missing object from a hidden one.
    EXPECT_EQ(r.text.find("forbidden"), std::string::npos) << r.describe();
  }
  // Creating into another tenant names the reference that is not visible.
  Resp cross_prj = s.req("POST", "/api/v1/projects", globex_admin, project_doc("acme", "stolen"));
  expect_problem(cross_prj, 422);
  EXPECT_EQ(cross_prj.error_fields(), std::vector<std::string>{"tenant"}) << cross_prj.describe();
  Resp cross_job = s.req("POST", "/api/v1/jobs", globex_admin, job_doc(prj_id, "stolen"));
  expect_problem(cross_job, 422);
  EXPECT_EQ(cross_job.error_fields(), std::vector<std::string>{"project"}) << cross_job.describe();

  // Lists show only the caller's tenant.
  EXPECT_FALSE(has_id(list_ids(s, "/api/v1/projects", globex_admin), prj_id));
  EXPECT_FALSE(has_id(list_ids(s, "/api/v1/jobs", globex_admin), job_id));
  EXPECT_EQ(s.req("GET", "/api/v1/jobs?tenant=acme", globex_admin).status, 404);  // as GET /tenants/acme
  EXPECT_FALSE(has_id(list_ids(s, "/api/v1/tenants", globex_admin), acme_id));
  EXPECT_FALSE(has_id(list_ids(s, "/api/v1/users", globex_admin), member_id));
  EXPECT_TRUE(has_id(list_ids(s, "/api/v1/jobs", acme_viewer), job_id));

  // Nothing changed.
  EXPECT_EQ(expect_2xx(s.admin("GET", "/api/v1/projects/" + prj_id), "get").body, prj_before);
  EXPECT_EQ(expect_2xx(s.admin("GET", "/api/v1/jobs/" + job_id), "get").body, job_before);
  EXPECT_EQ(job_before.at("status").at("state"), "pending");
  EXPECT_EQ(s.admin("GET", "/api/v1/users/" + member_id).body.value("role", ""), "tenant_member");
  EXPECT_EQ(list_ids(s, "/api/v1/projects", s.admin_token()), std::vector<std::string>{prj_id});
  EXPECT_EQ(list_ids(s, "/api/v1/jobs", s.admin_token()), std::vector<std::string>{job_id});
}

TEST_F(AuthTest, SupplierChangesOnlyItsOwnSupply) {
  Resp na = expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("sup-a", "node-a")), "node a");
  Resp nb = expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("sup-b", "node-b")), "node b");
  const std::string a_id = na.body.at("id"), b_id = nb.body.at("id");
  // No offer sells these nodes: the answer says so (a warning, not an error); a GET carries none.
  ASSERT_EQ(nb.body.at("warnings").size(), 1u) << nb.describe();
  EXPECT_EQ(nb.body["warnings"][0]["text_message"]["code"], "api.nodes.no_offer");
  json b_before = nb.body;
  b_before.erase("warnings");
  // The market is public: every signed-in user reads every supplier's nodes.
  EXPECT_EQ(list_ids(s, "/api/v1/nodes", supplier_a).size(), 2u);
  EXPECT_EQ(s.req("GET", "/api/v1/nodes/" + b_id, supplier_a).status, 200);
  EXPECT_EQ(s.req("GET", "/api/v1/nodes/" + b_id, acme_viewer).status, 200);
  // Changing it is another matter.
  json edit = nb.body;
  edit["state"] = "drained";
  expect_problem(s.req("PUT", "/api/v1/nodes/" + b_id, supplier_a, edit), 403);
  expect_problem(s.req("DELETE", "/api/v1/nodes/" + b_id, supplier_a), 403);
  expect_problem(s.req("PUT", "/api/v1/nodes/" + b_id, acme_admin, edit), 403);
  expect_problem(s.req("DELETE", "/api/v1/nodes/" + b_id, acme_admin), 403);
  expect_problem(s.req("POST", "/api/v1/nodes", acme_admin, node_doc("sup-a", "tenant-made")), 403);
  // Moving one's own node to another supplier, or registering one for it, names the reference.
  json move = na.body;
  move["supplier"] = "sup-b";
  Resp moved = s.req("PUT", "/api/v1/nodes/" + a_id, supplier_a, move);
  expect_problem(moved, 422);
  EXPECT_EQ(moved.error_fields(), std::vector<std::string>{"supplier"}) << moved.describe();
  Resp cross = s.req("POST", "/api/v1/nodes", supplier_a, node_doc("sup-b", "planted"));
  expect_problem(cross, 422);
  EXPECT_EQ(cross.error_fields(), std::vector<std::string>{"supplier"}) << cross.describe();
  // What it may do: change its own node.
  json own = na.body;
  own["state"] = "drained";
  Resp ok = s.req("PUT", "/api/v1/nodes/" + a_id, supplier_a, own);
  EXPECT_EQ(ok.status, 200) << ok.describe();

  EXPECT_EQ(expect_2xx(s.admin("GET", "/api/v1/nodes/" + b_id), "get").body, b_before);
  EXPECT_EQ(s.admin("GET", "/api/v1/nodes/" + a_id).body.value("supplier_id", ""), na.body.value("supplier_id", "?"));
  EXPECT_EQ(list_ids(s, "/api/v1/nodes", s.admin_token()).size(), 2u);
}

TEST_F(AuthTest, TenantAdminCannotGrantOperatorAdmin) {
  auto users = list_ids(s, "/api/v1/users", s.admin_token());
  Resp r = s.req("POST", "/api/v1/users", acme_admin, user_doc("root2", "operator_admin"));
  expect_problem(r, 403);
  EXPECT_EQ(r.error_fields(), std::vector<std::string>{"role"}) << r.describe();
  // Nor promote an existing user of its tenant, nor itself.
  Resp member = expect_2xx(s.req("GET", "/api/v1/users/acme-member", acme_admin), "get member");
  json promote = member.body;
  promote["role"] = "operator_admin";
  promote.erase("tenant");
  expect_problem(s.req("PUT", "/api/v1/users/" + member.body.at("id").get<std::string>(), acme_admin, promote), 403);
  // Nor create users in another tenant.
  Resp other = s.req("POST", "/api/v1/users", acme_admin, user_doc("spy", "tenant_admin", "globex"));
  expect_problem(other, 422);
  EXPECT_EQ(other.error_fields(), std::vector<std::string>{"tenant"}) << other.describe();
  // What it may do: a member of its own tenant.
  expect_2xx(s.req("POST", "/api/v1/users", acme_admin, user_doc("acme-new", "tenant_member", "acme")), "member");

  auto after = list_ids(s, "/api/v1/users", s.admin_token());
  EXPECT_EQ(after.size(), users.size() + 1);
  EXPECT_EQ(s.admin("GET", "/api/v1/users/acme-member").body.value("role", ""), "tenant_member");
  EXPECT_EQ(s.admin("GET", "/api/v1/users/root2").status, 404);
}

// GET /me says who the caller is as requests act now: a promoted viewer's old token lists the role
// it was minted with, and /me the one it has (what the dashboard shows its buttons by).
TEST_F(AuthTest, MeIsTheCallersCurrentRoleAndScope) {
  Resp me = expect_2xx(s.req("GET", "/api/v1/me", acme_viewer), "me");
  EXPECT_EQ(me.body.value("role", ""), "viewer") << me.describe();
  EXPECT_EQ(me.body.value("user", ""), "acme-viewer");
  EXPECT_EQ(me.body.value("tenant", ""), "acme");
  EXPECT_TRUE(me.body.value("tenant_id", "").starts_with("ten_")) << me.describe();
  EXPECT_FALSE(me.body.contains("supplier_id"));
  EXPECT_TRUE(me.body.contains("expires_at") && me.body["expires_at"].is_null()) << me.describe();
  const std::string token_id = me.body.value("token_id", "");
  Resp mine = expect_2xx(s.req("GET", "/api/v1/tokens", acme_viewer), "tokens");
  ASSERT_EQ(mine.body["items"].size(), 1u) << mine.describe();
  EXPECT_EQ(mine.body["items"][0].value("id", ""), token_id);
  EXPECT_EQ(me.body.value("token", ""), mine.body["items"][0].value("name", ""));

  Resp viewer = expect_2xx(s.req("GET", "/api/v1/users/acme-viewer", acme_admin), "get viewer");
  json promote = viewer.body;
  promote["role"] = "tenant_member";
  expect_2xx(s.req("PUT", "/api/v1/users/" + viewer.body.at("id").get<std::string>(), acme_admin, promote), "promote");
  EXPECT_EQ(s.req("GET", "/api/v1/me", acme_viewer).body.value("role", ""), "tenant_member");
  EXPECT_EQ(s.req("GET", "/api/v1/tokens", acme_viewer).body["items"][0].value("role", ""), "viewer");

  Resp supplier = expect_2xx(s.req("GET", "/api/v1/me", supplier_a), "supplier me");
  EXPECT_EQ(supplier.body.value("role", ""), "supplier");
  EXPECT_EQ(supplier.body.value("supplier", ""), "sup-a");
  EXPECT_FALSE(supplier.body.contains("tenant_id"));
  EXPECT_EQ(s.req("GET", "/api/v1/me", s.admin_token()).body.value("role", ""), "operator_admin");
  expect_problem(s.req("GET", "/api/v1/me", ""), 401);
  expect_problem(s.req("GET", "/api/v1/me?user=acme-admin", acme_viewer), 422);
}

TEST_F(AuthTest, TokenSecretsNeverAppearInListings) {
  std::vector<std::string> secrets = {s.admin_token(), acme_admin, acme_member, acme_viewer, globex_admin, supplier_a};
  Resp extra = expect_2xx(s.req("POST", "/api/v1/tokens", acme_member, json{{"user", "acme-member"}, {"name", "ci"}}),
                          "own token");
  EXPECT_EQ(extra.status, 201);
  secrets.push_back(extra.body.at("token"));
  for (const std::string& who : {s.admin_token(), acme_admin, acme_member}) {
    Resp r = s.req("GET", "/api/v1/tokens", who);
    ASSERT_EQ(r.status, 200) << r.describe();
    ASSERT_FALSE(r.body.at("items").empty());
    for (const auto& t : r.body.at("items")) {
      EXPECT_FALSE(t.contains("token")) << t.dump();
      EXPECT_FALSE(t.contains("secret_hash")) << t.dump();
    }
    for (const auto& sec : secrets) {
      EXPECT_EQ(r.text.find(sec), std::string::npos) << "a token secret is listed";
      EXPECT_EQ(r.text.find(sec.substr(4, 16)), std::string::npos) << "part of a token secret is listed";
    }
  }
  // Scope: a member sees only its own tokens; a tenant admin sees its tenant's, not globex's.
  const std::string member_user = s.admin("GET", "/api/v1/users/acme-member").body.value("id", "?");
  const json member_sees = s.req("GET", "/api/v1/tokens", acme_member).body.at("items");
  EXPECT_EQ(member_sees.size(), 2u) << member_sees.dump();
  for (const auto& t : member_sees) EXPECT_EQ(t.value("user_id", "?"), member_user);
  const json admin_sees = s.req("GET", "/api/v1/tokens", acme_admin).body.at("items");
  std::set<std::string> owners;
  for (const auto& t : admin_sees) owners.insert(t.value("user_id", "?"));
  std::set<std::string> acme_users;
  for (const char* u : {"acme-admin", "acme-member", "acme-viewer"})
    acme_users.insert(s.admin("GET", std::string("/api/v1/users/") + u).body.value("id", "!"));
  EXPECT_EQ(owners, acme_users) << "a tenant admin sees exactly its tenant's tokens: " << admin_sees.dump();
  EXPECT_EQ(admin_sees.size(), 4u) << admin_sees.dump();
}

// A tenant's admin mints tokens for itself and for its tenant's members and viewers (robots, CI),
// not as another of its tenant's admins (403 naming the user: that token's writes would read as
// the other admin's in the audit log); it may still list and revoke theirs. An operator mints
// anyone's.
TEST_F(AuthTest, ATenantAdminMintsNoTokenAsAnotherAdmin) {
  make_user_token(s, "acme-admin2", "tenant_admin", "acme");
  expect_2xx(s.req("POST", "/api/v1/tokens", acme_admin, json{{"user", "acme-admin"}, {"name", "own"}}), "its own");
  expect_2xx(s.req("POST", "/api/v1/tokens", acme_admin, json{{"user", "acme-member"}, {"name", "ci"}}), "a member's");
  expect_2xx(s.req("POST", "/api/v1/tokens", acme_admin, json{{"user", "acme-viewer"}, {"name", "ci"}}), "a viewer's");
  const size_t before = s.admin("GET", "/api/v1/tokens?user=acme-admin2").body.at("items").size();
  Resp peer = s.req("POST", "/api/v1/tokens", acme_admin, json{{"user", "acme-admin2"}, {"name", "as-peer"}});
  expect_problem(peer, 403);
  EXPECT_NE(peer.body.value("detail", "").find("not as another tenant_admin (acme-admin2)"), std::string::npos)
      << peer.describe();
  EXPECT_EQ(s.admin("GET", "/api/v1/tokens?user=acme-admin2").body.at("items").size(), before) << "nothing minted";
  const std::string peer_token =
      expect_2xx(s.admin("POST", "/api/v1/tokens", json{{"user", "acme-admin2"}, {"name", "by-op"}}),
                 "an operator mints it")
          .body.at("id");
  EXPECT_EQ(s.req("DELETE", "/api/v1/tokens/" + peer_token, acme_admin).status, 204)
      << "a peer's token is still revocable";
}

TEST_F(AuthTest, OperationalEndpointsNeedNoToken) {
  Resp health = s.req("GET", "/healthz", "");
  EXPECT_EQ(health.status, 200) << health.describe();
  EXPECT_EQ(health.body.value("status", ""), "ok");
  Resp ready = s.req("GET", "/readyz", "");
  EXPECT_EQ(ready.status, 200) << ready.describe();
  EXPECT_EQ(ready.body.value("status", ""), "ready");

  s.req("GET", "/api/v1/tenants", "");  // one counted 401 at least
  Resp metrics = s.req("GET", "/metrics", "");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_EQ(metrics.content_type, "text/plain");
  EXPECT_NE(metrics.text.find("# TYPE gpurent_http_requests_total counter"), std::string::npos) << metrics.text;
  EXPECT_NE(metrics.text.find("status=\"401\""), std::string::npos) << metrics.text;

  Resp doc = s.req("GET", "/api/v1/openapi.json", "");
  EXPECT_EQ(doc.status, 200);
  EXPECT_EQ(doc.content_type, "application/json");
  ASSERT_TRUE(doc.body.is_object()) << doc.describe();
  EXPECT_TRUE(doc.body.contains("openapi"));
  EXPECT_TRUE(doc.body.at("paths").contains("/api/v1/jobs") || doc.body.at("paths").contains("/jobs"))
      << "the document does not describe the jobs route";
}

}  // namespace
}  // namespace gpurent::testing

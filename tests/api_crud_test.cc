// The resource lifecycle through the real server: supplier → node → offer → tenant → users →
// project (+ quota) → tokens → jobs (submit, filter, get, cancel, events), optimistic concurrency,
// name uniqueness, referential delete checks, keyset paging and GET→PUT round trips.
#include <gtest/gtest.h>

#include <set>

#include "server_fixture.h"

namespace gpurent::testing {
namespace {

std::string id_of(const Resp& r) { return r.body.at("id").get<std::string>(); }

// Names of the listed items, in list order.
std::vector<std::string> names(const Resp& r) {
  std::vector<std::string> out;
  for (const auto& it : r.body.at("items")) out.push_back(it.value("name", "?"));
  return out;
}

// A document minus the keys a write changes by itself.
json without_write_stamps(json j) {
  j.erase("version");
  j.erase("updated_at");
  return j;
}

// Follows a list's pages from `path` (which has a query): the ids in list order and each page's
// size. Each next_after must be its page's last id; each answer at most `max_bytes` long.
std::pair<std::vector<std::string>, std::vector<size_t>> page_through(const ServerProcess& s, const std::string& path,
                                                                      size_t max_bytes = SIZE_MAX) {
  std::vector<std::string> seen;
  std::vector<size_t> sizes;
  std::string after;
  for (int page = 0; page < 10; ++page) {
    Resp r = s.admin("GET", path + (after.empty() ? "" : "&after=" + after));
    EXPECT_EQ(r.status, 200) << r.describe();
    if (r.status != 200) break;
    EXPECT_LT(r.body.dump().size(), max_bytes);
    sizes.push_back(r.body.at("items").size());
    for (const auto& it : r.body.at("items")) seen.push_back(it.at("id"));
    if (r.body.at("next_after").is_null()) break;
    after = r.body.at("next_after");
    EXPECT_EQ(after, seen.back());
  }
  return {seen, sizes};
}

class CrudTest : public ::testing::Test {
 protected:
  ServerProcess s;
};

TEST_F(CrudTest, FullLifecycle) {
  // Supply side, by the operator.
  Resp sup = s.admin("POST", "/api/v1/suppliers", supplier_doc("sup-a"));
  ASSERT_EQ(sup.status, 201) << sup.describe();
  const std::string sup_id = id_of(sup);
  EXPECT_EQ(sup_id.rfind("sup_", 0), 0u);
  ASSERT_EQ(sup.headers.count("Location"), 1u);
  EXPECT_EQ(sup.headers.find("Location")->second, "/api/v1/suppliers/" + sup_id);
  EXPECT_EQ(sup.body.value("version", 0), 1);
  EXPECT_EQ(sup.body.value("created_at", ""), sup.body.value("updated_at", "x"));
  EXPECT_EQ(s.admin("GET", "/api/v1/suppliers/" + sup_id).body, sup.body);
  EXPECT_EQ(s.admin("GET", "/api/v1/suppliers/sup-a").body, sup.body);

  Resp node = s.admin("POST", "/api/v1/nodes", node_doc("sup-a", "node-1"));
  ASSERT_EQ(node.status, 201) << node.describe();
  EXPECT_EQ(node.body.value("supplier_id", ""), sup_id);
  EXPECT_EQ(node.body.at("gpus").size(), 8u);
  EXPECT_EQ(node.body.at("gpus")[5].value("numa_node", -1), 1);
  EXPECT_EQ(node.body.at("gpus")[5].value("nvlink_domain", ""), "nvswitch-0");
  Resp offer = s.admin("POST", "/api/v1/offers", offer_doc("sup-a", "h100-standard"));
  ASSERT_EQ(offer.status, 201) << offer.describe();
  EXPECT_EQ(offer.body.at("prices").value("on_demand", ""), "17.50");
  EXPECT_EQ(offer.body.at("fees").at("idle").value("action", ""), "discount");
  // The node was answered with a warning while no offer sold it; once one does, none.
  EXPECT_EQ(node.body.at("warnings").at(0).at("text_message").at("code"), "api.nodes.no_offer") << node.describe();
  Resp rewritten = s.admin("PUT", "/api/v1/nodes/" + node.body.value("id", ""), node.body);
  ASSERT_EQ(rewritten.status, 200) << rewritten.describe();
  EXPECT_FALSE(rewritten.body.contains("warnings")) << rewritten.describe();
  EXPECT_EQ(names(s.admin("GET", "/api/v1/nodes?supplier=sup-a")), std::vector<std::string>{"node-1"});
  EXPECT_EQ(names(s.admin("GET", "/api/v1/offers?gpu_model=h100-sxm5-80gb")), std::vector<std::string>{"h100-standard"});
  EXPECT_EQ(s.admin("GET", "/api/v1/nodes?supplier=nobody").status, 404);  // a typo is not an empty list

  // Demand side: the tenant and its admin by the operator; the rest by the tenant admin.
  const std::string ten_id = id_of(expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme")), "tenant"));
  const std::string admin_tok = make_user_token(s, "acme-admin", "tenant_admin", "acme");
  Resp dev = s.req("POST", "/api/v1/users", admin_tok, user_doc("acme-dev", "tenant_member", "acme"));
  ASSERT_EQ(dev.status, 201) << dev.describe();
  EXPECT_EQ(dev.body.value("tenant_id", ""), ten_id);
  Resp tok = s.req("POST", "/api/v1/tokens", admin_tok, json{{"user", "acme-dev"}, {"name", "laptop"}});
  ASSERT_EQ(tok.status, 201) << tok.describe();
  const std::string dev_tok = tok.body.at("token");
  EXPECT_EQ(dev_tok.rfind("gpr_", 0), 0u);
  EXPECT_EQ(s.req("POST", "/api/v1/tokens", admin_tok, json{{"user", "acme-dev"}, {"name", "laptop"}}).status, 409);

  json pdoc = project_doc("acme", "vision");
  pdoc.erase("tenant");  // a tenant admin's own tenant is the default
  Resp prj = s.req("POST", "/api/v1/projects", admin_tok, pdoc);
  ASSERT_EQ(prj.status, 201) << prj.describe();
  const std::string prj_id = id_of(prj);
  EXPECT_EQ(prj.body.value("tenant_id", ""), ten_id);
  json quota = {{"gpus_per_model", {{"h100-sxm5-80gb", 16}, {"*", 2}}},
                {"max_gpus_per_job", 8},
                {"max_concurrent_jobs", 4},
                {"monthly_budget", "5000.00"},
                {"budget_action", "alert"}};
  Resp q = s.req("PUT", "/api/v1/projects/" + prj_id + "/quota", admin_tok, quota);
  ASSERT_EQ(q.status, 200) << q.describe();
  // The answer is the quota plus read-only figures: the month's budget burn and any hold.
  auto bare = [](json j) {
    for (const char* k : {"currency", "budget", "budget_hold", "warnings"}) j.erase(k);
    return j;
  };
  EXPECT_EQ(bare(q.body), quota);
  EXPECT_EQ(q.body.at("budget").value("remaining", ""), "5000.00") << q.describe();  // nothing spent yet
  EXPECT_EQ(bare(s.req("GET", "/api/v1/projects/vision/quota", dev_tok).body), quota);
  Resp prj2 = s.admin("GET", "/api/v1/projects/" + prj_id);
  EXPECT_EQ(prj2.body.value("version", 0), 2);
  EXPECT_EQ(prj2.body.at("quota"), quota);
  EXPECT_EQ(s.req("PUT", "/api/v1/projects/" + prj_id + "/quota", dev_tok, quota).status, 403);

  // Jobs, by the member.
  Resp j1 = s.req("POST", "/api/v1/jobs", dev_tok, job_doc("vision", "train-1"));
  ASSERT_EQ(j1.status, 201) << j1.describe();
  json j2doc = job_doc(prj_id, "serve-1");
  j2doc["constraints"] = {{"gpu_models", {"a100-sxm4-80gb"}}};
  Resp j2 = s.req("POST", "/api/v1/jobs", dev_tok, j2doc);
  ASSERT_EQ(j2.status, 201) << j2.describe();
  const std::string j1_id = id_of(j1);
  EXPECT_EQ(j1.body.at("status").value("state", ""), "pending");
  EXPECT_EQ(j1.body.value("project_id", ""), prj_id);
  EXPECT_EQ(j1.body.value("tenant_id", ""), ten_id);
  json too_big = job_doc("vision", "too-big");
  too_big["gpus_per_worker"] = 16;  // the quota now allows 8 per job
  EXPECT_EQ(s.req("POST", "/api/v1/jobs", dev_tok, too_big).status, 422);
  Resp dup = s.req("POST", "/api/v1/jobs", dev_tok, job_doc("vision", "train-1"));
  EXPECT_EQ(dup.status, 409) << dup.describe();

  auto listed = [&](const std::string& query) {
    Resp r = s.req("GET", "/api/v1/jobs" + query, dev_tok);
    EXPECT_EQ(r.status, 200) << query << ": " << r.describe();
    auto n = names(r);
    std::sort(n.begin(), n.end());
    return n;
  };
  const std::vector<std::string> both = {"serve-1", "train-1"};
  EXPECT_EQ(listed(""), both);
  EXPECT_EQ(listed("?project=vision"), both);
  EXPECT_EQ(listed("?project=" + prj_id), both);
  EXPECT_EQ(listed("?state=pending"), both);
  EXPECT_EQ(listed("?name=train-1"), std::vector<std::string>{"train-1"});
  EXPECT_EQ(listed("?gpu_model=h100-sxm5-80gb"), std::vector<std::string>{"train-1"});
  EXPECT_EQ(listed("?gpu_model=a100-sxm4-80gb&state=pending"), std::vector<std::string>{"serve-1"});
  // A filter naming nothing is an error naming the parameter, not an empty list.
  Resp typo = s.req("GET", "/api/v1/jobs?project=no-such-project", dev_tok);
  EXPECT_EQ(typo.status, 404) << typo.describe();
  EXPECT_EQ(typo.error_fields(), std::vector<std::string>{"project"}) << typo.describe();
  Resp bad_state = s.req("GET", "/api/v1/jobs?state=runing", dev_tok);
  EXPECT_EQ(bad_state.status, 422) << bad_state.describe();
  EXPECT_NE(bad_state.body.dump().find("pending, admitted, running"), std::string::npos) << bad_state.describe();
  Resp no_user = s.req("GET", "/api/v1/tokens?user=nobody", dev_tok);
  EXPECT_EQ(no_user.status, 404) << no_user.describe();
  EXPECT_EQ(s.req("GET", "/api/v1/jobs/" + j1_id, dev_tok).body, j1.body);
  EXPECT_EQ(s.req("GET", "/api/v1/jobs/train-1", dev_tok).body, j1.body);

  Resp c = s.req("POST", "/api/v1/jobs/train-1/cancel", dev_tok, json{{"reason", "wrong data set"}});
  ASSERT_EQ(c.status, 200) << c.describe();
  EXPECT_EQ(c.body.at("status").value("state", ""), "cancelled");
  EXPECT_NE(c.body.at("status").value("reason", "").find("wrong data set"), std::string::npos) << c.describe();
  EXPECT_EQ(c.body.value("version", 0), 2);
  Resp ev = s.req("GET", "/api/v1/jobs/" + j1_id + "/events", dev_tok);
  ASSERT_EQ(ev.status, 200) << ev.describe();
  ASSERT_EQ(ev.body.at("items").size(), 2u) << ev.describe();
  EXPECT_TRUE(ev.body["items"][0].at("from").is_null());
  EXPECT_EQ(ev.body["items"][0].value("to", ""), "pending");
  EXPECT_EQ(ev.body["items"][1].value("from", ""), "pending");
  EXPECT_EQ(ev.body["items"][1].value("to", ""), "cancelled");
  Resp again = s.req("POST", "/api/v1/jobs/" + j1_id + "/cancel", dev_tok);
  EXPECT_EQ(again.status, 409) << again.describe();
  EXPECT_EQ(again.content_type, "application/problem+json");
  EXPECT_EQ(s.req("GET", "/api/v1/jobs/" + j1_id + "/events", dev_tok).body.at("items").size(), 2u);
  EXPECT_EQ(listed("?state=cancelled"), std::vector<std::string>{"train-1"});
  EXPECT_EQ(listed("?state=pending"), std::vector<std::string>{"serve-1"});
  // updated_since: the jobs last written at or after a time (the cancel wrote train-1 again).
  const std::string cancelled_at = c.body.value("updated_at", "");
  ASSERT_FALSE(cancelled_at.empty()) << c.describe();
  EXPECT_EQ(listed("?updated_since=" + cancelled_at), std::vector<std::string>{"train-1"});
  EXPECT_EQ(listed("?updated_since=" + j2.body.value("updated_at", "")), both);
  EXPECT_EQ(listed("?updated_since=" + cancelled_at + "&state=pending"), std::vector<std::string>{});
  EXPECT_EQ(listed("?updated_since=2999-01-01T00:00:00Z"), std::vector<std::string>{});
  Resp bad_since = s.req("GET", "/api/v1/jobs?updated_since=yesterday", dev_tok);
  EXPECT_EQ(bad_since.status, 422) << bad_since.describe();
  EXPECT_EQ(bad_since.error_fields(), std::vector<std::string>{"updated_since"}) << bad_since.describe();
  Resp not_here = s.req("GET", "/api/v1/projects?updated_since=" + cancelled_at, dev_tok);
  EXPECT_EQ(not_here.status, 422) << "only where the route says so: " << not_here.describe();
  for (const char* kind : {"allocations", "market-orders", "market-trades"}) {
    Resp r = s.admin("GET", std::string("/api/v1/") + kind + "?updated_since=2999-01-01T00:00:00Z");
    EXPECT_EQ(r.status, 200) << kind << ": " << r.describe();
  }
  // Jobs are immutable and kept for billing and audit.
  for (const Resp& r : {s.admin("PUT", "/api/v1/jobs/" + j1_id, c.body), s.admin("DELETE", "/api/v1/jobs/" + j1_id)}) {
    EXPECT_EQ(r.status, 405) << r.describe();
    EXPECT_EQ(r.content_type, "application/problem+json");
    EXPECT_EQ(r.body.value("status", 0), 405) << "the problem's status must be the response's: " << r.describe();
    EXPECT_EQ(r.headers.count("Allow"), 1u) << "a 405 must say which methods are allowed";
  }
  EXPECT_EQ(s.admin("GET", "/api/v1/jobs/" + j1_id).body.value("version", 0), 2);
  EXPECT_EQ(s.admin("DELETE", "/api/v1/projects/" + prj_id).status, 409);

  // Token management: the tenant admin lists and revokes the member's token.
  Resp toks = s.req("GET", "/api/v1/tokens?user=acme-dev", admin_tok);
  ASSERT_EQ(toks.status, 200) << toks.describe();
  ASSERT_EQ(toks.body.at("items").size(), 1u) << toks.describe();
  EXPECT_EQ(toks.body["items"][0].value("id", ""), tok.body.value("id", "?"));
  ASSERT_EQ(s.req("DELETE", "/api/v1/tokens/" + tok.body.value("id", "?"), admin_tok).status, 204);
  EXPECT_EQ(s.req("GET", "/api/v1/jobs", dev_tok).status, 401);
  EXPECT_TRUE(s.req("GET", "/api/v1/tokens?user=acme-dev", admin_tok).body.at("items")[0].value("revoked", false));
}

TEST_F(CrudTest, StaleVersionIsAConflict) {
  Resp t = expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme")), "tenant");
  const std::string path = "/api/v1/tenants/" + id_of(t);
  json edit = t.body;
  edit["display_name"] = "First edit";
  Resp first = s.admin("PUT", path, edit);
  ASSERT_EQ(first.status, 200) << first.describe();
  EXPECT_EQ(first.body.value("version", 0), 2);
  edit["display_name"] = "Second edit, from a stale copy";
  Resp stale = s.admin("PUT", path, edit);  // still says version 1
  EXPECT_EQ(stale.status, 409) << stale.describe();
  EXPECT_EQ(stale.content_type, "application/problem+json");
  EXPECT_EQ(stale.body.value("detail", ""), "version 1 is stale; current is 2") << stale.describe();
  // The detail is a message code with its arguments: ?lang=zh words it in Chinese.
  const json::json_pointer code("/detail_message/code");
  EXPECT_EQ(stale.body.value(code, ""), "api.resources.stale_version") << stale.describe();
  Resp stale_zh = s.admin("PUT", path + "?lang=zh", edit);
  EXPECT_EQ(stale_zh.status, 409) << stale_zh.describe();
  EXPECT_EQ(stale_zh.body.value("detail", ""), "版本 1 已过期；当前版本为 2") << stale_zh.describe();
  EXPECT_EQ(stale_zh.body.value(code, ""), "api.resources.stale_version") << stale_zh.describe();
  EXPECT_EQ(stale_zh.body.value(json::json_pointer("/detail_message/args/current"), ""), "2") << stale_zh.describe();
  Resp now = s.admin("GET", path);
  EXPECT_EQ(now.body.value("display_name", ""), "First edit");
  EXPECT_EQ(now.body.value("version", 0), 2);
  // Without a version the write is last-writer-wins; with the current one it succeeds.
  edit["version"] = 2;
  EXPECT_EQ(s.admin("PUT", path, edit).status, 200);
  EXPECT_EQ(s.admin("GET", path).body.value("version", 0), 3);
  edit["version"] = "3";
  Resp bad = s.admin("PUT", path, edit);
  EXPECT_EQ(bad.status, 422) << bad.describe();
  EXPECT_EQ(bad.error_fields(), std::vector<std::string>{"version"});
}

TEST_F(CrudTest, DuplicateNamesAreConflictsNamingName) {
  expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme")), "tenant");
  Resp dup = s.admin("POST", "/api/v1/tenants", tenant_doc("acme"));
  EXPECT_EQ(dup.status, 409) << dup.describe();
  EXPECT_EQ(dup.content_type, "application/problem+json");
  EXPECT_EQ(dup.error_fields(), std::vector<std::string>{"name"}) << dup.describe();
  EXPECT_EQ(list_ids(s, "/api/v1/tenants", s.admin_token()).size(), 1u);

  // Renaming onto a taken name is refused too, and leaves both objects as they were.
  Resp other = expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("globex")), "tenant");
  json rename = other.body;
  rename["name"] = "acme";
  Resp r = s.admin("PUT", "/api/v1/tenants/" + id_of(other), rename);
  EXPECT_EQ(r.status, 409) << r.describe();
  EXPECT_EQ(r.error_fields(), std::vector<std::string>{"name"}) << r.describe();
  EXPECT_EQ(s.admin("GET", "/api/v1/tenants/" + id_of(other)).body, other.body);

  // Node names are unique per supplier, not globally.
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("sup-a")), "supplier a");
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("sup-b")), "supplier b");
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("sup-a", "node-1")), "node a/1");
  EXPECT_EQ(s.admin("POST", "/api/v1/nodes", node_doc("sup-b", "node-1")).status, 201);
  Resp n = s.admin("POST", "/api/v1/nodes", node_doc("sup-a", "node-1"));
  EXPECT_EQ(n.status, 409) << n.describe();
  EXPECT_EQ(n.error_fields(), std::vector<std::string>{"name"}) << n.describe();
  EXPECT_EQ(list_ids(s, "/api/v1/nodes", s.admin_token()).size(), 2u);
  // ... so a bare name that two suppliers use is ambiguous for the operator, and the id works.
  EXPECT_EQ(s.admin("GET", "/api/v1/nodes/node-1").status, 409);
}

TEST_F(CrudTest, DeletingWhatOthersReferenceIsAConflict) {
  const std::string sup_id = id_of(expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("sup-a")), "sup"));
  const std::string node_id = id_of(expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("sup-a", "n1")), "node"));
  const std::string off_id = id_of(expect_2xx(s.admin("POST", "/api/v1/offers", offer_doc("sup-a", "o1")), "offer"));
  Resp r = s.admin("DELETE", "/api/v1/suppliers/" + sup_id);
  EXPECT_EQ(r.status, 409) << r.describe();
  EXPECT_EQ(r.content_type, "application/problem+json");
  EXPECT_NE(r.body.value("detail", "").find("nodes"), std::string::npos) << r.describe();
  EXPECT_EQ(s.admin("GET", "/api/v1/suppliers/" + sup_id).status, 200);
  ASSERT_EQ(s.admin("DELETE", "/api/v1/nodes/" + node_id).status, 204);
  r = s.admin("DELETE", "/api/v1/suppliers/sup-a");
  EXPECT_EQ(r.status, 409) << r.describe();
  EXPECT_NE(r.body.value("detail", "").find("offers"), std::string::npos) << r.describe();
  ASSERT_EQ(s.admin("DELETE", "/api/v1/offers/" + off_id).status, 204);
  EXPECT_EQ(s.admin("DELETE", "/api/v1/suppliers/sup-a").status, 204);
  EXPECT_EQ(s.admin("GET", "/api/v1/suppliers/" + sup_id).status, 404);
  EXPECT_EQ(s.admin("DELETE", "/api/v1/suppliers/" + sup_id).status, 404);

  const std::string ten_id = id_of(expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme")), "tenant"));
  const std::string prj_id = id_of(expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("acme", "p")), "prj"));
  r = s.admin("DELETE", "/api/v1/tenants/" + ten_id);
  EXPECT_EQ(r.status, 409) << r.describe();
  EXPECT_EQ(s.admin("DELETE", "/api/v1/projects/" + prj_id).status, 204);
  EXPECT_EQ(s.admin("DELETE", "/api/v1/tenants/" + ten_id).status, 204);
  EXPECT_TRUE(list_ids(s, "/api/v1/tenants", s.admin_token()).empty());
}

TEST_F(CrudTest, KeysetPagingVisitsEveryObjectOnce) {
  std::set<std::string> created;
  for (int i = 0; i < 25; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "t-%02d", i);
    created.insert(id_of(expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc(name)), name)));
  }
  auto [seen, page_sizes] = page_through(s, "/api/v1/tenants?limit=10");
  EXPECT_EQ(page_sizes, (std::vector<size_t>{10, 10, 5}));
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()), created);
  EXPECT_EQ(seen.size(), created.size());
  // Exactly a page's worth: the last page may say "more" once, but never repeats an item.
  Resp all = s.admin("GET", "/api/v1/tenants?limit=25");
  EXPECT_EQ(all.body.at("items").size(), 25u);
  if (!all.body.at("next_after").is_null()) {
    EXPECT_TRUE(s.admin("GET", "/api/v1/tenants?after=" + all.body["next_after"].get<std::string>())
                    .body.at("items")
                    .empty());
  }
  EXPECT_EQ(names(s.admin("GET", "/api/v1/tenants?name=t-07")), std::vector<std::string>{"t-07"});
  EXPECT_TRUE(s.admin("GET", "/api/v1/tenants?after=" + seen.back()).body.at("items").empty());
}

// `limit` bounds how many items a page holds, and about 8 MiB bounds how large: jobs of 120 KiB
// each (env and command near their caps) end the page early, next_after says where to go on, and
// following it visits every job once, in order.
TEST_F(CrudTest, APageOfLargeRecordsEndsEarlyAndPagingStillVisitsEveryOne) {
  expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme")), "tenant");
  expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("acme", "vision")), "project");
  std::set<std::string> created;
  for (int i = 0; i < 100; ++i) {
    json j = job_doc("vision", "big-" + std::to_string(i));
    j["env"] = {{"BLOB", std::string(60000, 'x')}};
    j["command"] = {"sh", "-c", "true " + std::string(60000, 'y')};
    created.insert(id_of(expect_2xx(s.admin("POST", "/api/v1/jobs", j), "job")));
  }
  auto [seen, page_sizes] = page_through(s, "/api/v1/jobs?limit=1000", size_t{9} << 20);
  ASSERT_EQ(page_sizes.size(), 2u) << ::testing::PrintToString(page_sizes);  // 12 MiB: two pages
  EXPECT_GT(page_sizes[0], 50u);
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_EQ(seen.size(), created.size());
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()), created);
}

TEST_F(CrudTest, GetThenPutRoundTripsEveryKind) {
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("sup-a")), "supplier");
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("sup-a", "node-1")), "node");
  expect_2xx(s.admin("POST", "/api/v1/offers", offer_doc("sup-a", "offer-1")), "offer");
  expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme")), "tenant");
  expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("acme", "vision")), "project");
  expect_2xx(s.admin("POST", "/api/v1/users", user_doc("acme-dev", "tenant_member", "acme")), "user");
  expect_2xx(s.admin("POST", "/api/v1/users", user_doc("sup-a-ops", "supplier", "", "sup-a")), "supplier user");
  for (const char* path : {"/api/v1/suppliers/sup-a", "/api/v1/nodes/node-1", "/api/v1/offers/offer-1",
                           "/api/v1/tenants/acme", "/api/v1/projects/vision", "/api/v1/users/acme-dev",
                           "/api/v1/users/sup-a-ops"}) {
    SCOPED_TRACE(path);
    Resp got = s.admin("GET", path);
    ASSERT_EQ(got.status, 200) << got.describe();
    Resp put = s.admin("PUT", path, got.body);
    ASSERT_EQ(put.status, 200) << put.describe();
    EXPECT_EQ(put.body.value("version", 0), got.body.value("version", 0) + 1);
    EXPECT_EQ(without_write_stamps(put.body), without_write_stamps(got.body));
    EXPECT_EQ(without_write_stamps(s.admin("GET", path).body), without_write_stamps(got.body));
    // The same document as YAML is read the same way.
    json again = s.admin("GET", path).body;
    Resp as_yaml = s.raw("PUT", path, s.admin_token(), again.dump(2), "application/yaml");
    EXPECT_EQ(as_yaml.status, 200) << as_yaml.describe();
    EXPECT_EQ(without_write_stamps(as_yaml.body), without_write_stamps(got.body));
  }
}

}  // namespace
}  // namespace gpurent::testing

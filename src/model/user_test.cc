#include "model/user.h"

#include <set>

#include <gtest/gtest.h>

#include "model/model_test_util.h"

namespace gpurent {
namespace {

using testing_util::fails_only_on;
using testing_util::load_example;
using testing_util::test_catalog;

json valid_user() {
  return json::parse(R"({"name":"alice","display_name":"Alice Wang","email":"alice@acme.example",
                         "role":"tenant_member","tenant":"acme"})");
}


TEST(User, RoleNamesRoundTrip) {
  std::set<std::string> names;
  for (Role r : kAllRoles) {
    names.insert(role_name(r));
    EXPECT_EQ(parse_role(role_name(r)), r);
  }
  EXPECT_EQ(names, (std::set<std::string>{"operator_admin", "supplier", "tenant_admin", "tenant_member", "viewer"}));
  EXPECT_EQ(parse_role("admin"), std::nullopt);
}

TEST(User, EveryRoleParsesWithItsScopeAndRoundTrips) {
  const char* bodies[] = {
      R"({"name":"root","email":"root@gpurent.example","role":"operator_admin"})",
      R"({"name":"sup-bot","email":"bot@dc1.example","role":"supplier","supplier":"sup_0123456789abcdef"})",
      R"({"name":"boss","email":"boss@acme.example","role":"tenant_admin","tenant":"acme"})",
      R"({"name":"alice","email":"alice@acme.example","role":"tenant_member","tenant":"ten_0123456789abcdef"})",
      R"({"name":"auditor","email":"audit@acme.example","role":"viewer","tenant":"acme"})",
  };
  for (const char* b : bodies) {
    auto u = parse_user(json::parse(b));
    ASSERT_TRUE(u.ok()) << b << ": " << u.error().message;
    EXPECT_EQ(u->display_name, u->name);
    auto again = parse_user(to_json(*u));
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(*again, *u);
  }
}

TEST(User, ServerSetIdsAreEmittedAndIndexedButNeverRead) {
  auto u = parse_user(valid_user()).value();
  EXPECT_EQ(u.role, Role::kTenantMember);
  EXPECT_EQ(u.display_name, "Alice Wang");
  u.tenant_id = "ten_0123456789abcdef";
  json doc = to_json(u);
  EXPECT_EQ(doc["tenant_id"], "ten_0123456789abcdef");
  EXPECT_FALSE(doc.contains("supplier"));
  doc["id"] = "usr_0123456789abcdef";
  auto back = parse_user(doc).value();
  EXPECT_EQ(back.tenant_id, "");
  back.tenant_id = u.tenant_id;
  EXPECT_EQ(back, u);
  IndexCols idx = index_of(u);
  EXPECT_EQ(idx.name, "alice");
  EXPECT_EQ(idx.tenant_id, "ten_0123456789abcdef");
  EXPECT_EQ(idx.supplier_id, "");

  auto s = parse_user(json::parse(R"({"name":"s","email":"s@d.io","role":"supplier","supplier":"dc1"})")).value();
  s.supplier_id = "sup_0123456789abcdef";
  EXPECT_EQ(index_of(s).supplier_id, "sup_0123456789abcdef");
  EXPECT_EQ(to_json(s)["supplier_id"], "sup_0123456789abcdef");
}

TEST(User, RejectsEachBadField) {
  struct Case {
    const char* patch;
    const char* field;
    const char* reason;
  };
  const Case cases[] = {
      {R"({"name":null})", "name", "is required"},
      {R"({"name":"Alice"})", "name", "lowercase letters"},
      {R"({"email":null})", "email", "is required"},
      {R"({"email":"alice"})", "email", "email address"},
      {R"({"email":"alice@acme"})", "email", "email address"},
      {R"({"email":".alice@acme.example"})", "email", "email address"},
      {R"({"role":"admin"})", "role", "unknown value 'admin'"},
      {R"({"role":"Viewer"})", "role", "unknown value 'Viewer'"},
      {R"({"role":null})", "role", "is required"},  // no scope error on top of the missing role
      {R"({"tenant":null})", "tenant", "is required for role tenant_member"},
      {R"({"role":"viewer","tenant":null})", "tenant", "is required for role viewer"},
      {R"({"role":"tenant_admin","tenant":null})", "tenant", "is required for role tenant_admin"},
      {R"({"supplier":"dc1"})", "supplier", "must not be set for role tenant_member"},
      {R"({"role":"operator_admin"})", "tenant", "must not be set for role operator_admin"},
      {R"({"role":"operator_admin","tenant":null,"supplier":"dc1"})", "supplier", "must not be set for role operator_admin"},
      {R"({"role":"supplier","tenant":null})", "supplier", "is required for role supplier"},
      {R"({"role":"supplier","supplier":"dc1"})", "tenant", "must not be set for role supplier"},
      {R"({"tenant":"Acme Corp"})", "tenant", "an id such as"},
      {R"({"display_name":""})", "display_name", "must not be empty"},
      {R"({"password":"hunter2"})", "password", "unknown field"},
  };
  for (const auto& c : cases) {
    json body = valid_user();
    body.merge_patch(json::parse(c.patch));
    EXPECT_TRUE(fails_only_on(parse_user(body), c.field, c.reason)) << c.patch;
  }
  EXPECT_TRUE(fails_only_on(parse_user(json(3)), "", "must be a JSON object"));
  EXPECT_TRUE(fails_only_on(parse_token_request(json("x"), 0), "", "must be a JSON object"));

  json body = valid_user();
  body["role"] = "operator_admin";
  FieldError e = testing_util::only_field_error(parse_user(body));
  EXPECT_EQ(e.coded.code, "user.tenant.spans_all");
  EXPECT_EQ(e.coded.text_of("role"), "operator_admin");
  EXPECT_EQ(render(e.coded, "zh"), "角色 operator_admin 不能设置（它覆盖所有租户）");
  body = valid_user();
  body["email"] = "alice";
  e = testing_util::only_field_error(parse_user(body));
  EXPECT_EQ(testing_util::nested_code(e.coded, "help"), "pattern.email");
  EXPECT_EQ(render(e.coded, "zh"), "“alice”无效：电子邮件地址，如 ops@example.com");
  auto role = stored_user_role(json::parse(R"({"role":"root"})"));
  ASSERT_FALSE(role.ok());
  EXPECT_EQ(role.error().message, "role: 'root' is not a role");
  EXPECT_EQ(role.error().fields[0].coded.code, "user.role.unknown");
}

TEST(TokenRequest, ParsesAndRoundTrips) {
  const TimeMs now = parse_rfc3339("2026-11-29T12:00:00Z", "now").value();
  auto t = parse_token_request(json::parse(R"({"user":"alice","name":"laptop","expires_at":"2027-01-01T00:00:00Z"})"),
                               now);
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->user, "alice");
  EXPECT_EQ(t->name, "laptop");
  EXPECT_EQ(t->expires_at, parse_rfc3339("2027-01-01", "x").value());
  EXPECT_EQ(*parse_token_request(to_json(*t), now), *t);

  auto forever = parse_token_request(json::parse(R"({"user":"usr_0123456789abcdef","name":"ci"})"), now);
  ASSERT_TRUE(forever.ok()) << forever.error().message;
  EXPECT_EQ(forever->expires_at, std::nullopt);
  EXPECT_FALSE(to_json(*forever).contains("expires_at"));
}

TEST(TokenRequest, RejectsEachBadField) {
  const TimeMs now = parse_rfc3339("2026-11-29T12:00:00Z", "now").value();
  struct Case {
    const char* body;
    const char* field;
    const char* reason;
  };
  const Case cases[] = {
      {R"({"name":"ci"})", "user", "is required"},
      {R"({"user":"Alice Smith","name":"ci"})", "user", "an id such as"},
      {R"({"user":"alice"})", "name", "is required"},
      {R"({"user":"alice","name":"My Laptop"})", "name", "lowercase letters"},
      {R"({"user":"alice","name":"ci","expires_at":"2026-11-29T12:00:00Z"})", "expires_at", "must be in the future"},
      {R"({"user":"alice","name":"ci","expires_at":"2020-01-01"})", "expires_at", "must be in the future"},
      {R"({"user":"alice","name":"ci","expires_at":"tomorrow"})", "expires_at", "'tomorrow'"},
      {R"({"user":"alice","name":"ci","expires_at":1767225600})", "expires_at", "RFC 3339"},
      {R"({"user":"alice","name":"ci","role":"operator_admin"})", "role", "unknown field"},
      {R"({"user":"alice","name":"ci","id":"tok_0123456789abcdef"})", "id", "unknown field"},
  };
  for (const auto& c : cases)
    EXPECT_TRUE(fails_only_on(parse_token_request(json::parse(c.body), now), c.field, c.reason)) << c.body;
  FieldError e = testing_util::only_field_error(
      parse_token_request(json::parse(R"({"user":"alice","name":"ci","expires_at":"2020-01-01"})"), now));
  EXPECT_EQ(e.coded.code, "user.token.expires_in_past");
  EXPECT_EQ(render(e.coded, "zh"), "必须是将来的时间（现在是 2026-11-29T12:00:00.000Z）");
}

// --- permission matrix ---

const ObjectKind kAllKinds[] = {ObjectKind::kCatalog, ObjectKind::kSupplier, ObjectKind::kNode,  ObjectKind::kOffer,
                                ObjectKind::kTenant,  ObjectKind::kProject,  ObjectKind::kQuota, ObjectKind::kUser,
                                ObjectKind::kToken,   ObjectKind::kJob,      ObjectKind::kAlert, ObjectKind::kWebhook,
                                ObjectKind::kGpuTelemetry, ObjectKind::kJobUsage, ObjectKind::kUtilization};

TEST(Permissions, OperatorReachesEverything) {
  for (ObjectKind k : kAllKinds) {
    EXPECT_EQ(role_scope(Role::kOperatorAdmin, k, Verb::kRead), Scope::kAll);
    // The dashboards are read-only for everyone.
    EXPECT_EQ(role_scope(Role::kOperatorAdmin, k, Verb::kWrite), k == ObjectKind::kUtilization ? Scope::kNone : Scope::kAll);
  }
}

TEST(Permissions, EveryoneReadsTheCatalogOnlyTheOperatorWritesIt) {
  for (Role r : kAllRoles) {
    EXPECT_EQ(role_scope(r, ObjectKind::kCatalog, Verb::kRead), Scope::kAll) << role_name(r);
    EXPECT_EQ(role_scope(r, ObjectKind::kCatalog, Verb::kWrite) != Scope::kNone, r == Role::kOperatorAdmin);
  }
}

TEST(Permissions, WriteNeverReachesFurtherThanRead) {
  for (Role r : kAllRoles)
    for (ObjectKind k : kAllKinds) {
      Scope w = role_scope(r, k, Verb::kWrite);
      if (w != Scope::kNone) {
        Scope rd = role_scope(r, k, Verb::kRead);
        EXPECT_TRUE(rd == w || rd == Scope::kAll) << role_name(r) << " " << object_kind_name(k);
      }
    }
}

// What each non-operator role may write, and how far.
TEST(Permissions, WritesPerRole) {
  auto writes = [](Role r) {
    std::map<std::string, std::string> out;
    for (ObjectKind k : kAllKinds)
      if (Scope s = role_scope(r, k, Verb::kWrite); s != Scope::kNone) out[object_kind_name(k)] = scope_name(s);
    return out;
  };
  using M = std::map<std::string, std::string>;
  EXPECT_EQ(writes(Role::kSupplier),
            (M{{"nodes", "own_supplier"}, {"offers", "own_supplier"}, {"tokens", "self"}, {"gpu_telemetry", "own_supplier"}}));
  EXPECT_EQ(writes(Role::kTenantAdmin), (M{{"projects", "own_tenant"},
                                           {"quotas", "own_tenant"},
                                           {"users", "own_tenant"},
                                           {"tokens", "own_tenant"},
                                           {"jobs", "own_tenant"},
                                           {"alerts", "own_tenant"}}));
  EXPECT_EQ(writes(Role::kTenantMember), (M{{"jobs", "own_tenant"}, {"tokens", "self"}}));
  EXPECT_EQ(writes(Role::kViewer), (M{{"tokens", "self"}}));
}

TEST(Permissions, TenantsAndSuppliersDoNotSeeEachOther) {
  for (Role r : kAllRoles) {
    if (is_tenant_role(r)) {
      // The market (suppliers, their nodes and offers) is public to every signed-in user.
      for (ObjectKind k : {ObjectKind::kSupplier, ObjectKind::kNode, ObjectKind::kOffer})
        EXPECT_EQ(role_scope(r, k, Verb::kRead), Scope::kAll) << role_name(r) << " " << object_kind_name(k);
      for (ObjectKind k : {ObjectKind::kTenant, ObjectKind::kProject, ObjectKind::kQuota, ObjectKind::kUser,
                           ObjectKind::kJob, ObjectKind::kAlert, ObjectKind::kJobUsage, ObjectKind::kUtilization})
        EXPECT_EQ(role_scope(r, k, Verb::kRead), Scope::kOwnTenant) << role_name(r) << " " << object_kind_name(k);
      for (ObjectKind k : {ObjectKind::kWebhook, ObjectKind::kGpuTelemetry})
        EXPECT_EQ(role_scope(r, k, Verb::kRead), Scope::kNone) << role_name(r) << " " << object_kind_name(k);
    }
    if (is_supplier_role(r)) {
      for (ObjectKind k : {ObjectKind::kTenant, ObjectKind::kProject, ObjectKind::kQuota, ObjectKind::kJob,
                           ObjectKind::kAlert, ObjectKind::kWebhook, ObjectKind::kJobUsage})
        EXPECT_EQ(role_scope(r, k, Verb::kRead), Scope::kNone) << object_kind_name(k);
      EXPECT_EQ(role_scope(r, ObjectKind::kGpuTelemetry, Verb::kRead), Scope::kOwnSupplier);
      EXPECT_EQ(role_scope(r, ObjectKind::kUtilization, Verb::kRead), Scope::kOwnSupplier);
      EXPECT_EQ(role_scope(r, ObjectKind::kUser, Verb::kRead), Scope::kSelf);
    }
  }
}

TEST(Permissions, RoleHelpers) {
  EXPECT_TRUE(is_operator_role(Role::kOperatorAdmin));
  EXPECT_FALSE(is_operator_role(Role::kTenantAdmin));
  EXPECT_TRUE(is_supplier_role(Role::kSupplier));
  for (Role r : kAllRoles) {
    bool tenant = r == Role::kTenantAdmin || r == Role::kTenantMember || r == Role::kViewer;
    EXPECT_EQ(is_tenant_role(r), tenant) << role_name(r);
    EXPECT_EQ(role_can_write_tenant_objects(r), r == Role::kOperatorAdmin || r == Role::kTenantAdmin)
        << role_name(r);
    EXPECT_EQ(role_can_submit_jobs(r),
              r == Role::kOperatorAdmin || r == Role::kTenantAdmin || r == Role::kTenantMember)
        << role_name(r);
  }
}

TEST(Permissions, WhoMayGrantWhichRole) {
  for (Role target : kAllRoles) {
    EXPECT_TRUE(role_can_grant(Role::kOperatorAdmin, target));
    EXPECT_EQ(role_can_grant(Role::kTenantAdmin, target), is_tenant_role(target)) << role_name(target);
    EXPECT_FALSE(role_can_grant(Role::kTenantMember, target));
    EXPECT_FALSE(role_can_grant(Role::kViewer, target));
    EXPECT_FALSE(role_can_grant(Role::kSupplier, target));
  }
}

}  // namespace
}  // namespace gpurent

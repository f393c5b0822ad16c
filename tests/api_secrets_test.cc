// Project secrets through the real server (docs/resources/secrets.md): set, replace, list and
// delete; the value never in an answer, an error, the server's log or the audit trail; who may
// write and who may see; validation; a job naming a secret its project lacks is refused, one
// naming its project's secret is accepted (the simulated executor runs nothing). Containers
// receiving secrets: tests/container_slurm_test.cc.
#include <gtest/gtest.h>

#include <sqlite3.h>

#include "server_fixture.h"

namespace gpurent::testing {
namespace {

constexpr const char* kValue = "hf_s3cr3t-VALUE\nline two\twith a tab";

class Secrets : public ::testing::Test {
 protected:
  void SetUp() override {
    acme_and_beta(s_);
    admin_ = make_user_token(s_, "acme-admin", "tenant_admin", "acme");
    member_ = make_user_token(s_, "acme-dev", "tenant_member", "acme");
    beta_ = make_user_token(s_, "beta-admin", "tenant_admin", "beta");
  }
  // No answer, log line or stored audit entry holds the value (nor its first line alone).
  void expect_hidden(const Resp& r) {
    EXPECT_EQ(r.text.find("s3cr3t"), std::string::npos) << r.describe();
  }
  ServerProcess s_;
  std::string admin_, member_, beta_;
};

TEST_F(Secrets, SetListReplaceDeleteNeverShowingTheValue) {
  const std::string path = "/api/v1/projects/vision/secrets/hf-token";
  Resp put = s_.req("PUT", path, admin_, json{{"value", kValue}});
  ASSERT_EQ(put.status, 201) << put.describe();
  expect_hidden(put);
  EXPECT_EQ(put.body["name"], "hf-token");
  EXPECT_EQ(put.body["size_bytes"], std::string(kValue).size());
  Resp again = s_.req("PUT", path, admin_, json{{"value", "another s3cr3t"}});
  ASSERT_EQ(again.status, 200) << again.describe();
  EXPECT_EQ(again.body["size_bytes"], 14);
  EXPECT_EQ(again.body["id"], put.body["id"]);
  // The same name in another project of another tenant is another secret.
  ASSERT_EQ(s_.req("PUT", "/api/v1/projects/nlp/secrets/hf-token", beta_, json{{"value", "beta s3cr3t"}}).status, 201);

  Resp list = s_.req("GET", "/api/v1/projects/vision/secrets", member_);
  ASSERT_EQ(list.status, 200) << list.describe();
  expect_hidden(list);
  ASSERT_EQ(list.body["items"].size(), 1u);
  EXPECT_EQ(list.body["items"][0]["name"], "hf-token");
  EXPECT_FALSE(list.body["items"][0].contains("value"));
  // Nothing else answers it: the project, the operator's lists.
  expect_hidden(s_.admin("GET", "/api/v1/projects/vision"));
  expect_hidden(s_.admin("GET", "/api/v1/projects/vision/secrets"));

  // A member reads names but does not write; another tenant sees no such project.
  EXPECT_EQ(s_.req("PUT", path, member_, json{{"value", "x"}}).status, 403);
  EXPECT_EQ(s_.req("DELETE", path, member_).status, 403);
  EXPECT_EQ(s_.req("GET", "/api/v1/projects/vision/secrets", beta_).status, 404);
  EXPECT_EQ(s_.req("PUT", path, beta_, json{{"value", "x"}}).status, 404);

  // Validation names the field; the value given is never echoed.
  for (const auto& [body, field] : std::vector<std::pair<json, std::string>>{
           {json{{"value", ""}}, "value"},
           {json{{"value", 7}}, "value"},
           {json::object(), "value"},
           {json{{"value", std::string("a\0b", 3)}}, "value"},
           {json{{"value", std::string(64 * 1024 + 1, 'x')}}, "value"},
           {json{{"value", "s3cr3t"}, {"extra", 1}}, "extra"}}) {
    Resp r = s_.req("PUT", path, admin_, body);
    EXPECT_EQ(r.status, 422) << r.describe();
    EXPECT_EQ(r.error_fields(), std::vector<std::string>{field}) << r.describe();
    expect_hidden(r);
  }
  Resp bad_name = s_.req("PUT", "/api/v1/projects/vision/secrets/Bad_Name", admin_, json{{"value", "s3cr3t"}});
  EXPECT_EQ(bad_name.status, 422) << bad_name.describe();
  EXPECT_EQ(bad_name.error_fields(), std::vector<std::string>{"name"});

  // Jobs: a secret the project lacks is refused at submission; its own is accepted.
  json job = job_doc("vision", "uses-secret");
  job["secrets"] = {{{"name", "hf-token"}, {"env", "HF_TOKEN"}}, {{"name", "hf-token"}, {"file", "/run/secrets/hf"}}};
  Resp ok = s_.req("POST", "/api/v1/jobs", admin_, job);
  EXPECT_EQ(ok.status, 201) << ok.describe();
  expect_hidden(ok);
  job["name"] = "missing-secret";
  job["secrets"] = {{{"name", "nope"}, {"env", "X"}}};
  Resp missing = s_.req("POST", "/api/v1/jobs", admin_, job);
  EXPECT_EQ(missing.status, 422) << missing.describe();
  EXPECT_EQ(missing.error_fields(), std::vector<std::string>{"secrets[0].name"});
  job["secrets"] = {{{"name", "hf-token"}}};
  EXPECT_EQ(s_.req("POST", "/api/v1/jobs", admin_, job).error_fields(), std::vector<std::string>{"secrets[0].env"});
  job["secrets"] = {{{"name", "hf-token"}, {"env", "GPURENT_X"}}};
  EXPECT_EQ(s_.req("POST", "/api/v1/jobs", admin_, job).error_fields(), std::vector<std::string>{"secrets[0].env"});

  // Delete, then it is gone.
  EXPECT_EQ(s_.req("DELETE", path, admin_).status, 204);
  EXPECT_EQ(s_.req("DELETE", path, admin_).status, 404);
  EXPECT_EQ(s_.req("GET", "/api/v1/projects/vision/secrets", admin_).body["items"].size(), 0u);

  // The server's log and the audit trail name secrets, never their values.
  EXPECT_EQ(s_.log().find("s3cr3t"), std::string::npos);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(s_.db_path().c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* q = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT action, detail FROM audit_log WHERE kind = 'secrets'", -1, &q, nullptr),
            SQLITE_OK);
  int rows = 0;
  while (sqlite3_step(q) == SQLITE_ROW) {
    ++rows;
    const std::string detail = reinterpret_cast<const char*>(sqlite3_column_text(q, 1));
    EXPECT_EQ(detail.find("s3cr3t"), std::string::npos) << detail;
    EXPECT_NE(detail.find("hf-token"), std::string::npos) << detail;
  }
  EXPECT_EQ(rows, 4) << "create, update, create (beta), delete";
  sqlite3_finalize(q);
  sqlite3_close(db);
}

// Deleting a project (it has no jobs) deletes its secrets, values and all.
TEST_F(Secrets, GoWithTheirProject) {
  expect_2xx(s_.admin("POST", "/api/v1/projects", project_doc("acme", "scratch")), "project");
  ASSERT_EQ(s_.req("PUT", "/api/v1/projects/scratch/secrets/key", admin_, json{{"value", "s3cr3t"}}).status, 201);
  ASSERT_EQ(s_.req("PUT", "/api/v1/projects/vision/secrets/key", admin_, json{{"value", "kept"}}).status, 201);
  EXPECT_EQ(s_.admin("DELETE", "/api/v1/projects/scratch").status, 204);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(s_.db_path().c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* q = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT count(*) FROM objects WHERE kind = 'secrets'", -1, &q, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(q, 0), 1) << "only vision's secret is left";
  sqlite3_finalize(q);
  sqlite3_close(db);
}

}  // namespace
}  // namespace gpurent::testing

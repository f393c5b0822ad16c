// Project artifacts through the real server (docs/resources/artifacts.md): the chunked upload with
// its digest check, resuming at the acknowledged offset (also after kill -9), the content store on
// disk (one file per digest, shared, removed with its last artifact), who may do what, limits and
// validation, the audit trail, and jobs naming artifacts (refused unless the project's artifact is
// ready with the digest the job states). The check on the node before a container starts:
// tests/container_slurm_test.cc and src/exec/container_test.cc.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "core/ids.h"
#include "server_fixture.h"

namespace gpurent::testing {
namespace {

namespace fs = std::filesystem;

std::string bytes(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::string out(n, '\0');
  for (char& c : out) c = static_cast<char>(gen() & 0xff);
  return out;
}

class Artifacts : public ::testing::Test {
 protected:
  void SetUp() override {
    acme_and_beta(s_);
    admin_ = make_user_token(s_, "acme-admin", "tenant_admin", "acme");
    member_ = make_user_token(s_, "acme-dev", "tenant_member", "acme");
    viewer_ = make_user_token(s_, "acme-viewer", "viewer", "acme");
    beta_ = make_user_token(s_, "beta-admin", "tenant_admin", "beta");
  }
  Resp declare(const std::string& project, const std::string& name, const std::string& content,
               const std::string& token) {
    return s_.req("POST", "/api/v1/projects/" + project + "/artifacts", token,
                  json{{"name", name}, {"sha256", sha256_hex(content)}, {"size_bytes", content.size()}, {"kind", "model"}});
  }
  Resp put(const std::string& project, const std::string& name, size_t offset, const std::string& chunk,
           const std::string& token) {
    return s_.raw("PUT", "/api/v1/projects/" + project + "/artifacts/" + name + "/content?offset=" + std::to_string(offset),
                  token, chunk, "application/octet-stream");
  }
  // Uploads content in chunks of at most 1 MiB; the last answer.
  Resp upload(const std::string& project, const std::string& name, const std::string& content, const std::string& token,
              size_t from = 0) {
    Resp last;
    for (size_t at = from; at < content.size(); at += 1 << 20) {
      last = put(project, name, at, content.substr(at, 1 << 20), token);
      if (last.status != 200) return last;
    }
    return last;
  }
  std::string content_file(const std::string& content) const {
    return s_.db_path() + ".artifacts/sha256/" + sha256_hex(content);
  }
  ServerProcess s_;
  std::string admin_, member_, viewer_, beta_;
};

TEST_F(Artifacts, UploadInChunksCheckedAgainstTheDeclaredDigest) {
  const std::string weights = bytes((5 << 19) + 123, 7);  // 2.5 MiB and a bit: three chunks
  Resp made = declare("vision", "llama", weights, member_);
  ASSERT_EQ(made.status, 201) << made.describe();
  EXPECT_EQ(made.body["state"], "uploading");
  EXPECT_EQ(made.body["received_bytes"], 0);
  EXPECT_EQ(made.body["uploaded_by"], "acme-dev");
  EXPECT_EQ(made.body["project"], "vision");
  EXPECT_EQ(declare("vision", "llama", weights, member_).status, 409) << "one name once per project";

  Resp first = put("vision", "llama", 0, weights.substr(0, 1 << 20), member_);
  ASSERT_EQ(first.status, 200) << first.describe();
  EXPECT_EQ(first.body["received_bytes"], 1 << 20);
  // A chunk at the wrong place is refused, saying where to continue; nothing moves.
  Resp wrong = put("vision", "llama", 7, "x", member_);
  EXPECT_EQ(wrong.status, 409) << wrong.describe();
  EXPECT_NE(wrong.text.find(std::to_string(1 << 20)), std::string::npos) << wrong.describe();
  EXPECT_EQ(put("vision", "llama", 0, weights.substr(0, 10), member_).status, 409);
  Resp past = put("vision", "llama", 1 << 20, std::string((1 << 20), 'x') + "", member_);
  ASSERT_EQ(past.status, 200) << "still inside the declared size";
  // That chunk was wrong bytes: the end's digest tells, and the upload starts again from 0.
  Resp bad_end = put("vision", "llama", 2 << 20, weights.substr(2 << 20), member_);
  EXPECT_EQ(bad_end.status, 422) << bad_end.describe();
  EXPECT_EQ(bad_end.error_fields(), std::vector<std::string>{"sha256"});
  Resp reset = s_.req("GET", "/api/v1/projects/vision/artifacts/llama", member_);
  EXPECT_EQ(reset.body["received_bytes"], 0) << reset.describe();
  EXPECT_EQ(reset.body["state"], "uploading");
  EXPECT_FALSE(fs::exists(content_file(weights)));

  Resp done = upload("vision", "llama", weights, member_);
  ASSERT_EQ(done.status, 200) << done.describe();
  EXPECT_EQ(done.body["state"], "ready");
  EXPECT_EQ(done.body["received_bytes"], weights.size());
  EXPECT_TRUE(done.body.contains("ready_at"));
  EXPECT_EQ(done.body["sha256"], sha256_hex(weights));
  ASSERT_TRUE(fs::exists(content_file(weights)));
  EXPECT_EQ(fs::file_size(content_file(weights)), weights.size());
  EXPECT_EQ((fs::status(content_file(weights)).permissions() & fs::perms::all), fs::perms(0444)) << "read-only";
  EXPECT_EQ(put("vision", "llama", 0, "x", member_).status, 409) << "a ready artifact takes no more bytes";
  EXPECT_TRUE(fs::is_empty(s_.db_path() + ".artifacts/uploads")) << "nothing left of the upload";

  // Another tenant neither sees it nor can write to it; a viewer reads but does not write.
  EXPECT_EQ(s_.req("GET", "/api/v1/projects/vision/artifacts", beta_).status, 404);
  EXPECT_EQ(put("vision", "llama", 0, "x", beta_).status, 404);
  EXPECT_EQ(s_.req("GET", "/api/v1/projects/vision/artifacts", viewer_).status, 200);
  EXPECT_EQ(declare("vision", "other", "x", viewer_).status, 403);
  EXPECT_EQ(s_.req("DELETE", "/api/v1/projects/vision/artifacts/llama", viewer_).status, 403);
  EXPECT_EQ(s_.req("GET", "/api/v1/projects/vision/artifacts/llama", "").status, 401);

  Resp list = s_.req("GET", "/api/v1/projects/vision/artifacts", admin_);
  ASSERT_EQ(list.status, 200);
  ASSERT_EQ(list.body["items"].size(), 1u);
  EXPECT_EQ(list.body["used_bytes"], weights.size());
  EXPECT_EQ(list.body["limit_bytes"], int64_t{256} << 30);

  // The audit trail: who declared, completed and deleted which content.
  EXPECT_EQ(s_.req("DELETE", "/api/v1/projects/vision/artifacts/llama", member_).status, 204);
  EXPECT_EQ(s_.req("DELETE", "/api/v1/projects/vision/artifacts/llama", member_).status, 404);
  EXPECT_FALSE(fs::exists(content_file(weights))) << "its last artifact gone, the content goes";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(s_.db_path().c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* q = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT action, detail FROM audit_log WHERE kind = 'artifacts' ORDER BY rowid", -1, &q,
                               nullptr),
            SQLITE_OK);
  std::vector<std::string> actions;
  while (sqlite3_step(q) == SQLITE_ROW) {
    actions.push_back(reinterpret_cast<const char*>(sqlite3_column_text(q, 0)));
    const std::string detail = reinterpret_cast<const char*>(sqlite3_column_text(q, 1));
    EXPECT_NE(detail.find("vision/llama sha256:" + sha256_hex(weights)), std::string::npos) << detail;
  }
  EXPECT_EQ(actions, (std::vector<std::string>{"create", "upload", "delete"}));
  sqlite3_finalize(q);
  sqlite3_close(db);
}

// What was acknowledged survives kill -9: the upload resumes at the offset the last 200 gave.
TEST_F(Artifacts, AnUploadResumesAfterTheServerIsKilled) {
  const std::string data = bytes((3 << 20) + 5, 11);
  ASSERT_EQ(declare("vision", "data", data, admin_).status, 201);
  ASSERT_EQ(put("vision", "data", 0, data.substr(0, 1 << 20), admin_).status, 200);
  ASSERT_EQ(put("vision", "data", 1 << 20, data.substr(1 << 20, 1 << 20), admin_).status, 200);
  s_.kill9();
  s_.start();
  Resp now = s_.req("GET", "/api/v1/projects/vision/artifacts/data", admin_);
  ASSERT_EQ(now.status, 200) << now.describe();
  EXPECT_EQ(now.body["received_bytes"], 2 << 20);
  Resp done = upload("vision", "data", data, admin_, 2 << 20);
  ASSERT_EQ(done.status, 200) << done.describe();
  EXPECT_EQ(done.body["state"], "ready");
  EXPECT_EQ(fs::file_size(content_file(data)), data.size());
}

// The last chunk publishes the upload's file into the content store, then records the upload
// complete. Killed between the two, the upload file is gone but the content is there: sending the
// last chunk again completes the upload instead of making the client start from 0.
TEST_F(Artifacts, AnUploadPublishedButNotRecordedCompletesOnItsLastChunk) {
  const std::string data = bytes((2 << 20) + 7, 12);
  Resp made = declare("vision", "weights", data, admin_);
  ASSERT_EQ(made.status, 201) << made.describe();
  ASSERT_EQ(put("vision", "weights", 0, data.substr(0, 1 << 20), admin_).status, 200);
  ASSERT_EQ(put("vision", "weights", 1 << 20, data.substr(1 << 20, 1 << 20), admin_).status, 200);
  s_.kill9();
  // What the last chunk's publish leaves: the whole content under its digest, no upload file.
  const std::string upload = s_.db_path() + ".artifacts/uploads/" + made.body["id"].get<std::string>();
  ASSERT_TRUE(fs::exists(upload));
  fs::remove(upload);
  {
    std::ofstream out(content_file(data), std::ios::binary);
    out << data;
  }
  s_.start();
  Resp done = put("vision", "weights", 2 << 20, data.substr(2 << 20), admin_);
  ASSERT_EQ(done.status, 200) << done.describe();
  EXPECT_EQ(done.body["state"], "ready");
  EXPECT_EQ(done.body["received_bytes"], data.size());
}

// Identical content is kept once; it goes with the last artifact naming it. An empty artifact is
// ready at once.
TEST_F(Artifacts, IdenticalContentIsStoredOnce) {
  const std::string data = "the same weights";
  ASSERT_EQ(declare("vision", "a", data, admin_).status, 201);
  ASSERT_EQ(upload("vision", "a", data, admin_).status, 200);
  ASSERT_EQ(declare("nlp", "b", data, beta_).status, 201);
  ASSERT_EQ(s_.req("GET", "/api/v1/projects/nlp/artifacts/b", beta_).body["state"], "uploading")
      << "another tenant uploads its own copy: no hint that the content exists";
  ASSERT_EQ(upload("nlp", "b", data, beta_).status, 200);
  EXPECT_EQ(s_.req("DELETE", "/api/v1/projects/vision/artifacts/a", admin_).status, 204);
  EXPECT_TRUE(fs::exists(content_file(data))) << "b still names it";
  EXPECT_EQ(s_.req("DELETE", "/api/v1/projects/nlp/artifacts/b", beta_).status, 204);
  EXPECT_FALSE(fs::exists(content_file(data)));

  Resp empty = declare("vision", "empty", "", admin_);
  ASSERT_EQ(empty.status, 201) << empty.describe();
  EXPECT_EQ(empty.body["state"], "ready");
  EXPECT_TRUE(fs::exists(content_file("")));
}

TEST_F(Artifacts, ValidationNamesTheField) {
  const std::string p = "/api/v1/projects/vision/artifacts";
  const std::string good = sha256_hex("x");
  for (const auto& [body, field] : std::vector<std::pair<json, std::string>>{
           {json{{"sha256", good}, {"size_bytes", 1}}, "name"},
           {json{{"name", "Bad_Name"}, {"sha256", good}, {"size_bytes", 1}}, "name"},
           {json{{"name", "w"}, {"sha256", "abc"}, {"size_bytes", 1}}, "sha256"},
           {json{{"name", "w"}, {"sha256", std::string(64, 'g')}, {"size_bytes", 1}}, "sha256"},
           {json{{"name", "w"}, {"sha256", good}, {"size_bytes", -1}}, "size_bytes"},
           {json{{"name", "w"}, {"sha256", good}, {"size_bytes", (int64_t{64} << 30) + 1}}, "size_bytes"},
           {json{{"name", "w"}, {"sha256", good}, {"size_bytes", 0}}, "sha256"},
           {json{{"name", "w"}, {"sha256", good}, {"size_bytes", 1}, {"kind", "weights"}}, "kind"},
           {json{{"name", "w"}, {"sha256", good}, {"size_bytes", 1}, {"colour", "red"}}, "colour"}}) {
    Resp r = s_.req("POST", p, admin_, body);
    EXPECT_EQ(r.status, 422) << body.dump() << " " << r.describe();
    EXPECT_EQ(r.error_fields(), std::vector<std::string>{field}) << body.dump() << " " << r.describe();
  }
  ASSERT_EQ(declare("vision", "w", "xy", admin_).status, 201);
  for (const std::string q : {"", "?offset=", "?offset=-1", "?offset=1x", "?offset=99999999999999999999"}) {
    Resp r = s_.raw("PUT", p + "/w/content" + q, admin_, "x", "application/octet-stream");
    EXPECT_EQ(r.status, 422) << q << " " << r.describe();
    EXPECT_EQ(r.error_fields(), std::vector<std::string>{"offset"}) << q;
  }
  EXPECT_EQ(put("vision", "w", 0, "", admin_).error_fields(), std::vector<std::string>{"body"});
  EXPECT_EQ(put("vision", "w", 0, "xyz", admin_).error_fields(), std::vector<std::string>{"offset"}) << "past the size";
  EXPECT_EQ(put("vision", "nope", 0, "x", admin_).status, 404);
  Resp big = put("vision", "w", 0, std::string((1 << 20) + 1, 'x'), admin_);
  EXPECT_EQ(big.status, 413) << "the HTTP front's cap holds for uploads too";
  // A project with artifacts is not deleted under them.
  EXPECT_EQ(s_.admin("DELETE", "/api/v1/projects/vision").status, 409);
  // At most 10,000 artifacts a project (empty ones take no room, but each makes every later
  // create longer): copies of w fill the project, by hand, and the next is refused on its name.
  const std::string w_id = s_.req("GET", p + "/w", admin_).body.at("id");
  edit_database(s_,
                "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 9999) "
                "INSERT INTO objects (kind, id, name, tenant_id, supplier_id, project_id, state, region, gpu_model, "
                "created_at, updated_at, version, body) SELECT kind, id || '-' || n, name || '-' || n, tenant_id, "
                "supplier_id, project_id, state, region, gpu_model, created_at, updated_at, version, body "
                "FROM objects, c WHERE kind = 'artifacts' AND id = '" +
                    w_id + "'",
                9999);
  Resp full = declare("vision", "one-more", "", admin_);
  EXPECT_EQ(full.status, 422) << full.describe();
  EXPECT_EQ(full.error_fields(), std::vector<std::string>{"name"}) << full.describe();
  EXPECT_EQ(declare("nlp", "one-more", "", beta_).status, 201) << "another tenant's project is not full";
}

// The tenant's limit counts uploads at their declared size.
TEST(ArtifactLimits, TheTenantsShareIsEnforced) {
  ServerProcess s({"--artifact-tenant-gib", "1", "--artifact-max-gib", "1"});
  expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme")), "tenant");
  expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("acme", "vision")), "project");
  const std::string p = "/api/v1/projects/vision/artifacts";
  const std::string sha = sha256_hex("x");
  ASSERT_EQ(s.admin("POST", p, json{{"name", "a"}, {"sha256", sha}, {"size_bytes", int64_t{600} << 20}}).status, 201);
  Resp over = s.admin("POST", p, json{{"name", "b"}, {"sha256", sha}, {"size_bytes", int64_t{600} << 20}});
  EXPECT_EQ(over.status, 422) << over.describe();
  EXPECT_EQ(over.error_fields(), std::vector<std::string>{"size_bytes"});
  EXPECT_EQ(s.admin("POST", p, json{{"name", "c"}, {"sha256", sha}, {"size_bytes", (int64_t{1} << 30) + 1}}).error_fields(),
            std::vector<std::string>{"size_bytes"})
      << "over --artifact-max-gib";
  ASSERT_EQ(s.admin("DELETE", p + "/a").status, 204);
  EXPECT_EQ(s.admin("POST", p, json{{"name", "b"}, {"sha256", sha}, {"size_bytes", int64_t{600} << 20}}).status, 201);
}

// A job names its project's ready artifacts with the digest it expects; anything else is refused
// at submission, naming the entry.
TEST_F(Artifacts, JobsNameReadyArtifactsByDigest) {
  const std::string w = "weights v1";
  ASSERT_EQ(declare("vision", "llama", w, admin_).status, 201);
  json job = job_doc("vision", "uses-llama");
  job["artifacts"] = {{{"name", "llama"}, {"sha256", sha256_hex(w)}, {"mount", "/models/llama.bin"}}};
  Resp early = s_.req("POST", "/api/v1/jobs", member_, job);
  EXPECT_EQ(early.status, 422) << early.describe();
  EXPECT_EQ(early.error_fields(), std::vector<std::string>{"artifacts[0].name"}) << "still uploading";
  ASSERT_EQ(upload("vision", "llama", w, admin_).status, 200);
  Resp ok = s_.req("POST", "/api/v1/jobs", member_, job);
  ASSERT_EQ(ok.status, 201) << ok.describe();
  EXPECT_EQ(ok.body["artifacts"][0]["mount"], "/models/llama.bin");

  job["name"] = "wrong-digest";
  job["artifacts"][0]["sha256"] = sha256_hex("weights v2");
  EXPECT_EQ(s_.req("POST", "/api/v1/jobs", member_, job).error_fields(), std::vector<std::string>{"artifacts[0].sha256"});
  job["artifacts"][0] = {{"name", "nope"}, {"sha256", sha256_hex(w)}, {"mount", "/m"}};
  EXPECT_EQ(s_.req("POST", "/api/v1/jobs", member_, job).error_fields(), std::vector<std::string>{"artifacts[0].name"});
  job["artifacts"][0] = {{"name", "llama"}, {"sha256", sha256_hex(w)}, {"mount", "/proc/x"}};
  EXPECT_EQ(s_.req("POST", "/api/v1/jobs", member_, job).error_fields(), std::vector<std::string>{"artifacts[0].mount"});
  job["artifacts"][0] = {{"name", "llama"}, {"sha256", "xyz"}, {"mount", "/m"}};
  EXPECT_EQ(s_.req("POST", "/api/v1/jobs", member_, job).error_fields(), std::vector<std::string>{"artifacts[0].sha256"});
  job["volumes"] = {{{"name", "data"}, {"mount", "/data"}}};
  job["artifacts"][0] = {{"name", "llama"}, {"sha256", sha256_hex(w)}, {"mount", "/data/w.bin"}};
  EXPECT_EQ(s_.req("POST", "/api/v1/jobs", member_, job).error_fields(), std::vector<std::string>{"artifacts[0].mount"});
  // Another tenant's project's artifact is not this project's.
  json theirs = job_doc("nlp", "borrow");
  theirs["artifacts"] = {{{"name", "llama"}, {"sha256", sha256_hex(w)}, {"mount", "/m"}}};
  EXPECT_EQ(s_.req("POST", "/api/v1/jobs", beta_, theirs).error_fields(), std::vector<std::string>{"artifacts[0].name"});
}

}  // namespace
}  // namespace gpurent::testing

// Images through the real server (docs/resources/images.md): public images from operators and a
// tenant's own, uploaded as archives in chunks (checked against their digest) or queued as
// recipes; who sees and changes which; jobs naming an image by name (ready, visible) beside plain
// image references; and the builder turning a recipe into an image with mmdebstrap (skipped when
// the Debian archive cannot be reached). Nodes loading images from the store:
// tests/container_slurm_test.cc.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/ids.h"
#include "server_fixture.h"

namespace gpurent::testing {
namespace {

namespace fs = std::filesystem;

class Images : public ::testing::Test {
 protected:
  void SetUp() override {
    acme_id_ = acme_and_beta(s_);
    member_ = make_user_token(s_, "acme-dev", "tenant_member", "acme");
    viewer_ = make_user_token(s_, "acme-viewer", "viewer", "acme");
    beta_ = make_user_token(s_, "beta-admin", "tenant_admin", "beta");
  }
  json archive(const std::string& name, const std::string& content, const std::string& format = "docker-archive") {
    return json{{"name", name},
                {"archive", {{"format", format}, {"sha256", sha256_hex(content)}, {"size_bytes", content.size()}}}};
  }
  Resp put(const std::string& ref, size_t offset, const std::string& bytes, const std::string& token) {
    return s_.raw("PUT", "/api/v1/images/" + ref + "/archive?offset=" + std::to_string(offset), token, bytes,
                  "application/octet-stream");
  }
  ServerProcess s_;
  std::string acme_id_, member_, viewer_, beta_;
};

TEST_F(Images, PublicAndTenantImagesUploadedAsArchives) {
  // An operator's image is public; a tenant user's is its tenant's.
  const std::string pub = "public image bytes", own = std::string(1500000, 'x') + "acme's";
  Resp p = s_.admin("POST", "/api/v1/images", archive("base", pub));
  ASSERT_EQ(p.status, 201) << p.describe();
  EXPECT_EQ(p.body["visibility"], "public");
  EXPECT_EQ(p.body["state"], "uploading");
  EXPECT_FALSE(p.body.contains("reference")) << "a reference once the content is there";
  Resp m = s_.req("POST", "/api/v1/images", member_, archive("mine", own));
  ASSERT_EQ(m.status, 201) << m.describe();
  EXPECT_EQ(m.body["visibility"], "tenant");
  EXPECT_EQ(m.body["created_by"], "acme-dev");
  EXPECT_EQ(s_.req("POST", "/api/v1/images", member_, archive("mine", own)).status, 409);
  EXPECT_EQ(s_.req("POST", "/api/v1/images", viewer_, archive("x", own)).status, 403);

  ASSERT_EQ(put("base", 0, pub, s_.admin_token()).status, 200);
  ASSERT_EQ(put("mine", 0, own.substr(0, 1 << 20), member_).status, 200);
  EXPECT_EQ(put("mine", 0, "x", beta_).status, 404) << "another tenant's image does not exist for beta";
  Resp done = put("mine", 1 << 20, own.substr(1 << 20), member_);
  ASSERT_EQ(done.status, 200) << done.describe();
  EXPECT_EQ(done.body["state"], "ready");
  EXPECT_EQ(done.body["reference"], "localhost/gpurent/" + acme_id_ + "/mine:" + sha256_hex(own).substr(0, 12));
  EXPECT_TRUE(fs::exists(s_.db_path() + ".artifacts/sha256/" + sha256_hex(own)));

  // Who sees what: beta sees the public image only; acme both; names resolve to the tenant's own first.
  auto names = [&](const std::string& token) {
    std::vector<std::string> out;
    const Resp list = s_.req("GET", "/api/v1/images", token);
    for (const auto& i : list.body["items"]) out.push_back(i["name"]);
    std::sort(out.begin(), out.end());
    return out;
  };
  EXPECT_EQ(names(member_), (std::vector<std::string>{"base", "mine"}));
  EXPECT_EQ(names(beta_), (std::vector<std::string>{"base"}));
  EXPECT_EQ(s_.req("GET", "/api/v1/images/mine", beta_).status, 404);
  EXPECT_EQ(s_.req("GET", "/api/v1/images/" + m.body["id"].get<std::string>(), beta_).status, 404);
  Resp shadow = s_.req("POST", "/api/v1/images", beta_, archive("base", "beta's base"));
  ASSERT_EQ(shadow.status, 201) << "a tenant's own image may share a public image's name";
  EXPECT_EQ(s_.req("GET", "/api/v1/images/base", beta_).body["visibility"], "tenant");
  EXPECT_EQ(s_.req("GET", "/api/v1/images/base", member_).body["visibility"], "public");
  // A tenant holds at most 1,000 images (beta's copied to make them); the platform's don't count.
  edit_database(
      s_,
      "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 999) "
      "INSERT INTO objects (kind, id, name, tenant_id, supplier_id, project_id, state, region, gpu_model, "
      "created_at, updated_at, version, body) SELECT kind, id || '-' || x, name || '-' || x, tenant_id, "
      "supplier_id, project_id, state, region, gpu_model, created_at, updated_at, version, body FROM objects, n "
      "WHERE kind = 'images' AND id = '" +
          shadow.body["id"].get<std::string>() + "'",
      999);
  Resp many = s_.req("POST", "/api/v1/images", beta_, archive("one-more", "bytes"));
  EXPECT_EQ(many.status, 422) << many.describe();
  EXPECT_EQ(many.error_fields(), std::vector<std::string>{"name"}) << many.describe();
  EXPECT_EQ(s_.admin("POST", "/api/v1/images", archive("platform-2", "more public bytes")).status, 201);

  // Changing: tenants may not delete public images; their own, yes.
  EXPECT_EQ(s_.req("DELETE", "/api/v1/images/" + p.body["id"].get<std::string>(), member_).status, 403);
  EXPECT_EQ(s_.req("DELETE", "/api/v1/images/mine", viewer_).status, 403);
  EXPECT_EQ(s_.req("DELETE", "/api/v1/images/mine", member_).status, 204);
  EXPECT_FALSE(fs::exists(s_.db_path() + ".artifacts/sha256/" + sha256_hex(own))) << "its content went with it";
  EXPECT_EQ(s_.req("GET", "/api/v1/images/mine", member_).status, 404);
}

TEST_F(Images, RecipesAreQueuedAndValidated) {
  Resp r = s_.req("POST", "/api/v1/images", member_,
                  json{{"name", "tools"}, {"recipe", {{"packages", {"python3", "procps"}}}}});
  ASSERT_EQ(r.status, 201) << r.describe();
  EXPECT_EQ(r.body["state"], "queued") << "this server builds no images";
  EXPECT_EQ(r.body["recipe"]["suite"], "bookworm");
  EXPECT_EQ(r.body["recipe"]["variant"], "minbase");
  EXPECT_EQ(r.body["format"], "rootfs-tar");
  EXPECT_EQ(put("tools", 0, "x", member_).status, 409) << "a recipe takes no upload";
  Resp again = s_.req("POST", "/api/v1/images", member_,
                      json{{"name", "tools2"}, {"recipe", {{"packages", {"procps", "python3", "procps"}}}}});
  EXPECT_EQ(again.body["recipe"]["packages"], json({"procps", "python3"})) << "sorted, once each: the same recipe";
  // Three recipes of a tenant may wait for the builder at a time; the fourth waits for one of them.
  ASSERT_EQ(s_.req("POST", "/api/v1/images", member_, json{{"name", "tools3"}, {"recipe", {{"packages", {"procps"}}}}}).status, 201);
  Resp fourth = s_.req("POST", "/api/v1/images", member_, json{{"name", "tools4"}, {"recipe", {{"packages", {"procps"}}}}});
  EXPECT_EQ(fourth.status, 409) << fourth.describe();
  EXPECT_EQ(fourth.body.value(json::json_pointer("/detail_message/code"), ""), "api.images.builds_waiting") << fourth.describe();
  ASSERT_EQ(s_.req("DELETE", "/api/v1/images/tools3", member_).status, 204);
  EXPECT_EQ(s_.req("POST", "/api/v1/images", member_, json{{"name", "tools4"}, {"recipe", {{"packages", {"procps"}}}}}).status, 201);
  const std::string good = sha256_hex("x");
  for (const auto& [body, field] : std::vector<std::pair<json, std::string>>{
           {json{{"name", "a"}}, "recipe"},
           {json{{"name", "a"}, {"recipe", {{"packages", json::array()}}}, {"archive", {{"format", "rootfs-tar"}}}}, "archive"},
           {json{{"name", "a"}, {"recipe", {{"packages", {"Bad_Pkg"}}}}}, "recipe.packages[0]"},
           {json{{"name", "a"}, {"recipe", {{"packages", {"xy"}}, {"variant", "fat"}}}}, "recipe.variant"},
           {json{{"name", "a"}, {"recipe", {{"packages", {"x1"}}, {"suite", "Bookworm!"}}}}, "recipe.suite"},
           {json{{"name", "a"}, {"archive", {{"format", "zip"}, {"sha256", good}, {"size_bytes", 1}}}}, "archive.format"},
           {json{{"name", "a"}, {"archive", {{"format", "oci-archive"}, {"sha256", "nope"}, {"size_bytes", 1}}}}, "archive.sha256"},
           {json{{"name", "a"}, {"archive", {{"format", "oci-archive"}, {"sha256", good}, {"size_bytes", 0}}}}, "archive.size_bytes"},
           {json{{"name", "A"}, {"recipe", {{"packages", {"x1"}}}}}, "name"}}) {
    Resp bad = s_.req("POST", "/api/v1/images", member_, body);
    EXPECT_EQ(bad.status, 422) << body.dump() << " " << bad.describe();
    ASSERT_FALSE(bad.error_fields().empty()) << body.dump();
    EXPECT_EQ(bad.error_fields()[0], field) << body.dump() << " " << bad.describe();
  }
}

// A job's image that is a name is a gpurent image (ready, the tenant's or public); anything with
// '/', ':' or '@' is a reference the nodes hold, as before.
TEST_F(Images, JobsNameReadyImages) {
  const std::string bytes = "image bytes";
  ASSERT_EQ(s_.req("POST", "/api/v1/images", member_, archive("mine", bytes)).status, 201);
  json job = job_doc("vision", "in-mine");
  job["image"] = "mine";
  Resp early = s_.req("POST", "/api/v1/jobs", member_, job);
  EXPECT_EQ(early.status, 422) << early.describe();
  EXPECT_EQ(early.error_fields(), std::vector<std::string>{"image"});
  ASSERT_EQ(put("mine", 0, bytes, member_).status, 200);
  EXPECT_EQ(s_.req("POST", "/api/v1/jobs", member_, job).status, 201);
  json theirs = job_doc("nlp", "in-theirs");
  theirs["image"] = "mine";
  EXPECT_EQ(s_.req("POST", "/api/v1/jobs", beta_, theirs).error_fields(), std::vector<std::string>{"image"});
  theirs["image"] = "nvcr.io/nvidia/pytorch:24.05-py3";
  EXPECT_EQ(s_.req("POST", "/api/v1/jobs", beta_, theirs).status, 201) << "a plain reference, as before";
  // acme's image as nodes name it once loaded is still acme's.
  const std::string ref = s_.req("GET", "/api/v1/images/mine", member_).body["reference"];
  theirs["name"] = "by-reference";
  theirs["image"] = ref;
  EXPECT_EQ(s_.req("POST", "/api/v1/jobs", beta_, theirs).error_fields(), std::vector<std::string>{"image"});
  job["name"] = "by-own-reference";
  job["image"] = ref;
  EXPECT_EQ(s_.req("POST", "/api/v1/jobs", member_, job).status, 201);
  // Under gpurent's names, never by digest: a node's Podman finds an image by its digest whoever's
  // it is, so a public name with another tenant's digest would run that tenant's image.
  theirs["name"] = "by-digest";
  theirs["image"] = "localhost/gpurent/public/x@sha256:" + sha256_hex(bytes);
  Resp by_digest = s_.req("POST", "/api/v1/jobs", beta_, theirs);
  EXPECT_EQ(by_digest.error_fields(), std::vector<std::string>{"image"}) << by_digest.describe();
  EXPECT_NE(by_digest.reason_for("image").find("not by digest"), std::string::npos) << by_digest.describe();
  theirs["image"] = "nvcr.io/nvidia/pytorch@sha256:" + sha256_hex(bytes);
  EXPECT_EQ(s_.req("POST", "/api/v1/jobs", beta_, theirs).status, 201) << "a registry's digest, as before";
  theirs["name"] = "node-image-by-digest";
  theirs["image"] = "localhost/gpurent/dev@sha256:" + sha256_hex(bytes);
  EXPECT_EQ(s_.req("POST", "/api/v1/jobs", beta_, theirs).status, 201)
      << "a node's own image (no scope): the node checks whose image it resolves to";
  // A root file system has no command of its own: the job gives one.
  ASSERT_EQ(s_.req("POST", "/api/v1/images", member_, archive("rootfs", bytes, "rootfs-tar")).status, 201);
  ASSERT_EQ(put("rootfs", 0, bytes, member_).status, 200);
  job["name"] = "in-rootfs";
  job["image"] = "rootfs";
  job.erase("command");
  EXPECT_EQ(s_.req("POST", "/api/v1/jobs", member_, job).error_fields(), std::vector<std::string>{"command"});
  job["command"] = {"true"};
  EXPECT_EQ(s_.req("POST", "/api/v1/jobs", member_, job).status, 201);
}

// Images and artifacts share the store and the tenant's limit.
TEST(ImageStorage, SharesContentAndTheTenantsLimitWithArtifacts) {
  ServerProcess s({"--artifact-tenant-gib", "1"});
  expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme")), "tenant");
  expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("acme", "vision")), "project");
  const std::string dev = make_user_token(s, "acme-dev", "tenant_member", "acme");
  const std::string same = "same bytes";
  ASSERT_EQ(s.req("POST", "/api/v1/projects/vision/artifacts", dev,
                  json{{"name", "w"}, {"sha256", sha256_hex(same)}, {"size_bytes", same.size()}}).status, 201);
  ASSERT_EQ(s.raw("PUT", "/api/v1/projects/vision/artifacts/w/content?offset=0", dev, same, "application/octet-stream").status, 200);
  ASSERT_EQ(s.req("POST", "/api/v1/images", dev,
                  json{{"name", "i"}, {"archive", {{"format", "rootfs-tar"}, {"sha256", sha256_hex(same)}, {"size_bytes", same.size()}}}}).status, 201);
  ASSERT_EQ(s.raw("PUT", "/api/v1/images/i/archive?offset=0", dev, same, "application/octet-stream").status, 200);
  EXPECT_EQ(s.req("DELETE", "/api/v1/projects/vision/artifacts/w", dev).status, 204);
  EXPECT_TRUE(fs::exists(s.db_path() + ".artifacts/sha256/" + sha256_hex(same))) << "the image still names it";
  Resp big = s.req("POST", "/api/v1/images", dev,
                   json{{"name", "big"}, {"archive", {{"format", "rootfs-tar"}, {"sha256", sha256_hex("y")}, {"size_bytes", int64_t{1} << 30}}}});
  EXPECT_EQ(big.status, 422) << big.describe();
  EXPECT_EQ(big.error_fields(), std::vector<std::string>{"archive.size_bytes"});
}

// Image `name` once it is ready or failed, read (by an operator, or with `token`) every `every` at
// most `tries` times (the last read otherwise).
json image_settled(const ServerProcess& s, const std::string& name, int tries, std::chrono::milliseconds every,
                   const std::string& token = "") {
  json img;
  for (int i = 0; i < tries; ++i) {
    img =
        (token.empty() ? s.admin("GET", "/api/v1/images/" + name) : s.req("GET", "/api/v1/images/" + name, token)).body;
    if (img["state"] == "ready" || img["state"] == "failed") break;
    std::this_thread::sleep_for(every);
  }
  return img;
}

// The builder: a recipe becomes a ready image with its installed packages; the same recipe again
// takes the same content at once.
TEST(ImageBuilder, BuildsARecipeWithMmdebstrap) {
  if (std::system("command -v mmdebstrap >/dev/null 2>&1") != 0) GTEST_SKIP() << "mmdebstrap is not installed";
  const char* m = std::getenv("GPURENT_DEBIAN_MIRROR");
  const std::string mirror = m ? m : "http://deb.debian.org/debian";
  if (std::system(("curl -fsS -m 20 -o /dev/null " + mirror + "/dists/bookworm/Release").c_str()) != 0)
    GTEST_SKIP() << "the Debian archive (" << mirror << ") cannot be reached";
  ServerProcess s({"--image-builds", "--debian-mirror", mirror});
  const json recipe = {{"variant", "essential"}, {"packages", {"hello"}}};
  ASSERT_EQ(s.admin("POST", "/api/v1/images", json{{"name", "hello"}, {"recipe", recipe}}).status, 201);
  const json img = image_settled(s, "hello", 600, std::chrono::seconds(1));
  ASSERT_EQ(img["state"], "ready") << img.dump() << s.log();
  bool has_hello = false;
  for (const auto& p : img["packages"]) has_hello = has_hello || p.get<std::string>().rfind("hello=", 0) == 0;
  EXPECT_TRUE(has_hello) << img["packages"].dump();
  EXPECT_GT(img["size_bytes"].get<int64_t>(), 1 << 20);
  const std::string file = s.db_path() + ".artifacts/sha256/" + img["sha256"].get<std::string>();
  ASSERT_TRUE(fs::exists(file));
  EXPECT_EQ(static_cast<int64_t>(fs::file_size(file)), img["size_bytes"].get<int64_t>());
  ASSERT_EQ(s.admin("POST", "/api/v1/images", json{{"name", "hello-again"}, {"recipe", recipe}}).status, 201);
  const json again = image_settled(s, "hello-again", 50, std::chrono::milliseconds(200));
  EXPECT_EQ(again["state"], "ready") << again.dump();
  EXPECT_EQ(again["sha256"], img["sha256"]) << "the same recipe's content, not built again";
}

// mmdebstrap replaced, for the servers started while this lives, by a shell script of `body` first
// on PATH (a build then needs no Debian archive).
class FakeMmdebstrap {
 public:
  explicit FakeMmdebstrap(const std::string& body)
      : dir_(::testing::TempDir() + "gpurent-fake-mmdebstrap-" + std::to_string(::getpid())),
        path_(std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin:/bin") {
    fs::create_directories(dir_);
    std::ofstream(dir_ + "/mmdebstrap") << "#!/bin/sh\n" << body;
    fs::permissions(dir_ + "/mmdebstrap", fs::perms::owner_all);
    ::setenv("PATH", (dir_ + ":" + path_).c_str(), 1);
  }
  ~FakeMmdebstrap() {
    ::setenv("PATH", path_.c_str(), 1);
    fs::remove_all(dir_);
  }

 private:
  std::string dir_, path_;
};

const std::vector<std::string> kFakeBuilds = {"--image-builds", "--debian-mirror", "http://127.0.0.1:9/debian"};

// A build that fails with output in another encoding, or UTF-8 cut mid-character where the builder
// keeps its last 600 bytes: the image fails saying so (each bad byte one U+FFFD), and the server
// lives on — the error, logged and stored as JSON, used to throw on the builder's thread and end
// the server, again at every start while the image stayed queued.
TEST(ImageBuilder, AFailureWhoseWordsAreNotUtf8FailsTheImageNotTheServer) {
  FakeMmdebstrap fake("printf '\\344\\270\\255' >&2\nhead -c 598 /dev/zero | tr '\\0' x >&2\nexit 100\n");
  ServerProcess s(kFakeBuilds);
  ASSERT_EQ(s.admin("POST", "/api/v1/images", json{{"name", "broken"}, {"recipe", {{"variant", "essential"}}}}).status,
            201);
  const json img = image_settled(s, "broken", 100, std::chrono::milliseconds(100));
  ASSERT_EQ(img["state"], "failed") << img.dump() << s.log();
  const std::string error = img.value("error", "");
  EXPECT_NE(error.find("mmdebstrap exit 100: \xEF\xBF\xBD\xEF\xBF\xBDxxx"), std::string::npos) << error;
  EXPECT_EQ(s.req("GET", "/healthz", "").status, 200);
}

// A recipe already built (here by a public image) gives its content at once — and its size counts
// against the tenant's storage as a build's would: past --artifact-tenant-gib the image fails.
TEST(ImageBuilder, TheSameRecipesContentCountsAgainstTheTenantsStorage) {
  FakeMmdebstrap fake(
      "n=$(($# - 1)); eval \"out=\\${$n}\"\nd=$(mktemp -d); head -c 100000 /dev/urandom > \"$d/f\"\n"
      "tar -cf \"$out\" -C \"$d\" .; rm -rf \"$d\"\n");
  std::vector<std::string> args = kFakeBuilds;
  args.insert(args.end(), {"--artifact-tenant-gib", "1"});
  ServerProcess s(args);
  const json recipe = {{"variant", "essential"}, {"packages", {"hello"}}};
  ASSERT_EQ(s.admin("POST", "/api/v1/images", json{{"name", "base"}, {"recipe", recipe}}).status, 201);
  const json base = image_settled(s, "base", 100, std::chrono::milliseconds(100));
  ASSERT_EQ(base["state"], "ready") << base.dump() << s.log();
  expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme")), "tenant");
  expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("acme", "vision")), "project");
  const std::string dev = make_user_token(s, "acme-dev", "tenant_member", "acme");
  // An upload declared at all but 1,000 bytes of the tenant's GiB (counted at its declared size).
  ASSERT_EQ(s.req("POST", "/api/v1/projects/vision/artifacts", dev,
                  json{{"name", "w"}, {"sha256", sha256_hex("w")}, {"size_bytes", (int64_t{1} << 30) - 1000}})
                .status,
            201);
  ASSERT_EQ(s.req("POST", "/api/v1/images", dev, json{{"name", "mine"}, {"recipe", recipe}}).status, 201);
  const json mine = image_settled(s, "mine", 100, std::chrono::milliseconds(100), dev);
  EXPECT_EQ(mine["state"], "failed") << mine.dump();
  EXPECT_NE(mine.value("error", "").find("--artifact-tenant-gib"), std::string::npos) << mine.dump();
  EXPECT_EQ(mine.value("sha256", ""), "") << "a failed image names no content: " << mine.dump();
}

}  // namespace
}  // namespace gpurent::testing

// `images list/show/delete/build/import` in process against a fake API. The import tests run a
// stateful fake of the archive route (FakeImage, on fake_upload_for_test.h's FakeUpload, which
// checks offsets, body sizes and, at the last byte, the SHA-256). Covered: a 2.5 MiB archive in
// chunks at the right offsets with the exact bytes (1 MiB and a smaller --chunk-bytes), the create
// body, chunks sent to the image's id; resuming an unfinished upload of the same file after the
// create's 409 and going on after a chunk's 409; a name holding this file already, or other
// content, or a recipe; a digest mismatch; local file errors (nothing sent); build's recipe
// (repeated --package, defaults left to the server) and its note; list, show (installed packages,
// a failed build's error) and delete (English and Chinese).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/fake_api_for_test.h"
#include "cli/fake_upload_for_test.h"
#include "core/ids.h"

namespace gpurent {
namespace {

using json = nlohmann::json;

using testing::Canned;
using testing::CliRun;
using testing::problem;
using testing::Recorded;

constexpr int64_t kMiB = testing::kUploadMiB;
const std::string kImages = "/api/v1/images";
const std::string kId = "img_00000000000000d1";
const std::string kByName = "/api/v1/images/pytorch";
const std::string kById = "/api/v1/images/img_00000000000000d1";
const std::string kArchive = "/api/v1/images/img_00000000000000d1/archive";
const std::string kTenant = "ten_00000000000000a1";

// What the server keeps of the tenant's image "pytorch": the upload and its answer.
struct FakeImage : testing::FakeUpload {
  std::string format = "docker-archive";
  bool recipe = false;  // built from a recipe instead
  json answer() const {
    json i = {{"id", kId},
              {"name", "pytorch"},
              {"visibility", "tenant"},
              {"format", format},
              {"sha256", sha256},
              {"size_bytes", size},
              {"received_bytes", static_cast<int64_t>(received.size())},
              {"state", ready ? "ready" : "uploading"},
              {"packages", json::array()},
              {"tenant_id", kTenant},
              {"created_by", "alice"},
              {"created_at", "2026-01-01T00:50:00.000Z"},
              {"updated_at", "2026-01-01T00:59:00.000Z"}};
    if (recipe) i["recipe"] = {{"suite", "bookworm"}, {"variant", "minbase"}, {"packages", {"python3"}}};
    if (ready) {
      i["reference"] = "localhost/gpurent/" + kTenant + "/pytorch:" + sha256.substr(0, 12);
      i["ready_at"] = "2026-01-01T00:59:00.000Z";
    }
    return i;
  }
  Canned create(const Recorded& r) {
    const json body = json::parse(r.body);
    if (auto refused = FakeUpload::create(body.at("archive"), "an image named pytorch exists already")) return *refused;
    format = body["archive"]["format"].get<std::string>();
    return {201, answer().dump()};
  }
};

class ImageCommandsTest : public testing::UploadFileTest {
 protected:
  ImageCommandsTest() : UploadFileTest("gpurent-image-test-", ".tar") {}

  void SetUp() override {
    UploadFileTest::SetUp();
    route_upload(img_, kImages, {kByName, kById}, kArchive);
    api_.on("GET " + kImages, {200, R"({"items":[]})"});  // the check before hashing
  }

  // The chunk at `offset` of `n` bytes, as calls() spells it.
  static std::string chunk(int64_t offset, int64_t n) {
    return "PUT " + kArchive + "?offset=" + std::to_string(offset) + " (" + std::to_string(n) + ")";
  }
  // Marks the fake's image as an upload of this file that has `received` bytes.
  void hold(int64_t received, bool ready = false) {
    img_->exists = true;
    img_->sha256 = sha256_hex(content_);
    img_->size = static_cast<int64_t>(content_.size());
    img_->received = content_.substr(0, static_cast<size_t>(received));
    img_->ready = ready;
  }

  std::shared_ptr<FakeImage> img_ = std::make_shared<FakeImage>();
};

TEST_F(ImageCommandsTest, ImportSendsTheArchiveInChunksToTheImagesId) {
  CliRun r = run({"images", "import", "pytorch", file_, "--format", "docker-archive", "--description", "PyTorch 2.4"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(calls(), (std::vector<std::string>{"GET " + kImages, "POST " + kImages, chunk(0, kMiB), chunk(kMiB, kMiB),
                                               chunk(2 * kMiB, 524411)}));
  const auto reqs = api_.requests();
  EXPECT_EQ(
      json::parse(reqs[1].body),
      (json{{"name", "pytorch"},
            {"description", "PyTorch 2.4"},
            {"archive",
             {{"format", "docker-archive"}, {"sha256", sha256_hex(content_)}, {"size_bytes", content_.size()}}}}));
  EXPECT_EQ(reqs[2].content_type, "application/octet-stream");
  EXPECT_EQ(reqs[2].authorization, "Bearer gpr_env");
  EXPECT_EQ(reqs[2].body + reqs[3].body + reqs[4].body, content_);
  EXPECT_TRUE(img_->ready) << "the fake found another digest";
  // The ready image, as `show` prints it; no progress off a terminal, no note.
  const std::string sha = sha256_hex(content_);
  EXPECT_NE(r.out.find("state:      ready\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("reference:  localhost/gpurent/" + kTenant + "/pytorch:" + sha.substr(0, 12) + "\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("size_bytes: 2621563 (2.5 MiB)\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("received_bytes"), std::string::npos) << "only while uploading: " << r.out;
  EXPECT_EQ(r.err, "");

  // A smaller --chunk-bytes, another format, -o json: the server's answer as it is.
  *img_ = FakeImage{};
  r = run({"-o", "json", "images", "import", "pytorch", file_, "--format", "rootfs-tar", "--chunk-bytes", "700000"});
  ASSERT_EQ(r.rc, 0) << r.err;
  const auto c = calls();
  EXPECT_EQ(std::vector<std::string>(c.begin() + 5, c.end()),
            (std::vector<std::string>{"GET " + kImages, "POST " + kImages, chunk(0, 700000), chunk(700000, 700000),
                                      chunk(1400000, 700000), chunk(2100000, 521563)}));
  EXPECT_EQ(json::parse(api_.requests()[6].body)["archive"]["format"], "rootfs-tar");
  EXPECT_FALSE(json::parse(api_.requests()[6].body).contains("description"));
  EXPECT_EQ(json::parse(r.out), img_->answer());
  EXPECT_EQ(img_->received, content_);
}

TEST_F(ImageCommandsTest, ImportResumesAnUnfinishedUploadOfTheSameFile) {
  hold(kMiB);
  CliRun r = run({"images", "import", "pytorch", file_, "--format", "docker-archive"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(calls(), (std::vector<std::string>{"GET " + kImages, "POST " + kImages, "GET " + kByName, chunk(kMiB, kMiB),
                                               chunk(2 * kMiB, 524411)}));
  EXPECT_TRUE(img_->ready);
  EXPECT_EQ(img_->received, content_);
  EXPECT_EQ(r.err, "resuming the upload of pytorch at 1 MiB of 2.5 MiB\n");
}

TEST_F(ImageCommandsTest, AChunksConflictGoesOnFromTheServersReceivedBytes) {
  // The server already holds the first two chunks (their answers were lost): the chunk at 0 is
  // refused with 409, the CLI reads the image (by id) and goes on at 2 MiB.
  img_->preload_on_first_put = content_.substr(0, 2 * kMiB);
  CliRun r = run({"images", "import", "pytorch", file_, "--format", "oci-archive"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(calls(), (std::vector<std::string>{"GET " + kImages, "POST " + kImages, chunk(0, kMiB), "GET " + kById,
                                               chunk(2 * kMiB, 524411)}));
  EXPECT_TRUE(img_->ready);
  EXPECT_EQ(img_->received, content_);
}

TEST_F(ImageCommandsTest, ANameHoldingThisFileOtherContentOrARecipe) {
  hold(static_cast<int64_t>(content_.size()), true);
  CliRun r = run({"images", "import", "pytorch", file_, "--format", "docker-archive"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "image pytorch already holds this file (sha256 " + sha256_hex(content_) + "): nothing to send\n");
  EXPECT_NE(r.out.find("state:      ready\n"), std::string::npos) << r.out;
  EXPECT_EQ(calls(), (std::vector<std::string>{"GET " + kImages, "POST " + kImages, "GET " + kByName}));

  // The same bytes declared as another format are another image.
  r = run({"images", "import", "pytorch", file_, "--format", "oci-archive"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err,
            "error: there is already an image pytorch that is not this file (docker-archive, ready, 2621563 bytes, "
            "sha256 " +
                sha256_hex(content_) + "; " + file_ + " is a oci-archive of 2621563 bytes, sha256 " +
                sha256_hex(content_) + "): delete it first (gpurent images delete pytorch) or choose another name\n");

  img_->sha256 = std::string(64, 'a');
  img_->size = 42;
  img_->received.clear();
  img_->ready = false;
  r = run({"images", "import", "pytorch", file_, "--format", "docker-archive"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("(docker-archive, uploading, 42 bytes, sha256 " + std::string(64, 'a') + ";"), std::string::npos)
      << r.err;

  img_->recipe = true;
  img_->sha256 = sha256_hex(content_);
  img_->size = static_cast<int64_t>(content_.size());
  img_->format = "rootfs-tar";
  r = run({"images", "import", "pytorch", file_, "--format", "rootfs-tar"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err,
            "error: there is already an image pytorch, built from a recipe (uploading): delete it first "
            "(gpurent images delete pytorch) or choose another name\n");
  const auto c = calls();
  EXPECT_EQ(std::count_if(c.begin(), c.end(), [](const std::string& s) { return s.rfind("PUT ", 0) == 0; }), 0)
      << "no chunk sent";
}

TEST_F(ImageCommandsTest, ADigestMismatchIsTheServersErrorWithAHint) {
  img_->corrupt = true;
  CliRun r = run({"images", "import", "pytorch", file_, "--format", "docker-archive"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("error: sha256: the content received does not have this digest\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("hint: what the server received does not have the SHA-256 computed from " + file_),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(img_->ready);
}

TEST_F(ImageCommandsTest, ImportFileErrorsAndMissingFlagsSendNothing) {
  CliRun r = run({"images", "import", "pytorch", "/nonexistent/gpurent-image.tar", "--format", "docker-archive"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "error: cannot read /nonexistent/gpurent-image.tar: No such file or directory\n");
  env_["LANG"] = "zh_CN.UTF-8";
  r = run({"images", "import", "pytorch", "/nonexistent/gpurent-image.tar", "--format", "docker-archive"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("无法读取 /nonexistent/gpurent-image.tar"), std::string::npos) << r.err;
  env_.erase("LANG");

  const std::string dir = ::testing::TempDir() + "gpurent-image-dir";
  std::filesystem::create_directories(dir);
  r = run({"images", "import", "pytorch", dir, "--format", "docker-archive"});
  std::filesystem::remove(dir);
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "error: " + dir + " is a directory: give the path of a file\n");

  EXPECT_EQ(run({"images", "import", "pytorch", file_}).rc, 2) << "--format is required";
  EXPECT_EQ(run({"images", "import", "pytorch", file_, "--format", "tar"}).rc, 2);
  EXPECT_EQ(run({"images", "import", "pytorch", file_, "--format", "rootfs-tar", "--chunk-bytes", "1048577"}).rc, 2);
  EXPECT_TRUE(api_.requests().empty());
}

TEST_F(ImageCommandsTest, BuildPostsTheRecipeAndSaysWhoBuildsIt) {
  json queued = {{"id", "img_00000000000000d2"},
                 {"name", "python"},
                 {"visibility", "tenant"},
                 {"format", "rootfs-tar"},
                 {"recipe", {{"suite", "trixie"}, {"variant", "apt"}, {"packages", {"python3", "python3-numpy"}}}},
                 {"sha256", ""},
                 {"size_bytes", 0},
                 {"received_bytes", 0},
                 {"state", "queued"},
                 {"packages", json::array()},
                 {"tenant_id", kTenant},
                 {"created_by", "alice"},
                 {"created_at", "2026-01-01T00:59:00.000Z"},
                 {"updated_at", "2026-01-01T00:59:00.000Z"}};
  // POST answers `created` instead of the archive fake.
  auto created = std::make_shared<Canned>(Canned{201, queued.dump()});
  api_.on_call("POST " + kImages, [created](const Recorded&) { return *created; });
  CliRun r = run({"images", "build", "python", "--package", "python3", "--suite", "trixie", "--package",
                  "python3-numpy", "--variant", "apt", "--description", "Python with NumPy"});
  ASSERT_EQ(r.rc, 0) << r.err;
  ASSERT_EQ(api_.requests().size(), 1u);
  EXPECT_EQ(api_.requests()[0].method + " " + api_.requests()[0].path, "POST " + kImages);
  EXPECT_EQ(json::parse(api_.requests()[0].body),
            (json{{"name", "python"},
                  {"description", "Python with NumPy"},
                  {"recipe", {{"suite", "trixie"}, {"variant", "apt"}, {"packages", {"python3", "python3-numpy"}}}}}));
  EXPECT_EQ(r.err,
            "image python is queued: a server started with --image-builds builds it (one image at a time); follow it "
            "with gpurent images show python\n");
  EXPECT_EQ(r.out,
            "name:       python\n"
            "id:         img_00000000000000d2\n"
            "visibility: tenant\n"
            "state:      queued\n"
            "format:     rootfs-tar\n"
            "recipe:\n"
            "  packages: python3, python3-numpy\n"
            "  suite:    trixie\n"
            "  variant:  apt\n"
            "tenant_id:  " +
                kTenant +
                "\n"
                "created_by: alice\n"
                "created_at: 2026-01-01T00:59:00.000Z\n"
                "updated_at: 2026-01-01T00:59:00.000Z\n");

  // Without --suite and --variant the server's defaults (bookworm, minbase) apply; -o json prints
  // the answer and no note.
  r = run({"-o", "json", "images", "build", "python", "--package", "python3"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(api_.requests()[1].body), (json{{"name", "python"}, {"recipe", {{"packages", {"python3"}}}}}));
  EXPECT_EQ(json::parse(r.out), queued);
  EXPECT_EQ(r.err, "");

  // The same recipe built before: ready at once, nothing to follow.
  queued["state"] = "ready";
  *created = {201, queued.dump()};
  r = run({"images", "build", "python", "--package", "python3"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "");

  // One package per flag: a word after it is NAME (or one too many).
  r = run({"images", "build", "--package", "procps", "python"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(api_.requests()[3].body), (json{{"name", "python"}, {"recipe", {{"packages", {"procps"}}}}}));
  EXPECT_EQ(run({"images", "build", "python", "--package", "python3", "procps"}).rc, 2);
  EXPECT_EQ(run({"images", "build", "python"}).rc, 2) << "--package is required";
  EXPECT_EQ(run({"images", "build", "python", "--package", "python3", "--variant", "huge"}).rc, 2);
  EXPECT_EQ(api_.requests().size(), 4u);

  *created = problem(409, "an image named python exists already: delete it first, or use another name");
  r = run({"images", "build", "python", "--package", "python3"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "error: an image named python exists already: delete it first, or use another name\n");
}

json listed_image(const std::string& name, const std::string& visibility, const std::string& state, int64_t size,
                  const std::string& sha, size_t packages) {
  json i = {{"id", "img_" + sha.substr(0, 16)},
            {"name", name},
            {"visibility", visibility},
            {"format", "rootfs-tar"},
            {"sha256", sha},
            {"size_bytes", size},
            {"received_bytes", size},
            {"state", state},
            {"packages", json::array()},
            {"tenant_id", visibility == "public" ? "" : kTenant}};
  for (size_t k = 0; k < packages; ++k) i["packages"].push_back("pkg" + std::to_string(k) + "=1.0");
  if (state == "ready")
    i["reference"] = "localhost/gpurent/" + (visibility == "public" ? std::string("public") : kTenant) + "/" + name +
                     ":" + sha.substr(0, 12);
  return i;
}

TEST_F(ImageCommandsTest, ListShowsStateSizeDigestPackagesAndReference) {
  const std::string a(64, 'a'), b = "9b1d0e6c2f7a4381" + std::string(48, '0'),
                                c = "3f9a0c2b7d1e4a65" + std::string(48, '1');
  json queued = listed_image("notebook", "public", "queued", 0, a, 0);
  queued["sha256"] = "";
  json uploading = listed_image("cuda", "tenant", "uploading", int64_t{6744688640}, c, 0);
  uploading["format"] = "docker-archive";
  uploading["received_bytes"] = int64_t{1073741824};
  const json answer = {{"items",
                        {listed_image("python", "public", "ready", int64_t{157286400}, b, 87), queued, uploading,
                         listed_image("python", "tenant", "ready", int64_t{104857600}, a, 12)}}};
  api_.on("GET " + kImages, {200, answer.dump()});
  CliRun r = run({"images", "list"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out,
            "NAME       VISIBILITY   STATE       FORMAT              SIZE   SHA256          PACKAGES   REFERENCE\n"
            "cuda       tenant       uploading   docker-archive   6.3 GiB   3f9a0c2b7d1e…          -   -\n"
            "notebook   public       queued      rootfs-tar             -   -                      -   -\n"
            "python     tenant       ready       rootfs-tar       100 MiB   aaaaaaaaaaaa…         12   "
            "localhost/gpurent/" +
                kTenant +
                "/python:aaaaaaaaaaaa\n"
                "python     public       ready       rootfs-tar       150 MiB   9b1d0e6c2f7a…         87   "
                "localhost/gpurent/public/python:9b1d0e6c2f7a\n");
  EXPECT_EQ(r.err, "");
  r = run({"-o", "json", "images", "ls"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(r.out), answer);

  api_.on("GET " + kImages, {200, R"({"items":[]})"});
  r = run({"images", "list"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "no images found\n");
}

TEST_F(ImageCommandsTest, ShowPrintsTheWholeImageWithItsPackagesOrItsError) {
  const std::string sha = "9b1d0e6c2f7a4381" + std::string(48, '0');
  json ready = listed_image("python", "public", "ready", int64_t{157286400}, sha, 25);
  ready["recipe"] = {
      {"suite", "bookworm"}, {"variant", "minbase"}, {"packages", {"python3", "python3-numpy", "procps"}}};
  ready["description"] = "Python 3 with NumPy";
  ready["created_by"] = "operator";
  ready["created_at"] = "2026-01-01T00:10:00.000Z";
  ready["updated_at"] = "2026-01-01T00:20:00.000Z";
  ready["ready_at"] = "2026-01-01T00:20:00.000Z";
  api_.on("GET /api/v1/images/python", {200, ready.dump()});
  CliRun r = run({"images", "show", "python"});
  ASSERT_EQ(r.rc, 0) << r.err;
  std::string packages;
  for (int k = 0; k < 20; ++k) packages += "  pkg" + std::to_string(k) + "=1.0\n";
  EXPECT_EQ(r.out,
            "name:        python\n"
            "id:          img_9b1d0e6c2f7a4381\n"
            "visibility:  public\n"
            "state:       ready\n"
            "format:      rootfs-tar\n"
            "reference:   localhost/gpurent/public/python:9b1d0e6c2f7a\n"
            "size_bytes:  157286400 (150 MiB)\n"
            "sha256:      " +
                sha +
                "\n"
                "description: Python 3 with NumPy\n"
                "recipe:\n"
                "  packages: python3, python3-numpy, procps\n"
                "  suite:    bookworm\n"
                "  variant:  minbase\n"
                "created_by:  operator\n"
                "ready_at:    2026-01-01T00:20:00.000Z\n"
                "created_at:  2026-01-01T00:10:00.000Z\n"
                "updated_at:  2026-01-01T00:20:00.000Z\n"
                "packages (25):\n" +
                packages + "  … 5 more (-o json lists them all)\n");
  r = run({"-o", "json", "images", "get", "python"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(r.out), ready);

  json failed = listed_image("broken", "tenant", "failed", 0, sha, 0);
  failed["sha256"] = "";
  failed["recipe"] = {{"suite", "bookworm"}, {"variant", "minbase"}, {"packages", {"no-such-package"}}};
  failed["error"] = "E: Unable to locate package no-such-package";
  api_.on("GET /api/v1/images/broken", {200, failed.dump()});
  r = run({"images", "show", "broken"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out,
            "name:       broken\n"
            "id:         img_9b1d0e6c2f7a4381\n"
            "visibility: tenant\n"
            "state:      failed\n"
            "error:      E: Unable to locate package no-such-package\n"
            "format:     rootfs-tar\n"
            "recipe:\n"
            "  packages: no-such-package\n"
            "  suite:    bookworm\n"
            "  variant:  minbase\n"
            "tenant_id:  " +
                kTenant + "\n");

  r = run({"images", "show", "nope"});  // the fake API's 404
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("not found"), std::string::npos) << r.err;
}

TEST_F(ImageCommandsTest, DeleteConfirmsInTheLocalesLanguage) {
  api_.on("DELETE /api/v1/images/python", {204, ""});
  CliRun r = run({"images", "delete", "python"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "deleted image python\n");
  env_["LANG"] = "zh_CN.UTF-8";
  r = run({"images", "rm", "python"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "已删除镜像 python\n");
  env_["LC_ALL"] = "C";
  r = run({"-o", "json", "images", "delete", "python"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(r.out), (json{{"deleted", "python"}, {"kind", "images"}}));
  EXPECT_EQ(api_.requests().size(), 3u);

  api_.on("DELETE /api/v1/images/builder",
          problem(409, "image builder is being built: delete it when the build has ended"));
  r = run({"images", "delete", "builder"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "error: image builder is being built: delete it when the build has ended\n");
}

}  // namespace
}  // namespace gpurent

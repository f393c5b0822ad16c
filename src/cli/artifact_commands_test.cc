// `artifacts upload/list/show/delete` in process against a fake API. The upload tests run a
// stateful fake of the content route (FakeArtifact, on fake_upload_for_test.h's FakeUpload) that
// checks what the spec asks of the server: application/octet-stream bodies of 1 byte to 1 MiB at
// ?offset= equal to what it holds (409 otherwise), and at the last byte the SHA-256 of everything
// received against the declared one (422 and back to 0 otherwise). Covered: a 2.5 MiB file in
// three chunks with the exact bytes, a smaller --chunk-bytes (and a server's 413), resuming an
// unfinished upload of the same file after the create's 409, going on from the server's
// received_bytes after a chunk's 409 (and giving up after a few in a row), a name taken by another
// file or already holding this one, a digest mismatch, an unreadable project (before hashing) and
// the local file errors (nothing sent); list, show and delete (English and Chinese).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <memory>
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
const char* const kBase = "/api/v1/projects/vision/artifacts";
const char* const kPath = "/api/v1/projects/vision/artifacts/llama";
const char* const kContent = "/api/v1/projects/vision/artifacts/llama/content";

// What the server keeps of artifact vision/llama: the upload (fake_upload_for_test.h) and its answer.
struct FakeArtifact : testing::FakeUpload {
  json answer() const {
    json a = {{"id", "art_00000000000000c1"},
              {"name", "llama"},
              {"project", "vision"},
              {"project_id", "prj_00000000000000b1"},
              {"kind", "model"},
              {"sha256", sha256},
              {"size_bytes", size},
              {"received_bytes", static_cast<int64_t>(received.size())},
              {"state", ready ? "ready" : "uploading"},
              {"uploaded_by", "alice"},
              {"created_at", "2026-01-01T00:50:00.000Z"},
              {"updated_at", "2026-01-01T00:59:00.000Z"}};
    if (ready) a["ready_at"] = "2026-01-01T00:59:00.000Z";
    return a;
  }
  Canned create(const Recorded& r) {
    if (auto refused = FakeUpload::create(json::parse(r.body), "project vision already has an artifact named llama"))
      return *refused;
    return {201, answer().dump()};
  }
};

class ArtifactCommandsTest : public testing::UploadFileTest {
 protected:
  ArtifactCommandsTest() : UploadFileTest("gpurent-artifact-test-", ".bin") {}

  void SetUp() override {
    UploadFileTest::SetUp();
    route_upload(art_, kBase, {kPath}, kContent);
    // The check that the project can be read, before the file is hashed.
    api_.on(std::string("GET ") + kBase, {200, R"({"project":"vision","items":[],"used_bytes":0,"limit_bytes":1})"});
  }

  std::shared_ptr<FakeArtifact> art_ = std::make_shared<FakeArtifact>();
};

TEST_F(ArtifactCommandsTest, UploadSendsTheFileInMebibyteChunksAtTheirOffsets) {
  CliRun r = run({"artifacts", "upload", "vision", "llama", file_, "--kind", "model", "--description", "weights"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(calls(), (std::vector<std::string>{std::string("GET ") + kBase, std::string("POST ") + kBase,
                                               std::string("PUT ") + kContent + "?offset=0 (1048576)",
                                               std::string("PUT ") + kContent + "?offset=1048576 (1048576)",
                                               std::string("PUT ") + kContent + "?offset=2097152 (524411)"}));
  auto reqs = api_.requests();
  EXPECT_EQ(json::parse(reqs[1].body), (json{{"name", "llama"},
                                             {"sha256", sha256_hex(content_)},
                                             {"size_bytes", content_.size()},
                                             {"kind", "model"},
                                             {"description", "weights"}}));
  EXPECT_EQ(reqs[2].content_type, "application/octet-stream");
  EXPECT_EQ(reqs[2].authorization, "Bearer gpr_env");
  EXPECT_EQ(reqs[2].body + reqs[3].body + reqs[4].body, content_);
  EXPECT_TRUE(art_->ready) << "the fake found another digest";
  // The ready artifact, as `show` prints it; no progress off a terminal.
  EXPECT_NE(r.out.find("state:          ready\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("size_bytes:     2621563 (2.5 MiB)\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sha256:         " + sha256_hex(content_) + "\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");

  // -o json prints the answer as the server sent it.
  *art_ = FakeArtifact{};
  r = run({"-o", "json", "artifacts", "upload", "vision", "llama", file_});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(r.out), art_->answer());
  EXPECT_FALSE(json::parse(api_.requests()[6].body).contains("kind")) << "the server's default";
}

TEST_F(ArtifactCommandsTest, ChunkBytesSetsTheChunkSizeWithinTheServersLimit) {
  CliRun r = run({"artifacts", "upload", "vision", "llama", file_, "--chunk-bytes", "1000000"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(calls(), (std::vector<std::string>{std::string("GET ") + kBase, std::string("POST ") + kBase,
                                               std::string("PUT ") + kContent + "?offset=0 (1000000)",
                                               std::string("PUT ") + kContent + "?offset=1000000 (1000000)",
                                               std::string("PUT ") + kContent + "?offset=2000000 (621563)"}));
  EXPECT_TRUE(art_->ready);
  for (const char* bad : {"0", "1048577", "-1"}) {
    r = run({"artifacts", "upload", "vision", "llama", file_, "--chunk-bytes", bad});
    EXPECT_EQ(r.rc, 2) << bad;
  }
  EXPECT_EQ(api_.requests().size(), 5u);

  // A server that takes smaller bodies: its 413, with a hint naming the flag.
  *art_ = FakeArtifact{};
  api_.on_call(std::string("PUT ") + kContent, [](const Recorded&) {
    return Canned{413, R"({"title":"Payload Too Large","status":413,"detail":"the body is over 65536 bytes"})",
                  "application/problem+json"};
  });
  r = run({"artifacts", "upload", "vision", "llama", file_});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err,
            "error: the body is over 65536 bytes\n"
            "hint: the server (or a proxy before it) takes smaller requests than 1048576 bytes: run the command "
            "again with a smaller --chunk-bytes (it resumes where the server is)\n");
}

TEST_F(ArtifactCommandsTest, ResumesAnUnfinishedUploadOfTheSameFile) {
  art_->exists = true;
  art_->sha256 = sha256_hex(content_);
  art_->size = static_cast<int64_t>(content_.size());
  art_->received = content_.substr(0, kMiB);
  CliRun r = run({"artifacts", "upload", "vision", "llama", file_});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(calls(), (std::vector<std::string>{std::string("GET ") + kBase, std::string("POST ") + kBase,
                                               std::string("GET ") + kPath,
                                               std::string("PUT ") + kContent + "?offset=1048576 (1048576)",
                                               std::string("PUT ") + kContent + "?offset=2097152 (524411)"}));
  EXPECT_TRUE(art_->ready);
  EXPECT_EQ(r.err, "resuming the upload of llama at 1 MiB of 2.5 MiB\n");
}

TEST_F(ArtifactCommandsTest, AChunksConflictResumesFromTheServersReceivedBytes) {
  // The server already holds the first two chunks (their answers were lost): the chunk at 0 is
  // refused with 409, the CLI reads the artifact and goes on at 2 MiB.
  art_->preload_on_first_put = content_.substr(0, 2 * kMiB);
  CliRun r = run({"artifacts", "upload", "vision", "llama", file_});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(calls(), (std::vector<std::string>{std::string("GET ") + kBase, std::string("POST ") + kBase,
                                               std::string("PUT ") + kContent + "?offset=0 (1048576)",
                                               std::string("GET ") + kPath,
                                               std::string("PUT ") + kContent + "?offset=2097152 (524411)"}));
  EXPECT_TRUE(art_->ready);
  EXPECT_EQ(art_->received, content_);
}

TEST_F(ArtifactCommandsTest, GivesUpAfterAFewConflictsInARow) {
  // A server that refuses every chunk and never moves: a bounded number of tries, then the error.
  api_.on_call(std::string("PUT ") + kContent,
               [](const Recorded&) { return problem(409, "offset: the upload continues at 7", "offset"); });
  CliRun r = run({"artifacts", "upload", "vision", "llama", file_});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("error: offset: the upload continues at 7"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("hint: the server refused the chunk of llama at offset 0 4 times in a row"), std::string::npos)
      << r.err;
  const auto c = calls();
  EXPECT_EQ(std::count(c.begin(), c.end(), std::string("PUT ") + kContent + "?offset=0 (1048576)"), 4);
  EXPECT_EQ(c.size(), 9u);  // GET (the project), POST, 4 PUTs, 3 GETs
}

TEST_F(ArtifactCommandsTest, ANameTakenByAnotherFileOrAlreadyHoldingThisOne) {
  art_->exists = true;
  art_->sha256 = std::string(64, 'a');
  art_->size = 42;
  CliRun r = run({"artifacts", "upload", "vision", "llama", file_});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("error: project vision already has an artifact llama that is not this file (uploading, 42 "
                       "bytes, sha256 " +
                       std::string(64, 'a') + "; " + file_ + " has 2621563 bytes, sha256 " + sha256_hex(content_) +
                       "): delete it first (gpurent artifacts delete vision llama) or choose another name"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(calls(), (std::vector<std::string>{std::string("GET ") + kBase, std::string("POST ") + kBase,
                                               std::string("GET ") + kPath}));

  art_->sha256 = sha256_hex(content_);
  art_->size = static_cast<int64_t>(content_.size());
  art_->received = content_;
  art_->ready = true;
  r = run({"artifacts", "upload", "vision", "llama", file_});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.err, "artifact llama of project vision already holds this file (sha256 " + sha256_hex(content_) +
                       "): nothing to send\n");
  EXPECT_NE(r.out.find("state:          ready\n"), std::string::npos) << r.out;
  EXPECT_EQ(calls().size(), 6u) << "no chunk sent";
}

TEST_F(ArtifactCommandsTest, ADigestMismatchIsTheServersErrorWithAHint) {
  art_->corrupt = true;
  CliRun r = run({"artifacts", "upload", "vision", "llama", file_});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("error: sha256: the content received does not have this digest\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("hint: what the server received does not have the SHA-256 computed from " + file_), std::string::npos)
      << r.err;
  EXPECT_FALSE(art_->ready);
}

TEST_F(ArtifactCommandsTest, AProjectThatCannotBeReadFailsBeforeTheFileIsHashed) {
  CliRun r = run({"artifacts", "upload", "nlp", "llama", file_});  // the fake API's 404
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "error: /api/v1/projects/nlp/artifacts not found\n");
  EXPECT_EQ(calls(), std::vector<std::string>{"GET /api/v1/projects/nlp/artifacts"});
}

TEST_F(ArtifactCommandsTest, FileErrorsNameTheFileAndSendNothing) {
  CliRun r = run({"artifacts", "upload", "vision", "llama", "/nonexistent/gpurent-weights.bin"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "error: cannot read /nonexistent/gpurent-weights.bin: No such file or directory\n");

  const std::string dir = ::testing::TempDir() + "gpurent-artifact-dir";
  std::filesystem::create_directories(dir);
  r = run({"artifacts", "upload", "vision", "llama", dir});
  std::filesystem::remove(dir);
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.err, "error: " + dir + " is a directory: give the path of a file\n");

  r = run({"-o", "json", "artifacts", "upload", "vision", "llama", "/nonexistent/gpurent-weights.bin"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(json::parse(r.err)["detail"], "cannot read /nonexistent/gpurent-weights.bin: No such file or directory");
  EXPECT_TRUE(api_.requests().empty());
}

TEST_F(ArtifactCommandsTest, ListShowsSizesProgressDigestsAndTheTenantsUse) {
  const json answer = {
      {"project_id", "prj_00000000000000b1"},
      {"project", "vision"},
      {"items",
       {{{"id", "art_00000000000000c1"}, {"name", "llama-8b"}, {"project", "vision"}, {"kind", "model"},
         {"sha256", "9b1d0e6c2f7a4381" + std::string(48, '0')}, {"size_bytes", int64_t{16060522496}},
         {"received_bytes", int64_t{16060522496}}, {"state", "ready"}, {"uploaded_by", "alice"}},
        {{"id", "art_00000000000000c2"}, {"name", "imagenet-val"}, {"project", "vision"}, {"kind", "dataset"},
         {"sha256", "3f9a0c2b7d1e4a65" + std::string(48, '1')}, {"size_bytes", int64_t{6744688640}},
         {"received_bytes", int64_t{1073741824}}, {"state", "uploading"}, {"uploaded_by", "bob"}}}},
      {"used_bytes", int64_t{22805211136}},
      {"limit_bytes", int64_t{274877906944}}};
  api_.on(std::string("GET ") + kBase, {200, answer.dump()});
  CliRun r = run({"artifacts", "list", "vision"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out,
            "NAME           KIND      STATE          SIZE      RECEIVED   SHA256          UPLOADED BY\n"
            "imagenet-val   dataset   uploading   6.3 GiB   1 GiB (15%)   3f9a0c2b7d1e…   bob\n"
            "llama-8b       model     ready        15 GiB             -   9b1d0e6c2f7a…   alice\n"
            "this tenant's artifacts use 21.2 GiB of 256 GiB\n");
  EXPECT_EQ(r.err, "");
  r = run({"-o", "json", "artifacts", "ls", "vision"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(r.out), answer);

  api_.on("GET /api/v1/projects/nlp/artifacts",
          {200, json({{"project_id", "prj_00000000000000b2"}, {"project", "nlp"}, {"items", json::array()},
                      {"used_bytes", 0}, {"limit_bytes", int64_t{274877906944}}})
                    .dump()});
  r = run({"artifacts", "list", "nlp"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "this tenant's artifacts use 0 B of 256 GiB\n");
  EXPECT_EQ(r.err, "no artifacts found\n");
}

TEST_F(ArtifactCommandsTest, ShowPrintsTheWholeArtifact) {
  const std::string sha = "9b1d0e6c2f7a4381" + std::string(48, '0');
  const json answer = {{"id", "art_00000000000000c1"},
                       {"name", "llama-8b"},
                       {"project", "vision"},
                       {"project_id", "prj_00000000000000b1"},
                       {"kind", "model"},
                       {"description", "Llama 3.1 8B weights"},
                       {"sha256", sha},
                       {"size_bytes", int64_t{16060522496}},
                       {"received_bytes", int64_t{16060522496}},
                       {"state", "ready"},
                       {"uploaded_by", "alice"},
                       {"created_at", "2026-01-01T00:50:00.000Z"},
                       {"updated_at", "2026-01-01T00:58:00.000Z"},
                       {"ready_at", "2026-01-01T00:58:00.000Z"}};
  api_.on("GET /api/v1/projects/vision/artifacts/llama-8b", {200, answer.dump()});
  CliRun r = run({"artifacts", "show", "vision", "llama-8b"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out,
            "name:           llama-8b\n"
            "id:             art_00000000000000c1\n"
            "project:        vision (prj_00000000000000b1)\n"
            "kind:           model\n"
            "state:          ready\n"
            "size_bytes:     16060522496 (15 GiB)\n"
            "received_bytes: 16060522496\n"
            "sha256:         " +
                sha +
                "\n"
                "description:    Llama 3.1 8B weights\n"
                "uploaded_by:    alice\n"
                "ready_at:       2026-01-01T00:58:00.000Z\n"
                "created_at:     2026-01-01T00:50:00.000Z\n"
                "updated_at:     2026-01-01T00:58:00.000Z\n");
  r = run({"-o", "json", "artifacts", "show", "vision", "llama-8b"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(r.out), answer);

  r = run({"artifacts", "show", "vision", "nope"});  // the fake API's 404
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("not found"), std::string::npos) << r.err;
}

TEST_F(ArtifactCommandsTest, DeleteConfirmsInTheLocalesLanguage) {
  api_.on("DELETE /api/v1/projects/vision/artifacts/llama-8b", {204, ""});
  CliRun r = run({"artifacts", "delete", "vision", "llama-8b"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "deleted artifact llama-8b of project vision\n");
  env_["LANG"] = "zh_CN.UTF-8";
  r = run({"artifacts", "rm", "vision", "llama-8b"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "已删除项目 vision 的制品 llama-8b\n");
  env_["LC_ALL"] = "C";
  r = run({"-o", "json", "artifacts", "delete", "vision", "llama-8b"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(r.out), (json{{"deleted", "llama-8b"}, {"kind", "artifacts"}, {"project", "vision"}}));
  EXPECT_EQ(api_.requests().size(), 3u);

  r = run({"artifacts", "delete", "vision", "nope"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("not found"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace gpurent

// `secrets set/list/delete` in process against a fake API: set sends the value read from standard
// input (or --from-file) exactly as read and prints only the name and size, refuses an empty, NUL
// or non-UTF-8 value before sending anything; list prints names and sizes sorted by name (the
// answer as it came under -o json); delete, and the server's 404 with exit code 1.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/fake_api_for_test.h"

namespace gpurent {
namespace {

using json = nlohmann::json;

using testing::CliRun;

const char* const kPath = "/api/v1/projects/vision/secrets/hf-token";

json secret_answer(int64_t size, const std::string& created, const std::string& updated) {
  return {{"id", "sec_00000000000000a1"},  {"name", "hf-token"},   {"project_id", "prj_00000000000000b1"},
          {"size_bytes", size},            {"created_at", created}, {"updated_at", updated}};
}

class SecretCommandsTest : public testing::CliFakeApiTest {
 protected:
  std::vector<std::string> calls() const {
    std::vector<std::string> out;
    for (const auto& r : api_.requests()) out.push_back(r.method + " " + r.path);
    return out;
  }
};

TEST_F(SecretCommandsTest, SetSendsStandardInputAsReadAndNeverPrintsIt) {
  const std::string value = "hf_s3cr3t\nsecond line\n";
  api_.on(std::string("PUT ") + kPath,
          {201, secret_answer(static_cast<int64_t>(value.size()), "2026-01-01T00:59:00.000Z",
                              "2026-01-01T00:59:00.000Z")
                    .dump()});
  CliRun r = run({"secrets", "set", "vision", "hf-token"}, value);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "created secret hf-token of project vision (22 bytes)\n");
  EXPECT_EQ(r.err, "");
  auto reqs = api_.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].method, "PUT");
  EXPECT_EQ(reqs[0].path, kPath);
  EXPECT_EQ(reqs[0].authorization, "Bearer gpr_env");
  EXPECT_EQ(json::parse(reqs[0].body), (json{{"value", value}})) << "the trailing newline is kept";

  // A replaced value says so; -o json prints the answer, which holds no value.
  api_.on(std::string("PUT ") + kPath,
          {200, secret_answer(5, "2025-12-31T00:00:00.000Z", "2026-01-01T00:59:00.000Z").dump()});
  r = run({"secrets", "set", "vision", "hf-token"}, "other");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "replaced secret hf-token of project vision (5 bytes)\n");
  r = run({"-o", "json", "secrets", "set", "vision", "hf-token"}, "s3cr3t");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["size_bytes"], 5);
  EXPECT_EQ(r.out.find("s3cr3t"), std::string::npos);
}

TEST_F(SecretCommandsTest, SetReadsFromFile) {
  const std::string path = ::testing::TempDir() + "gpurent-secret-test.pem";
  const std::string value = "-----BEGIN KEY-----\nabc\n-----END KEY-----\n";
  {
    std::ofstream f(path, std::ios::binary);
    f << value;
  }
  api_.on(std::string("PUT ") + kPath, {201, secret_answer(static_cast<int64_t>(value.size()), "2026-01-01T00:59:00.000Z",
                                                            "2026-01-01T00:59:00.000Z")
                                                 .dump()});
  CliRun r = run({"secrets", "set", "vision", "hf-token", "--from-file", path}, "ignored stdin");
  std::remove(path.c_str());
  ASSERT_EQ(r.rc, 0) << r.err;
  auto reqs = api_.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(json::parse(reqs[0].body)["value"], value);

  r = run({"secrets", "set", "vision", "hf-token", "--from-file", "/nonexistent/gpurent-secret"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("cannot read /nonexistent/gpurent-secret"), std::string::npos) << r.err;
  EXPECT_EQ(api_.requests().size(), 1u);
}

TEST_F(SecretCommandsTest, SetRefusesWhatTheServerWouldBeforeSending) {
  for (const std::string& in : {std::string(), std::string("a\0b", 3), std::string("\xff\xfe"),
                                std::string(64 * 1024 + 1, 'x')}) {
    CliRun r = run({"secrets", "set", "vision", "hf-token"}, in);
    EXPECT_EQ(r.rc, 1) << in.size();
    EXPECT_NE(r.err.find("error: standard input"), std::string::npos) << r.err;
  }
  EXPECT_TRUE(api_.requests().empty());
  // The value is never an argument.
  CliRun r = run({"secrets", "set", "vision", "hf-token", "s3cr3t"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(api_.requests().empty());
  // The largest value passes.
  api_.on(std::string("PUT ") + kPath,
          {201, secret_answer(64 * 1024, "2026-01-01T00:59:00.000Z", "2026-01-01T00:59:00.000Z").dump()});
  r = run({"secrets", "set", "vision", "hf-token"}, std::string(64 * 1024, 'x'));
  EXPECT_EQ(r.rc, 0) << r.err;
}

TEST_F(SecretCommandsTest, ListPrintsNamesAndSizesByName) {
  const json answer = {
      {"project_id", "prj_00000000000000b1"},
      {"project", "vision"},
      {"items",
       {{{"id", "sec_00000000000000a2"}, {"name", "wandb-key"}, {"project_id", "prj_00000000000000b1"},
         {"size_bytes", 40}, {"created_at", "2025-12-01T00:00:00.000Z"}, {"updated_at", "2026-01-01T00:55:00.000Z"}},
        {{"id", "sec_00000000000000a1"}, {"name", "hf-token"}, {"project_id", "prj_00000000000000b1"},
         {"size_bytes", 1234}, {"created_at", "2025-12-31T22:00:00.000Z"},
         {"updated_at", "2025-12-31T22:00:00.000Z"}}}}};
  api_.on("GET /api/v1/projects/vision/secrets", {200, answer.dump()});
  CliRun r = run({"secrets", "list", "vision"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out,
            "NAME        BYTES   UPDATED   ID\n"
            "hf-token     1234   3h        sec_00000000000000a1\n"
            "wandb-key      40   5m        sec_00000000000000a2\n");
  EXPECT_EQ(r.err, "");
  r = run({"-o", "json", "secrets", "ls", "vision"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(r.out), answer);

  api_.on("GET /api/v1/projects/nlp/secrets",
          {200, json({{"project_id", "prj_00000000000000b2"}, {"project", "nlp"}, {"items", json::array()}}).dump()});
  r = run({"secrets", "list", "nlp"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "no secrets found\n");
}

TEST_F(SecretCommandsTest, DeleteAndTheServersNotFound) {
  api_.on(std::string("DELETE ") + kPath, {204, ""});
  CliRun r = run({"secrets", "delete", "vision", "hf-token"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "deleted secret hf-token of project vision\n");
  EXPECT_EQ(calls(), std::vector<std::string>{std::string("DELETE ") + kPath});

  r = run({"secrets", "delete", "vision", "nope"});  // the fake API's 404
  EXPECT_EQ(r.rc, 1);
  EXPECT_NE(r.err.find("not found"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace gpurent

// `jobs logs` in process against a fake API: the newest run's text printed once (page after page
// up to the end), --tail and --run passed on, -f asking again from next_offset until complete, a
// requeued job's newer run followed, a job not started waited for, control characters
// neutralised, -o json printing the answers, and the server's 404 printed with exit code 1.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <sstream>
#include <thread>

#include "cli/cli.h"
#include "cli/fake_api_for_test.h"

namespace gpurent {
namespace {

using json = nlohmann::json;

using testing::CliRun;

json answer(const std::string& data, int64_t offset, int64_t size, bool complete, int64_t run = 9,
            json runs = json::array({9})) {
  return {{"job_id", "job_00000000000000a1"},
          {"job", "train"},
          {"state", complete ? "succeeded" : "running"},
          {"run", run},
          {"runs", std::move(runs)},
          {"offset", offset},
          {"next_offset", offset + static_cast<int64_t>(data.size())},
          {"size", size},
          {"data", data},
          {"complete", complete}};
}

class JobLogsCommandTest : public testing::CliFakeApiTest {
 protected:
  void on(const std::string& query, const json& body) {
    api_.on("GET /api/v1/jobs/train/logs" + query, {200, body.dump()});
  }

  // The query of each request, "k=v&..." in key order.
  std::vector<std::string> queries() const {
    std::vector<std::string> out;
    for (const auto& r : api_.requests()) {
      std::string q;
      for (const auto& [k, v] : r.params) q += (q.empty() ? "" : "&") + k + "=" + v;
      out.push_back(r.method + " " + r.path + "?" + q);
    }
    return out;
  }

};

const std::string kPath = "GET /api/v1/jobs/train/logs?";

TEST_F(JobLogsCommandTest, PrintsTheNewestRunPageAfterPageToItsEnd) {
  on("?limit=1048576&offset=0", answer("hello ", 0, 11, false));
  on("?limit=1048576&offset=6&run=9", answer("world", 6, 11, false));
  CliRun r = run({"jobs", "logs", "train"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "hello world");
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(queries(),
            (std::vector<std::string>{kPath + "limit=1048576&offset=0", kPath + "limit=1048576&offset=6&run=9"}));
}

TEST_F(JobLogsCommandTest, BytesTheServerDiscardedAreSaidOnStandardError) {
  json capped = answer("kept line\n", 5000, 5010, false);
  capped["discarded"] = 4096;
  on("?limit=1048576&offset=0", capped);
  CliRun r = run({"jobs", "logs", "train"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "kept line\n");
  EXPECT_EQ(r.err,
            "(job train, run 9: from byte 5000, where what the server's log cap kept begins; 4096 bytes before it were "
            "discarded)\n");
}

TEST_F(JobLogsCommandTest, TailAndRunArePassedOn) {
  on("?limit=1048576&run=7&tail=20", answer("last\n", 100, 105, false, 7, json::array({7, 9})));
  CliRun r = run({"jobs", "logs", "train", "--tail", "20", "--run", "7"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "last\n");
  EXPECT_EQ(queries(), std::vector<std::string>{kPath + "limit=1048576&run=7&tail=20"});
  // Out of range: a usage error, nothing asked.
  EXPECT_EQ(run({"jobs", "logs", "train", "--tail", "0"}).rc, 2);
  EXPECT_EQ(run({"jobs", "logs", "train", "--run", "x"}).rc, 2);
  EXPECT_EQ(api_.requests().size(), 1u);
}

TEST_F(JobLogsCommandTest, FollowAsksAgainFromNextOffsetUntilComplete) {
  on("?limit=1048576&offset=0", answer("step 1\n", 0, 7, false));
  on("?limit=1048576&offset=7&run=9", answer("step 2\n", 7, 14, true));
  CliRun r = run({"jobs", "logs", "-f", "train"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "step 1\nstep 2\n");
  EXPECT_EQ(queries(),
            (std::vector<std::string>{kPath + "limit=1048576&offset=0", kPath + "limit=1048576&offset=7&run=9"}));
}

TEST_F(JobLogsCommandTest, FollowMovesOnToTheRunOfARequeue) {
  on("?limit=1048576&offset=0&run=7", answer("first try\n", 0, 10, false, 7, json::array({7, 9})));
  on("?limit=1048576&offset=0&run=9", answer("second try\n", 0, 11, true, 9, json::array({7, 9})));
  CliRun r = run({"jobs", "logs", "train", "--follow", "--run", "7"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "first try\nsecond try\n");
  EXPECT_EQ(r.err, "(job train: run 9, after a requeue)\n");
}

TEST_F(JobLogsCommandTest, FollowWaitsForAJobThatHasNotStarted) {
  // The first answer is the fake API's 404 for a job not started; the test then gives it a log.
  api_.on("GET /api/v1/jobs/train/logs",
          {404,
           R"({"title":"Not Found","status":404,"detail":"no logs yet: job train has not started",)"
           R"("detail_message":{"code":"api.job_logs.not_started","args":{"job":"train"}}})",
           "application/problem+json"});
  std::thread later([this] {
    while (api_.requests().empty()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    on("", answer("up\n", 0, 3, true));
  });
  CliRun r = run({"jobs", "logs", "-f", "train"});
  later.join();
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "up\n");
  EXPECT_EQ(r.err, "waiting for job train to start (no logs yet)\n");
}

TEST_F(JobLogsCommandTest, WithoutFollowNoLogsIsAnError) {
  api_.on(
      "GET /api/v1/jobs/train/logs",
      {404,
       R"({"title":"Not Found","status":404,"detail":"no logs: this server's executor (sim) runs no processes and keeps no output",)"
       R"("detail_message":{"code":"api.job_logs.sim_executor","args":{}}})",
       "application/problem+json"});
  CliRun r = run({"jobs", "logs", "train"});
  EXPECT_EQ(r.rc, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("executor (sim)"), std::string::npos) << r.err;
  r = run({"jobs", "logs", "-f", "train"});  // only a job not started is waited for
  EXPECT_EQ(r.rc, 1);
}

TEST_F(JobLogsCommandTest, ControlCharactersAreNeutralisedButLineBreaksPass) {
  const std::string text =
      "a\tb\r\n\x1B[31mred\x1B[0m\n\xC2\x9B"
      "2J\xE2\x82\xAC\n";
  on("?limit=1048576&offset=0", answer(text, 0, static_cast<int64_t>(text.size()), true));
  CliRun r = run({"jobs", "logs", "train"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, "a\tb\r\n?[31mred?[0m\n?2J\xE2\x82\xAC\n");
}

TEST_F(JobLogsCommandTest, JsonPrintsEachAnswer) {
  const json a = answer("x\n", 0, 2, true);
  on("?limit=1048576&offset=0", a);
  CliRun r = run({"-o", "json", "jobs", "logs", "train"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(r.out), a);
}

}  // namespace
}  // namespace gpurent

// GET /api/v1/jobs/{ref}/logs inside the real server: logs are the "<job id>-<Slurm job id>.log"
// files of --slurm-output-dir (read whenever the folder is set, so these tests write them by
// hand under the simulated executor, scheduler off): the newest run by default and an older one by
// number, paging by offset/next_offset/limit, the last lines by tail (read backwards, bounded by
// limit), UTF-8 never split while the file can grow and invalid bytes replaced, `complete` only for
// a finished job's newest run read to its end, only .log files (never .status files, links or
// other jobs' files), 404 for another tenant's job and for a server that keeps no output, and a
// 422 naming the field for every malformed parameter.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "server_fixture.h"

namespace gpurent::testing {
namespace {

namespace fs = std::filesystem;

std::string make_logs_temp_dir() {
  std::string t = (fs::temp_directory_path() / "gpurent-logs-XXXXXX").string();
  if (!::mkdtemp(t.data())) throw std::runtime_error("mkdtemp failed");
  return t;
}

class JobLogsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme")), "tenant");
    expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("acme", "vision")), "project");
    id = expect_2xx(s.admin("POST", "/api/v1/jobs", job_doc("vision", "train")), "job").body.at("id");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }

  void write(const std::string& name, const std::string& bytes) const {
    std::ofstream f(dir + "/" + name, std::ios::binary | std::ios::trunc);
    f << bytes;
    ASSERT_TRUE(f.good()) << name;
  }
  Resp logs(const std::string& query = "", const std::string& ref = "") const {
    return s.admin("GET", "/api/v1/jobs/" + (ref.empty() ? id : ref) + "/logs" + (query.empty() ? "" : "?" + query));
  }
  Resp ok(const std::string& query = "") const {
    Resp r = logs(query);
    EXPECT_EQ(r.status, 200) << query << ": " << r.describe();
    return r;
  }

  const std::string dir = make_logs_temp_dir();
  ServerProcess s{{"--no-scheduler", "--slurm-output-dir", dir}};
  std::string id;
};

TEST_F(JobLogsTest, TheNewestRunByDefaultAnOlderOneByItsSlurmJobId) {
  write(id + "-7.log", "first run\n");
  write(id + "-9.log", "second run\nline 2\n");
  write(id + "-10.status", "exit 0\n");  // a container wrapper's status: never a log
  write(id + "-11.log.status", "x\n");
  write(id + "-012.log", "leading zero\n");  // no Slurm job id is written so
  write(id + "-12.logs", "x\n");
  write("job_0000000000000000-13.log", "another job's\n");
  fs::create_symlink("/etc/hostname", dir + "/" + id + "-14.log");  // links are never followed
  fs::create_directory(dir + "/" + id + "-15.log");

  Resp r = ok();
  EXPECT_EQ(r.body["job_id"], id);
  EXPECT_EQ(r.body["job"], "train");
  EXPECT_EQ(r.body["state"], "pending");
  EXPECT_EQ(r.body["run"], 9);
  EXPECT_EQ(r.body["runs"], json::parse("[7, 9]"));
  EXPECT_EQ(r.body["data"], "second run\nline 2\n");
  EXPECT_EQ(r.body["offset"], 0);
  EXPECT_EQ(r.body["next_offset"], 18);
  EXPECT_EQ(r.body["size"], 18);
  EXPECT_EQ(r.body["complete"], false);  // pending: more may come

  Resp old = ok("run=7");
  EXPECT_EQ(old.body["run"], 7);
  EXPECT_EQ(old.body["data"], "first run\n");
  EXPECT_EQ(old.body["runs"], r.body["runs"]);

  // By name, as every job route.
  Resp by_name = logs("", "train");
  ASSERT_EQ(by_name.status, 200) << by_name.describe();
  EXPECT_EQ(by_name.body["data"], r.body["data"]);

  for (const char* run : {"8", "10", "11", "12", "13", "14", "15"}) {
    Resp none = logs(std::string("run=") + run);
    EXPECT_EQ(none.status, 404) << run << ": " << none.describe();
    EXPECT_EQ(none.error_fields(), std::vector<std::string>{"run"}) << none.describe();
    EXPECT_NE(none.text.find("runs with a log: 7, 9"), std::string::npos) << none.describe();
  }
}

TEST_F(JobLogsTest, OffsetNextOffsetAndLimitPageThroughALog) {
  std::string text;
  for (int i = 0; i < 10; ++i) text += "0123456789";
  write(id + "-5.log", text);
  Resp r = ok("offset=10&limit=20");
  EXPECT_EQ(r.body["data"], text.substr(10, 20));
  EXPECT_EQ(r.body["offset"], 10);
  EXPECT_EQ(r.body["next_offset"], 30);
  EXPECT_EQ(r.body["size"], 100);

  // Page by page with the answer's next_offset, as `jobs logs -f` does.
  std::string all;
  int64_t offset = 0;
  for (int i = 0; i < 20 && offset < 100; ++i) {
    Resp p = ok("limit=33&offset=" + std::to_string(offset));
    all += p.body["data"].get<std::string>();
    offset = p.body["next_offset"];
  }
  EXPECT_EQ(all, text);

  // At or past the end: nothing, and the next read starts at the end.
  for (const char* q : {"offset=100", "offset=5000", "offset=999999999999999999"}) {
    Resp end = ok(q);
    EXPECT_EQ(end.body["data"], "") << q;
    EXPECT_EQ(end.body["next_offset"], 100) << q;
    EXPECT_EQ(end.body["size"], 100) << q;
  }
  EXPECT_EQ(ok("limit=1048576").body["data"], text);
  // The default limit is 64 KiB.
  write(id + "-6.log", std::string(100'000, 'x'));
  Resp big = ok();
  EXPECT_EQ(big.body["data"].get<std::string>().size(), 65536u);
  EXPECT_EQ(big.body["next_offset"], 65536);
  EXPECT_EQ(big.body["size"], 100'000);
}

// A log past the server's cap keeps its last bytes after a hole (exec/log_cap.h; here punched by
// hand): reads skip the hole and start at the first whole line after it, `discarded` says how many
// bytes the hole holds, offsets stay the file's own, and tail never reaches into the hole.
TEST_F(JobLogsTest, ACappedLogIsReadFromTheFirstWholeLineItKept) {
  std::string text;
  for (int i = 0; static_cast<int64_t>(text.size()) < 1'572'864; ++i) text += "line " + std::to_string(i) + "\n";
  text.resize(1'572'864);
  text.back() = '\n';
  write(id + "-4.log", text);
  constexpr int64_t kHole = 1'507'328;  // 368 blocks of 4 KiB: the last 64 KiB (about 5,400 lines) kept
  {
    const std::string path = dir + "/" + id + "-4.log";
    const int fd = ::open(path.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::fsync(fd), 0);
    const int punched = ::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, kHole);
    const int e = errno;
    ::close(fd);
    if (punched != 0 && e == EOPNOTSUPP) GTEST_SKIP() << dir << ": this file system cannot punch holes";
    ASSERT_EQ(punched, 0) << std::strerror(e);
  }
  const size_t first_line = text.find('\n', kHole) + 1;
  for (const char* q : {"", "offset=0", "offset=1000"}) {
    Resp r = ok(std::string(q) + (*q ? "&" : "") + "limit=4096");
    EXPECT_EQ(r.body["discarded"], kHole) << q;
    EXPECT_EQ(r.body["offset"], first_line) << q;
    EXPECT_EQ(r.body["next_offset"], kHole + 4096) << q;
    EXPECT_EQ(r.body["size"], text.size()) << q;
    EXPECT_EQ(r.body["data"], text.substr(first_line, kHole + 4096 - first_line)) << q;
  }
  // Past the hole: read where asked, whole line or not.
  Resp mid = ok("offset=1550000&limit=10");
  EXPECT_EQ(mid.body["offset"], 1'550'000);
  EXPECT_EQ(mid.body["data"], text.substr(1'550'000, 10));
  // tail: the window stops at the hole; the answer starts at the first line that starts in it.
  Resp tail = ok("tail=10000&limit=1048576");
  EXPECT_EQ(tail.body["offset"], first_line);
  EXPECT_TRUE(tail.body["data"] == text.substr(first_line)) << tail.body["data"].get<std::string>().size() << " bytes";
  EXPECT_EQ(ok("tail=1").body["data"], text.substr(text.rfind('\n', text.size() - 2) + 1));
  // A log never capped says 0.
  write(id + "-5.log", "x\n");
  EXPECT_EQ(ok().body["discarded"], 0);

  // Kept bytes with no line break in the first read start at a whole character: the hole ends
  // inside "é" (2 bytes), whose second byte is skipped, not served as U+FFFD.
  constexpr int64_t kHole2 = 1'572'864;  // 384 blocks of 4 KiB
  std::string text2(kHole2 - 1, 'a');
  for (int i = 0; i < 3000; ++i) text2 += "\xC3\xA9";
  write(id + "-6.log", text2);
  const std::string path2 = dir + "/" + id + "-6.log";
  const int fd2 = ::open(path2.c_str(), O_WRONLY);
  ASSERT_GE(fd2, 0);
  ASSERT_EQ(::fsync(fd2), 0);
  ASSERT_EQ(::fallocate(fd2, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, kHole2), 0);
  ::close(fd2);
  Resp whole = ok("limit=10");
  EXPECT_EQ(whole.body["discarded"], kHole2);
  EXPECT_EQ(whole.body["offset"], kHole2 + 1);
  EXPECT_EQ(whole.body["data"], "\xC3\xA9\xC3\xA9\xC3\xA9\xC3\xA9") << whole.describe();
  EXPECT_EQ(whole.body["next_offset"], kHole2 + 9);
}

TEST_F(JobLogsTest, TailIsTheLastLinesWithinTheLimit) {
  write(id + "-3.log", "a\nb\nc\nd\n");
  Resp r = ok("tail=2&offset=1");  // offset is ignored with tail
  EXPECT_EQ(r.body["data"], "c\nd\n");
  EXPECT_EQ(r.body["offset"], 4);
  EXPECT_EQ(r.body["next_offset"], 8);
  EXPECT_EQ(ok("tail=10").body["data"], "a\nb\nc\nd\n");

  write(id + "-3.log", "a\nb\nc");  // a last line without its newline is a line
  EXPECT_EQ(ok("tail=1").body["data"], "c");
  EXPECT_EQ(ok("tail=2").body["data"], "b\nc");

  // Fewer lines than asked fit in `limit` bytes: the answer starts at the first whole line.
  write(id + "-3.log", "line1\nline2\nline3\n");
  Resp cut = ok("tail=3&limit=10");
  EXPECT_EQ(cut.body["data"], "line3\n");
  EXPECT_EQ(cut.body["offset"], 12);
  EXPECT_EQ(ok("tail=3&limit=3").body["data"], "e3\n");  // no line starts in the window: its bytes

  // A large file is read backwards in blocks: 200000 lines of 12 bytes (2.4 MB).
  std::string text;
  char line[16];
  for (int i = 0; i < 200'000; ++i) {
    std::snprintf(line, sizeof line, "line %06d\n", i);
    text += line;
  }
  write(id + "-3.log", text);
  Resp last = ok("tail=10000&limit=1048576");
  EXPECT_EQ(last.body["data"], text.substr(190'000 * 12));
  EXPECT_EQ(last.body["offset"], 190'000 * 12);
  EXPECT_EQ(last.body["next_offset"], 200'000 * 12);
  Resp two = ok("tail=2");
  EXPECT_EQ(two.body["data"], "line 199998\nline 199999\n");
  // The default 64 KiB hold the last 5461 whole lines of them.
  Resp some = ok("tail=10000");
  EXPECT_EQ(some.body["data"], text.substr((200'000 - 5461) * 12));
}

TEST_F(JobLogsTest, DataNeverEndsInsideAUtf8SequenceAndInvalidBytesAreReplaced) {
  // "ab€cd": € is E2 82 AC.
  write(id + "-4.log",
        "ab\xE2\x82\xAC"
        "cd");
  Resp cut = ok("limit=3");
  EXPECT_EQ(cut.body["data"], "ab");
  EXPECT_EQ(cut.body["next_offset"], 2);
  Resp whole = ok("offset=2&limit=1");  // a sequence longer than the limit comes whole
  EXPECT_EQ(whole.body["data"], "\xE2\x82\xAC");
  EXPECT_EQ(whole.body["next_offset"], 5);
  EXPECT_EQ(ok("offset=3").body["data"],
            "\xEF\xBF\xBD\xEF\xBF\xBD"
            "cd");  // started inside: replaced

  // A file ending inside a character while the job may still write: the rest is awaited.
  write(id + "-4.log", "ab\xE2\x82");
  Resp partial = ok();
  EXPECT_EQ(partial.body["data"], "ab");
  EXPECT_EQ(partial.body["next_offset"], 2);
  EXPECT_EQ(partial.body["size"], 4);
  EXPECT_EQ(ok("tail=1").body["data"], "ab");

  // Bytes that are not UTF-8 become U+FFFD; NUL and control characters are JSON escapes.
  write(id + "-4.log", std::string("x\xFFy\xC0\xAFz\0\x1B[1m", 11));
  Resp bad = ok();
  EXPECT_EQ(bad.body["data"], std::string("x\xEF\xBF\xBDy\xEF\xBF\xBD\xEF\xBF\xBDz\0\x1B[1m", 17));
  EXPECT_EQ(bad.body["next_offset"], 11);
}

TEST_F(JobLogsTest, CompleteOnlyForAFinishedJobsNewestRunReadToItsEnd) {
  write(id + "-7.log", "first\n");
  write(id + "-9.log", "ab\xE2\x82");  // ends inside a character, and the job is over
  EXPECT_EQ(ok().body["complete"], false);
  expect_2xx(s.admin("POST", "/api/v1/jobs/" + id + "/cancel"), "cancel");
  Resp r = ok();
  EXPECT_EQ(r.body["state"], "cancelled");
  EXPECT_EQ(r.body["data"], "ab\xEF\xBF\xBD\xEF\xBF\xBD");  // nothing more will come: replaced
  EXPECT_EQ(r.body["next_offset"], 4);
  EXPECT_EQ(r.body["complete"], true);
  EXPECT_EQ(ok("tail=5").body["complete"], true);
  EXPECT_EQ(ok("limit=1").body["complete"], false);  // more to read
  EXPECT_EQ(ok("offset=4").body["complete"], true);
  EXPECT_EQ(ok("run=7").body["complete"], false);  // an older run: the newest follows it
}

TEST_F(JobLogsTest, AnotherTenantsJobIsNotFound) {
  write(id + "-7.log", "secret\n");
  expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("rival")), "tenant");
  const std::string rival = make_user_token(s, "rival-admin", "tenant_admin", "rival");
  for (const std::string& ref : {id, std::string("train")}) {
    Resp r = s.req("GET", "/api/v1/jobs/" + ref + "/logs", rival);
    EXPECT_EQ(r.status, 404) << r.describe();
    EXPECT_EQ(r.text.find("secret"), std::string::npos);
  }
  EXPECT_EQ(s.req("GET", "/api/v1/jobs/" + id + "/logs", "").status, 401);
  EXPECT_EQ(s.admin("GET", "/api/v1/jobs/no-such-job/logs").status, 404);
  const std::string viewer = make_user_token(s, "acme-viewer", "viewer", "acme");
  Resp own = s.req("GET", "/api/v1/jobs/train/logs", viewer);
  ASSERT_EQ(own.status, 200) << own.describe();
  EXPECT_EQ(own.body["data"], "secret\n");
}

TEST_F(JobLogsTest, MalformedParametersAreRefusedNamingTheField) {
  write(id + "-7.log", "x\n");
  const std::pair<const char*, const char*> bad[] = {
      {"offset=-1", "offset"},
      {"offset=abc", "offset"},
      {"offset=", "offset"},
      {"offset=1e3", "offset"},
      {"offset=%201", "offset"},
      {"offset=0x10", "offset"},
      {"offset=99999999999999999999", "offset"},
      {"offset=1&offset=2", "offset"},
      {"limit=0", "limit"},
      {"limit=1048577", "limit"},
      {"limit=-5", "limit"},
      {"limit=ten", "limit"},
      {"tail=0", "tail"},
      {"tail=10001", "tail"},
      {"tail=-1", "tail"},
      {"tail=1.5", "tail"},
      {"run=0", "run"},
      {"run=abc", "run"},
      {"run=-7", "run"},
      {"run=../../etc/passwd", "run"},
      {"follow=1", "follow"},
  };
  for (const auto& [q, field] : bad) {
    Resp r = logs(q);
    EXPECT_EQ(r.status, 422) << q << ": " << r.describe();
    EXPECT_EQ(r.content_type, "application/problem+json") << q;
    EXPECT_EQ(r.error_fields(), std::vector<std::string>{field}) << q << ": " << r.describe();
  }
  Resp two = logs("offset=x&tail=0");
  EXPECT_EQ(two.status, 422);
  EXPECT_EQ(two.error_fields(), (std::vector<std::string>{"offset", "tail"})) << two.describe();
}

TEST_F(JobLogsTest, AJobThatHasNotStartedHasNoLogsYet) {
  Resp r = logs();
  EXPECT_EQ(r.status, 404) << r.describe();
  EXPECT_EQ(r.body["detail"], "no logs yet: job train has not started");
  EXPECT_EQ(r.body["detail_message"]["code"], "api.job_logs.not_started");
}

TEST(JobLogs, AServerThatKeepsNoOutputHasNoLogs) {
  ServerProcess s({"--no-scheduler"});
  expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme")), "tenant");
  expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("acme", "vision")), "project");
  expect_2xx(s.admin("POST", "/api/v1/jobs", job_doc("vision", "train")), "job");
  Resp r = s.admin("GET", "/api/v1/jobs/train/logs");
  EXPECT_EQ(r.status, 404) << r.describe();
  EXPECT_EQ(r.body["detail_message"]["code"], "api.job_logs.sim_executor") << r.describe();
  EXPECT_NE(r.body.value("detail", "").find("executor (sim)"), std::string::npos) << r.describe();
  // Parameters are still checked first.
  EXPECT_EQ(s.admin("GET", "/api/v1/jobs/train/logs?tail=x").status, 422);
  EXPECT_EQ(s.admin("GET", "/api/v1/jobs/nosuch/logs").status, 404);
}

// serve --job-log-retention-days: a job that ran and ended longer ago than that loses its run
// files at the server's start (and hourly after), its logs then say why they are gone; a job
// still running keeps its own, and one cancelled before it ran still says it left none. The jobs
// run on the simulated executor with the system clock; the second start pins the clock
// (--demo-clock) years ahead, so that they ended, and their files were written, long before.
TEST(JobLogs, ARetentionDeletesTheFilesOfJobsThatEndedLongAgo) {
  const std::string dir = make_logs_temp_dir();
  ServerProcess s({"--slurm-output-dir", dir, "--cold-start-ms", "0"});
  expect_2xx(s.admin("POST", "/api/v1/suppliers", supplier_doc("dc")), "supplier");
  expect_2xx(s.admin("POST", "/api/v1/nodes", node_doc("dc", "gpn1")), "node");
  expect_2xx(s.admin("POST", "/api/v1/tenants", tenant_doc("acme")), "tenant");
  expect_2xx(s.admin("POST", "/api/v1/projects", project_doc("acme", "vision")), "project");
  const std::string ended =
      expect_2xx(s.admin("POST", "/api/v1/jobs", job_doc("vision", "train")), "job").body.at("id");
  const std::string running =
      expect_2xx(s.admin("POST", "/api/v1/jobs", job_doc("vision", "eval")), "job").body.at("id");
  for (const char* name : {"train", "eval"})
    wait_for(s, std::string("/api/v1/jobs/") + name, [](const json& j) { return j["status"]["state"] == "running"; });
  expect_2xx(s.admin("POST", "/api/v1/jobs/train/cancel"), "cancel");
  json never = job_doc("vision", "never");
  never["gpus_per_worker"] = 16;  // more than a node has: it waits, and is cancelled before it runs
  expect_2xx(s.admin("POST", "/api/v1/jobs", never), "job");
  expect_2xx(s.admin("POST", "/api/v1/jobs/never/cancel"), "cancel");
  for (const std::string& name : {ended + "-7.log", ended + "-7.status", running + "-8.log"})
    std::ofstream(dir + "/" + name) << "output of " << name << "\n";
  ASSERT_EQ(s.admin("GET", "/api/v1/jobs/train/logs").status, 200);

  s.set_extra_args({"--no-scheduler", "--slurm-output-dir", dir, "--demo-clock", "2030-01-11T00:00:00Z",
                    "--job-log-retention-days", "7"});
  s.restart();
  Resp metrics;
  for (int i = 0; i < 100; ++i) {
    metrics = s.admin("GET", "/metrics");
    if (metrics.text.find("gpurent_job_output_files_removed_total 2") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_NE(metrics.text.find("gpurent_job_output_files_removed_total 2"), std::string::npos) << metrics.text;
  EXPECT_FALSE(fs::exists(dir + "/" + ended + "-7.log"));
  EXPECT_FALSE(fs::exists(dir + "/" + ended + "-7.status"));
  EXPECT_TRUE(fs::exists(dir + "/" + running + "-8.log")) << "a running job keeps its files";
  Resp gone = s.admin("GET", "/api/v1/jobs/train/logs");
  EXPECT_EQ(gone.status, 404) << gone.describe();
  EXPECT_EQ(gone.body["detail_message"]["code"], "api.job_logs.expired") << gone.describe();
  EXPECT_EQ(gone.body["detail"],
            "no logs: job train ended more than 7 days ago and its logs were deleted "
            "(serve --job-log-retention-days)");
  Resp none = s.admin("GET", "/api/v1/jobs/never/logs");
  EXPECT_EQ(none.body["detail_message"]["code"], "api.job_logs.none") << "it never ran: " << none.describe();
  EXPECT_EQ(s.admin("GET", "/api/v1/jobs/eval/logs").status, 200);
  s.stop();
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace gpurent::testing

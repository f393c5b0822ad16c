// The retention of jobs' output files (services/job_output_retention.h) on a real folder in /tmp
// and a real SQLite store: a job whose state moved to succeeded, failed or cancelled before the
// cut loses its run files, and only those (its logs, status and ready files, not an operator's
// "….log.gz" nor another job's whose id begins the same); a job pending, admitted, running or
// preempted keeps every file, its old runs' too; a job that ended after the cut, or a file
// written after it, stays; files of a job the store does not hold, links and folders stay; a job
// that cannot be decoded is counted and the pass goes on; a stop ends the pass between jobs.
#include "server/services/job_output_retention.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "model/job.h"

namespace gpurent {
namespace {

namespace fs = std::filesystem;

constexpr TimeMs kSweepAt = 1'800'000'000'000;  // 2027-01-15
constexpr int64_t kRetention = 7 * kMsPerDay;
constexpr TimeMs kLongAgo = kSweepAt - 10 * kMsPerDay, kLately = kSweepAt - 2 * kMsPerDay;

struct OutputFolder {
  std::string path;
  OutputFolder() {
    char tmpl[] = "/tmp/gpurent-output-retention-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~OutputFolder() { fs::remove_all(path); }

  // A file of `bytes` last written at `at`.
  void file(const std::string& name, TimeMs at, size_t bytes = 100) const {
    std::ofstream(path + "/" + name) << std::string(bytes, 'x');
    const timeval tv[2] = {{at / 1000, 0}, {at / 1000, 0}};
    ASSERT_EQ(::utimes((path + "/" + name).c_str(), tv), 0) << name;
  }
  bool has(const std::string& name) const { return fs::exists(fs::symlink_status(path + "/" + name)); }
};

class JobOutputRetentionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto s = open_sqlite_store({dir.path + "/store.db"});
    ASSERT_TRUE(s) << s.error().message;
    store = std::move(*s);
  }
  // A job whose status moved to `state` at `ended`; its record last written at `written` (a later
  // write of the record, a label say, is not a change of its state). No status: not decodable.
  void job(const std::string& id, const std::string& state, TimeMs ended, std::optional<TimeMs> written = {},
           bool with_status = true) {
    Record r;
    r.kind = "jobs";
    r.id = id;
    r.name = id;
    r.state = state;
    r.created_at = kLongAgo - kMsPerDay;
    r.updated_at = written.value_or(ended);
    r.body = {{"name", id}};
    if (with_status) {
      JobStatus st;
      st.state = *parse_job_state(state);
      st.updated_at = ended;
      set_stored_job_status(r.body, st);
    }
    ASSERT_TRUE(store->write([&](StoreTx& tx) { return tx.insert(r); }));
  }
  JobOutputSweep sweep() {
    auto r = sweep_job_outputs(*store, out.path, kSweepAt, kRetention);
    EXPECT_TRUE(r) << r.error().message;
    return r ? *r : JobOutputSweep{};
  }

  OutputFolder dir, out;
  std::unique_ptr<Store> store;
};

TEST_F(JobOutputRetentionTest, AJobThatEndedBeforeTheCutLosesItsRunFilesOnly) {
  job("job_done", "succeeded", kLongAgo, kLately);  // its record written since: it still ended long ago
  job("job_do", "failed", kLongAgo);                // an id that begins another's
  for (std::string n :
       {"job_done-7.log", "job_done-9.log", "job_done-9.status", "job_done-9.ready.gpn1", "job_done-9.ready.gpn1.tmp"})
    out.file(n, kLongAgo, 1000);
  // Not run files of it: other suffixes, a leading zero, no run, a name around it.
  for (std::string n : {"job_done-9.logs", "job_done-09.log", "job_done.log", "job_done-9", "xjob_done-9.txt",
                        "job_done-9.log~", ".job_done-9.log", "job_done--9.log", "job_done-9x.log", "job_done-9.log.gz",
                        "job_done-9.status.bak", "job_done-9.ready", "job_done-9.ready.", "job_do-9x.log"})
    out.file(n, kLongAgo);
  JobOutputSweep s = sweep();
  EXPECT_EQ(s.files, 5);
  EXPECT_EQ(s.jobs, 1);
  EXPECT_EQ(s.failed, 0);
  EXPECT_GT(s.bytes, 0) << "the space they held, in whole blocks";
  for (std::string n :
       {"job_done-7.log", "job_done-9.log", "job_done-9.status", "job_done-9.ready.gpn1", "job_done-9.ready.gpn1.tmp"})
    EXPECT_FALSE(out.has(n)) << n;
  for (std::string n : {"job_done-9.logs", "job_done-09.log", "job_done.log", "job_done-9", "xjob_done-9.txt",
                        "job_done-9.log~", ".job_done-9.log", "job_done--9.log", "job_done-9x.log", "job_done-9.log.gz",
                        "job_done-9.status.bak", "job_done-9.ready", "job_done-9.ready.", "job_do-9x.log"})
    EXPECT_TRUE(out.has(n)) << n;
  EXPECT_EQ(sweep().files, 0) << "nothing left to remove";
}

TEST_F(JobOutputRetentionTest, JobsThatMayRunAgainOrEndedLateKeepEverything) {
  job("job_failed", "failed", kLongAgo);
  job("job_cancelled", "cancelled", kLongAgo);
  job("job_running", "running", kLongAgo);
  job("job_preempted", "preempted", kLongAgo);
  job("job_pending", "pending", kLongAgo);
  job("job_admitted", "admitted", kLongAgo);
  job("job_late", "succeeded", kLately, kLongAgo);                   // ended inside the retention
  job("job_broken", "failed", kLongAgo, {}, /*with_status=*/false);  // counted, and the pass goes on
  out.file("job_failed-3.log", kLongAgo);
  out.file("job_cancelled-4.log", kLongAgo);
  out.file("job_cancelled-5.log", kLately);  // written since the cut: stays this time
  out.file("job_running-1.log", kLongAgo);   // an old run of a requeued job that runs again
  out.file("job_running-2.log", kLongAgo);
  out.file("job_preempted-6.log", kLongAgo);
  out.file("job_pending-8.log", kLongAgo);
  out.file("job_admitted-9.log", kLongAgo);
  out.file("job_late-10.log", kLongAgo);
  out.file("job_broken-14.log", kLongAgo);
  out.file("job_unknown-11.log", kLongAgo);  // no such job in this store
  fs::create_symlink("/etc/hostname", out.path + "/job_failed-12.log");
  fs::create_directory(out.path + "/job_failed-13.log");
  auto swept = sweep_job_outputs(*store, out.path, kSweepAt, kRetention);
  ASSERT_TRUE(swept) << swept.error().message;
  const JobOutputSweep& s = *swept;
  EXPECT_EQ(s.files, 2);
  EXPECT_EQ(s.jobs, 2);
  EXPECT_EQ(s.failed, 1);
  EXPECT_NE(s.first_error.find("job_broken"), std::string::npos) << s.first_error;
  EXPECT_FALSE(out.has("job_failed-3.log"));
  EXPECT_FALSE(out.has("job_cancelled-4.log"));
  for (std::string n : {"job_cancelled-5.log", "job_running-1.log", "job_running-2.log", "job_preempted-6.log",
                        "job_pending-8.log", "job_admitted-9.log", "job_late-10.log", "job_unknown-11.log",
                        "job_failed-12.log", "job_failed-13.log", "job_broken-14.log"})
    EXPECT_TRUE(out.has(n)) << n;
  EXPECT_TRUE(fs::exists("/etc/hostname")) << "a link is never followed";

  // A day after the late job's cut has passed it, its file goes too.
  auto later = sweep_job_outputs(*store, out.path, kLately + kRetention + kMsPerDay, kRetention);
  ASSERT_TRUE(later) << later.error().message;
  EXPECT_FALSE(out.has("job_late-10.log"));
  EXPECT_FALSE(out.has("job_cancelled-5.log"));
  EXPECT_TRUE(out.has("job_running-2.log"));
}

TEST_F(JobOutputRetentionTest, AStopEndsThePassBeforeTheNextJob) {
  job("job_a", "succeeded", kLongAgo);
  job("job_b", "succeeded", kLongAgo);
  out.file("job_a-1.log", kLongAgo);
  out.file("job_b-2.log", kLongAgo);
  int asked = 0;
  auto r = sweep_job_outputs(*store, out.path, kSweepAt, kRetention, [&] { return ++asked > 1; });
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->files, 1) << "the first job's file went, then the stop came";
  EXPECT_EQ(asked, 2);
  EXPECT_NE(out.has("job_a-1.log"), out.has("job_b-2.log"));
}

TEST_F(JobOutputRetentionTest, AFolderNotThereIsEmptyAndOneThatCannotBeListedFailsThePass) {
  auto none = sweep_job_outputs(*store, out.path + "/missing", kSweepAt, kRetention);
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_EQ(none->files, 0);
  out.file("job_x-1.log", kLongAgo);
  auto not_a_folder = sweep_job_outputs(*store, out.path + "/job_x-1.log", kSweepAt, kRetention);
  ASSERT_FALSE(not_a_folder);
  EXPECT_NE(not_a_folder.error().message.find("job_x-1.log"), std::string::npos) << not_a_folder.error().message;
}

}  // namespace
}  // namespace gpurent

// Durability of the SQLite store across a SIGKILL (the readers-and-writer tests run on every
// backend in store_concurrency_test.cc).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <future>
#include <set>
#include <thread>

#include "store/store.h"
#include "store/store_test_util.h"

namespace gpurent {
namespace {

using namespace std::chrono_literals;

// Child: write until killed, reporting each id on the pipe only after write() returned ok.
[[noreturn]] void write_until_killed(const std::string& path, bool synchronous_full, int fd) {
  auto store = open_sqlite_store({.path = path, .synchronous_full = synchronous_full});
  if (!store) _exit(2);
  write_jobs_until_killed(**store, fd);
}

void crash_and_recover(bool synchronous_full) {
  TempDir dir;
  const std::string path = dir.file("crash.db");
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    write_until_killed(path, synchronous_full, fds[1]);
  }
  close(fds[1]);

  std::vector<std::string> acknowledged;
  std::string pending;
  bool killed = false;
  char buf[4096];
  for (;;) {
    ssize_t got = read(fds[0], buf, sizeof buf);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;  // EOF: the child is gone
    pending.append(buf, static_cast<size_t>(got));
    size_t nl;
    while ((nl = pending.find('\n')) != std::string::npos) {
      acknowledged.push_back(pending.substr(0, nl));
      pending.erase(0, nl + 1);
    }
    if (!killed && acknowledged.size() >= 150) {
      ASSERT_EQ(kill(pid, SIGKILL), 0);  // mid-stream: the child is between writes or inside one
      killed = true;
    }
  }
  close(fds[0]);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << "child ended on its own (status " << status << ") after " << acknowledged.size() << " writes";
  EXPECT_TRUE(pending.empty());
  ASSERT_GE(acknowledged.size(), 150u);

  auto store = open_or_die(path, synchronous_full);
  ASSERT_NE(store, nullptr);
  int missing = 0;
  for (const auto& id : acknowledged) {
    if (!store->get("jobs", id).ok() || store->job_events(id).value().size() != 1) ++missing;
  }
  EXPECT_EQ(missing, 0) << "of " << acknowledged.size() << " acknowledged writes";
  // At most the one write in flight at the kill may be committed without having been reported.
  const int64_t stored = store->count("jobs", {}).value();
  EXPECT_GE(stored, static_cast<int64_t>(acknowledged.size()));
  EXPECT_LE(stored, static_cast<int64_t>(acknowledged.size()) + 1);
  // The recovered file takes new writes.
  EXPECT_TRUE(insert_all(*store, {make_record("jobs", "job_after", "after", "ten_1")}).ok());
}

TEST(SqliteDurability, AcknowledgedWritesSurviveSigkillWithSynchronousFull) { crash_and_recover(true); }

// NORMAL in WAL mode may lose commits on power loss, but not on a process crash.
TEST(SqliteDurability, AcknowledgedWritesSurviveSigkillWithSynchronousNormal) { crash_and_recover(false); }

}  // namespace
}  // namespace gpurent
